package steps

import (
	"testing"
	"time"
)

// TestBurstLead: a burst may start up to a quarter of a window after a
// boundary of the target's clock, no later than lets the late probes come
// after a window half the run's has freed the budget, and never before
// the boundary.
func TestBurstLead(t *testing.T) {
	tests := []struct {
		name          string
		window, guard time.Duration
		want          time.Duration
	}{
		{"a minute: a quarter, 15 s", time.Minute, 5 * time.Second, 15 * time.Second},
		{"6 s: what the probes leave, 1 s", 6 * time.Second, 500 * time.Millisecond, time.Second},
		{"2 s: nothing, the burst waits for the next boundary", 2 * time.Second, 250 * time.Millisecond, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := burstLead(tt.window, tt.guard); got != tt.want {
				t.Fatalf("burstLead(%v, %v)=%v, want %v", tt.window, tt.guard, got, tt.want)
			}
		})
	}
}

// TestLateSpan: the late probes get four round trips each, at least a
// quarter of a second, never more than the guard.
func TestLateSpan(t *testing.T) {
	tests := []struct {
		name           string
		n              int
		latency, guard time.Duration
		want           time.Duration
	}{
		{"a fast target: a quarter of a second", 12, time.Millisecond, 5 * time.Second, 250 * time.Millisecond},
		{"a slow target: four round trips each", 12, 20 * time.Millisecond, 5 * time.Second, 4 * 14 * 20 * time.Millisecond},
		{"a very slow target: the guard", 12, 200 * time.Millisecond, 5 * time.Second, 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := lateSpan(tt.n, tt.latency, tt.guard); got != tt.want {
				t.Fatalf("lateSpan=%v, want %v", got, tt.want)
			}
		})
	}
}
