package steps

import (
	"maps"
	"testing"
)

// TestListChange: rule independence tells a campaign that changed (or came
// or went) from a list that only changed its order, and a list that held
// still from both.
func TestListChange(t *testing.T) {
	base := &listRead{order: []int64{1, 2, 3}, camps: map[int64]string{1: `{"Id":1}`, 2: `{"Id":2}`, 3: `{"Id":3}`}}
	with := func(order []int64, edit func(map[int64]string)) *listRead {
		r := &listRead{order: order, camps: maps.Clone(base.camps)}
		if edit != nil {
			edit(r.camps)
		}
		return r
	}
	tests := []struct {
		name          string
		after         *listRead
		fields, order bool
	}{
		{"the same page", with([]int64{1, 2, 3}, nil), false, false},
		{"the last campaign moved to the front", with([]int64{3, 1, 2}, nil), false, true},
		{"a campaign's updatedAt bumped", with([]int64{1, 2, 3}, func(m map[int64]string) { m[3] = `{"Id":3,"updatedAt":"x"}` }), true, false},
		{"a campaign gone", with([]int64{1, 2}, func(m map[int64]string) { delete(m, 3) }), true, false},
		{"a campaign come", with([]int64{1, 2, 3, 4}, func(m map[int64]string) { m[4] = `{"Id":4}` }), true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, o := listChange(base, tt.after)
			if got := f != ""; got != tt.fields {
				t.Errorf("fields changed = %v (%q), want %v", got, f, tt.fields)
			}
			if got := o != ""; got != tt.order {
				t.Errorf("order changed = %v (%q), want %v", got, o, tt.order)
			}
		})
	}
}

// TestStatsDelta: the change between two reads of the statistics, count by
// count; no change is an empty delta, a failed read none at all.
func TestStatsDelta(t *testing.T) {
	a := &statsRead{counts: map[string]int64{"emailStat.Opened": 5, "smsStat.Sent": 2}}
	b := &statsRead{counts: map[string]int64{"emailStat.Opened": 6, "smsStat.Sent": 2}}
	if d, ok := statsDelta(a, a); !ok || len(d) != 0 {
		t.Errorf("statsDelta(a, a) = %v, %v; want an empty delta", d, ok)
	}
	if d, ok := statsDelta(a, b); !ok || len(d) != 1 || d["emailStat.Opened"] != 1 {
		t.Errorf("statsDelta(a, b) = %v, %v; want emailStat.Opened +1", d, ok)
	}
	if _, ok := statsDelta(a, &statsRead{}); ok {
		t.Errorf("statsDelta with a failed read reported a delta")
	}
}
