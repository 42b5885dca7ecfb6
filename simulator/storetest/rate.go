package storetest

import (
	"context"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

func mustTake(t *testing.T, c simulator.RateCounter, key string, now time.Time) simulator.RateDecision {
	t.Helper()
	d, err := c.Take(context.Background(), key, now)
	if err != nil {
		t.Fatalf("Take(%q, %v): %v", key, now, err)
	}
	return d
}

func mustCount(t *testing.T, r simulator.RateCounter, key string, now time.Time) int {
	t.Helper()
	n, err := r.Count(context.Background(), key, now)
	if err != nil {
		t.Fatalf("Count(%q, %v): %v", key, now, err)
	}
	return n
}

// takeAt is one step of a rate scenario: a Take at t0+at and its decision.
type takeAt struct {
	key  string
	at   time.Duration
	want simulator.RateDecision
}

func allowed(count int) simulator.RateDecision {
	return simulator.RateDecision{Allowed: true, Count: count}
}

func refused(count int, retry time.Duration) simulator.RateDecision {
	return simulator.RateDecision{Count: count, RetryAfter: retry}
}

// testRateCounter runs the counter contract on the counters newCounter
// returns, each with fresh state.
func testRateCounter(t *testing.T, newCounter func(t *testing.T, limit int, window time.Duration) simulator.RateCounter) {
	const minute = time.Minute

	// Spec §8's window, with a small limit so the scenarios stay readable.
	tests := []struct {
		name  string
		limit int
		takes []takeAt
	}{
		{
			name:  "exactly limit requests are allowed, then refused until the oldest leaves",
			limit: 3,
			takes: []takeAt{
				{"k", 0, allowed(1)},
				{"k", 10 * time.Second, allowed(2)},
				{"k", 20 * time.Second, allowed(3)},
				{"k", 30 * time.Second, refused(3, 30*time.Second)},
				{"k", 45 * time.Second, refused(3, 15*time.Second)},
				{"k", minute - time.Nanosecond, refused(3, time.Nanosecond)},
				{"k", minute, allowed(3)},
				{"k", minute, refused(3, 10*time.Second)},
			},
		},
		{
			name:  "a slot frees at exactly t0+window, not a nanosecond earlier",
			limit: 2,
			takes: []takeAt{
				{"k", 0, allowed(1)},
				{"k", 0, allowed(2)},
				{"k", minute - time.Nanosecond, refused(2, time.Nanosecond)},
				// Both requests counted at t0 leave together.
				{"k", minute, allowed(1)},
				{"k", minute, allowed(2)},
				{"k", minute, refused(2, minute)},
			},
		},
		{
			name:  "refused requests are not counted",
			limit: 2,
			takes: []takeAt{
				{"k", 0, allowed(1)},
				{"k", 1 * time.Second, allowed(2)},
				{"k", 2 * time.Second, refused(2, 58*time.Second)},
				{"k", 3 * time.Second, refused(2, 57*time.Second)},
				{"k", 59 * time.Second, refused(2, 1*time.Second)},
				// Had the refusals counted, none of these would pass.
				{"k", minute, allowed(2)},
				{"k", minute + time.Second, allowed(2)},
				{"k", minute + 2*time.Second, refused(2, 58*time.Second)},
			},
		},
		{
			name:  "keys are counted apart",
			limit: 2,
			takes: []takeAt{
				{"acc_a", 0, allowed(1)},
				{"acc_a", 0, allowed(2)},
				{"acc_a", 0, refused(2, minute)},
				{"acc_b", time.Second, allowed(1)},
				{"acc_b", time.Second, allowed(2)},
				{"acc_b", time.Second, refused(2, minute)},
				{"acc_a", minute, allowed(1)},
				{"acc_b", minute, refused(2, time.Second)},
			},
		},
		{
			name:  "spec §8: the 100th request in a minute passes, the 101st is refused",
			limit: spec.RateLimit,
			takes: func() []takeAt {
				var takes []takeAt
				for i := range 100 {
					takes = append(takes, takeAt{"k", time.Duration(i) * 500 * time.Millisecond, allowed(i + 1)})
				}
				return append(takes,
					takeAt{"k", 50 * time.Second, refused(100, 10*time.Second)},
					takeAt{"k", minute, allowed(100)},
					takeAt{"k", minute, refused(100, 500*time.Millisecond)},
				)
			}(),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCounter(t, tt.limit, minute)
			for i, step := range tt.takes {
				if got := mustTake(t, c, step.key, t0.Add(step.at)); got != step.want {
					t.Fatalf("take %d (%s at +%v) = %+v, want %+v", i, step.key, step.at, got, step.want)
				}
				// The budget's read agrees with every decision, at its time.
				if got := mustCount(t, c, step.key, t0.Add(step.at)); got != step.want.Count {
					t.Fatalf("count after take %d (%s at +%v) = %d, want %d", i, step.key, step.at, got, step.want.Count)
				}
			}
		})
	}

	t.Run("counting takes nothing and leaves at exactly t+window", func(t *testing.T) {
		c := newCounter(t, 2, minute)
		if got := mustCount(t, c, "k", t0); got != 0 {
			t.Fatalf("count of an unused key = %d, want 0", got)
		}
		mustTake(t, c, "k", t0)
		for range 5 {
			if got := mustCount(t, c, "k", t0.Add(time.Second)); got != 1 {
				t.Fatalf("count = %d, want 1", got)
			}
		}
		// Five reads took no slot: one is left.
		if got, want := mustTake(t, c, "k", t0.Add(time.Second)), allowed(2); got != want {
			t.Fatalf("take after reads = %+v, want %+v", got, want)
		}
		if got := mustCount(t, c, "k", t0.Add(minute-time.Nanosecond)); got != 2 {
			t.Fatalf("count a nanosecond before the first leaves = %d, want 2", got)
		}
		if got := mustCount(t, c, "k", t0.Add(minute)); got != 1 {
			t.Fatalf("count when the first leaves = %d, want 1", got)
		}
		if got := mustCount(t, c, "other", t0); got != 0 {
			t.Fatalf("count of another key = %d, want 0", got)
		}
	})

	t.Run("the window is the counter's own", func(t *testing.T) {
		c := newCounter(t, 1, 2*time.Second)
		if got, want := mustTake(t, c, "k", t0), allowed(1); got != want {
			t.Fatalf("first = %+v, want %+v", got, want)
		}
		if got, want := mustTake(t, c, "k", t0.Add(1500*time.Millisecond)), refused(1, 500*time.Millisecond); got != want {
			t.Fatalf("second = %+v, want %+v", got, want)
		}
		if got, want := mustTake(t, c, "k", t0.Add(2*time.Second)), allowed(1); got != want {
			t.Fatalf("third = %+v, want %+v", got, want)
		}
	})

	t.Run("Reset forgets one key", func(t *testing.T) {
		c := newCounter(t, 1, minute)
		mustTake(t, c, "acc_a", t0)
		mustTake(t, c, "acc_b", t0)
		if err := c.Reset(context.Background(), "acc_a"); err != nil {
			t.Fatalf("Reset: %v", err)
		}
		if got, want := mustTake(t, c, "acc_a", t0.Add(time.Second)), allowed(1); got != want {
			t.Errorf("acc_a after Reset = %+v, want %+v", got, want)
		}
		if got, want := mustTake(t, c, "acc_b", t0.Add(time.Second)), refused(1, minute-time.Second); got != want {
			t.Errorf("acc_b after Reset of acc_a = %+v, want %+v", got, want)
		}
		if err := c.Reset(context.Background(), "acc_unknown"); err != nil {
			t.Errorf("Reset of an unknown key: %v", err)
		}
	})

	t.Run("ResetAll forgets every key", func(t *testing.T) {
		c := newCounter(t, 1, minute)
		for _, k := range []string{"acc_a", "acc_b", "acc_c"} {
			mustTake(t, c, k, t0)
		}
		if err := c.ResetAll(context.Background()); err != nil {
			t.Fatalf("ResetAll: %v", err)
		}
		for _, k := range []string{"acc_a", "acc_b", "acc_c"} {
			if got, want := mustTake(t, c, k, t0.Add(time.Second)), allowed(1); got != want {
				t.Errorf("%s after ResetAll = %+v, want %+v", k, got, want)
			}
		}
		if got, want := mustTake(t, c, "acc_a", t0.Add(time.Second)), refused(1, minute); got != want {
			t.Errorf("acc_a counted again = %+v, want %+v", got, want)
		}
	})

	t.Run("concurrent takes on one key let exactly limit through", func(t *testing.T) {
		const (
			limit      = 100
			goroutines = 50
			perG       = 4
		)
		c := newCounter(t, limit, minute)
		var (
			wg     sync.WaitGroup
			mu     sync.Mutex
			counts []int
			errs   []error
			refuse int
		)
		for range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range perG {
					// One fixed now: members must stay distinct for equal times.
					d, err := c.Take(context.Background(), "acc", t0)
					mu.Lock()
					switch {
					case err != nil:
						errs = append(errs, err)
					case d.Allowed:
						counts = append(counts, d.Count)
					default:
						refuse++
					}
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if len(errs) > 0 {
			t.Fatalf("Take: %d errors, first: %v", len(errs), errs[0])
		}
		if got, want := len(counts), limit; got != want {
			t.Fatalf("allowed = %d, want %d (refused %d)", got, want, refuse)
		}
		// Atomic: each allowed request saw a distinct count, 1 to limit.
		sort.Ints(counts)
		for i, n := range counts {
			if n != i+1 {
				t.Fatalf("sorted counts[%d] = %d, want %d: two takes saw the same state", i, n, i+1)
			}
		}
		if got, want := mustTake(t, c, "acc", t0.Add(minute-time.Nanosecond)), refused(limit, time.Nanosecond); got != want {
			t.Errorf("take after the burst = %+v, want %+v", got, want)
		}
	})
}
