package dashboard

import (
	"slices"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
)

// TestRequestsPerMinute: each entry counts once, for the account it
// authenticated as or was attributed to, in its minute of the last ten;
// older ones count nowhere.
func TestRequestsPerMinute(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 30, 40, 0, time.UTC)
	entries := []simulator.JournalEntry{ // newest first, as Journal.Latest answers
		{Time: now, AccountID: "a"},
		{Time: now.Add(-10 * time.Second), AccountID: "a", AttributedTo: "a"},
		{Time: now.Add(-50 * time.Second), AttributedTo: "b"},
		{Time: now.Add(-9 * time.Minute), AccountID: "a"},  // 12:21:40: the first minute shown
		{Time: now.Add(-10 * time.Minute), AccountID: "a"}, // 12:20:40: before 12:21
	}
	got := requestsPerMinute(entries, now)
	if want := []int{1, 0, 0, 0, 0, 0, 0, 0, 0, 2}; !slices.Equal(got["a"], want) {
		t.Errorf("a: %v, want %v", got["a"], want)
	}
	if want := []int{0, 0, 0, 0, 0, 0, 0, 0, 1, 0}; !slices.Equal(got["b"], want) {
		t.Errorf("b: %v, want %v", got["b"], want)
	}
}

// TestFirstBelow finds, to 100 ms, when a count that falls with time
// drops below n, and answers a whole window when it never does.
func TestFirstBelow(t *testing.T) {
	now := time.Unix(1000, 0)
	// Three requests leave the window at +2s, +30s and +45.5s.
	leaves := []time.Duration{2 * time.Second, 30 * time.Second, 45500 * time.Millisecond}
	count := func(at time.Time) (int, error) {
		n := 0
		for _, l := range leaves {
			if at.Sub(now) < l {
				n++
			}
		}
		return n, nil
	}
	tests := []struct {
		name string
		n    int
		want time.Duration
	}{
		{"below three: the first leaves", 3, 2 * time.Second},
		{"below one: the window is empty", 1, 45500 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms, err := firstBelow(count, now, time.Minute, tt.n)
			if err != nil {
				t.Fatal(err)
			}
			if got := time.Duration(ms) * time.Millisecond; got < tt.want || got > tt.want+100*time.Millisecond {
				t.Fatalf("firstBelow = %v, want %v to %v", got, tt.want, tt.want+100*time.Millisecond)
			}
		})
	}
}
