package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// policyTaker decides one request of key at now under a policy, and counts
// a key's requests as the policy's window does: a PolicyCounter directly,
// or a Gate (Arrival.Policy) over its counter.
type policyTaker struct {
	take  func(ctx context.Context, key string, now time.Time, p simulator.RatePolicy) (simulator.RateDecision, error)
	count func(ctx context.Context, key string, now time.Time, p simulator.RatePolicy) (int, error)
}

func counterTaker(t *testing.T, c simulator.RateCounter) policyTaker {
	pc, ok := c.(simulator.PolicyCounter)
	if !ok {
		t.Fatalf("%T is no simulator.PolicyCounter: replicas could not play the profiles' windows (issue 20)", c)
	}
	return policyTaker{take: pc.TakePolicy, count: pc.CountPolicy}
}

func gateTaker(t *testing.T, g simulator.Gate, c simulator.RateCounter) policyTaker {
	pt := counterTaker(t, c)
	pt.take = func(ctx context.Context, key string, now time.Time, p simulator.RatePolicy) (simulator.RateDecision, error) {
		ad, err := g.Admit(ctx, simulator.Arrival{AccountID: key, Operation: spec.PathCampaignList, Real: now, Policy: p})
		if err != nil {
			return simulator.RateDecision{}, err
		}
		if !ad.Now.Equal(now) {
			return simulator.RateDecision{}, fmt.Errorf("Admit decided at %v on the real clock, want %v", ad.Now, now)
		}
		return ad.Rate, nil
	}
	return pt
}

// testRatePolicies runs the contract of simulator.RatePolicy (issue 20:
// the profile's rateLimit.window and countsRefused) on the takers newTaker
// returns, each with fresh state.
func testRatePolicies(t *testing.T, newTaker func(t *testing.T, limit int, window time.Duration) policyTaker) {
	const minute = time.Minute
	// t0 is 05:06:07.123456789: its clock minute ends at +52.876543211s.
	clockEnd := t0.Truncate(minute).Add(minute).Sub(t0)
	sliding := simulator.RatePolicy{Window: simulator.WindowSliding}
	slidingRefused := simulator.RatePolicy{Window: simulator.WindowSliding, CountsRefused: true}
	fixedClock := simulator.RatePolicy{Window: simulator.WindowFixedClock}
	fixedClockRefused := simulator.RatePolicy{Window: simulator.WindowFixedClock, CountsRefused: true}
	fixedFirst := simulator.RatePolicy{Window: simulator.WindowFixedFirst}
	fixedFirstRefused := simulator.RatePolicy{Window: simulator.WindowFixedFirst, CountsRefused: true}

	tests := []struct {
		name   string
		policy simulator.RatePolicy
		limit  int
		takes  []takeAt
	}{
		{
			name: "sliding: one slot frees as each request leaves", policy: sliding, limit: 3,
			takes: []takeAt{
				{"k", 0, allowed(1)}, {"k", 10 * time.Second, allowed(2)}, {"k", 20 * time.Second, allowed(3)},
				{"k", minute, allowed(3)},
				{"k", minute, refused(3, 10*time.Second)},
			},
		},
		{
			name: "sliding counting refusals: a client that keeps retrying waits for its refusals to leave", policy: slidingRefused, limit: 2,
			takes: []takeAt{
				{"k", 0, allowed(1)}, {"k", 0, allowed(2)},
				// Counted: the slot frees when the request limit places
				// before the newest leaves.
				{"k", 30 * time.Second, refused(3, 30*time.Second)},
				{"k", 50 * time.Second, refused(4, 40*time.Second)},
				// The first two left; the refusals at 30s and 50s fill the window.
				{"k", minute, refused(3, 50*time.Second)},
				{"k", 110 * time.Second, allowed(2)},
			},
		},
		{
			name: "fixed-clock: windows are clock minutes from :00, all slots free at the next", policy: fixedClock, limit: 3,
			takes: []takeAt{
				{"k", 0, allowed(1)}, {"k", 10 * time.Second, allowed(2)}, {"k", 20 * time.Second, allowed(3)},
				{"k", 30 * time.Second, refused(3, clockEnd-30*time.Second)},
				{"k", clockEnd - time.Nanosecond, refused(3, time.Nanosecond)},
				{"k", clockEnd, allowed(1)},
				{"k", clockEnd, allowed(2)},
				{"k", clockEnd + time.Second, allowed(3)},
				{"k", clockEnd + 2*time.Second, refused(3, minute-2*time.Second)},
			},
		},
		{
			name: "fixed-clock counting refusals: the count grows, the decisions do not change", policy: fixedClockRefused, limit: 2,
			takes: []takeAt{
				{"k", 0, allowed(1)}, {"k", 0, allowed(2)},
				{"k", time.Second, refused(3, clockEnd-time.Second)},
				{"k", clockEnd, allowed(1)},
			},
		},
		{
			name: "fixed-first: the first request opens the window, all its slots free when it ends", policy: fixedFirst, limit: 3,
			takes: []takeAt{
				{"k", 0, allowed(1)}, {"k", 10 * time.Second, allowed(2)}, {"k", 20 * time.Second, allowed(3)},
				{"k", 30 * time.Second, refused(3, 30*time.Second)},
				{"k", minute - time.Nanosecond, refused(3, time.Nanosecond)},
				// A sliding window would free one slot here; this frees three.
				{"k", minute, allowed(1)}, {"k", minute, allowed(2)}, {"k", minute, allowed(3)},
				{"k", minute, refused(3, minute)},
				// The next window opens at the first request after +2m, not at +2m.
				{"k", 3 * minute, allowed(1)},
				{"k", 4*minute - time.Nanosecond, allowed(2)},
			},
		},
		{
			name: "fixed-first counting refusals: a refusal never opens or stretches a window", policy: fixedFirstRefused, limit: 2,
			takes: []takeAt{
				{"k", 0, allowed(1)}, {"k", 0, allowed(2)},
				{"k", 30 * time.Second, refused(3, 30*time.Second)},
				{"k", minute, allowed(1)},
			},
		},
		{
			name: "fixed-first: keys open their windows apart", policy: fixedFirst, limit: 1,
			takes: []takeAt{
				{"a", 0, allowed(1)},
				{"b", 30 * time.Second, allowed(1)},
				{"a", minute, allowed(1)},
				{"b", minute, refused(1, 30*time.Second)},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			c := newTaker(t, tt.limit, minute)
			for i, step := range tt.takes {
				now := t0.Add(step.at)
				got, err := c.take(ctx, step.key, now, tt.policy)
				if err != nil {
					t.Fatalf("take %d: %v", i, err)
				}
				// Reset is the fixed window's end, held apart below.
				reset := got.Reset
				got.Reset = 0
				if got != step.want {
					t.Fatalf("take %d (%s at +%v) = %+v, want %+v", i, step.key, step.at, got, step.want)
				}
				switch {
				case !got.Allowed || tt.policy.Window == simulator.WindowSliding:
					if reset != 0 {
						t.Fatalf("take %d: Reset %v, want 0 (refused, or a sliding window)", i, reset)
					}
				case tt.policy.Window == simulator.WindowFixedClock:
					if want := simulator.FixedClockStart(now, minute).Add(minute).Sub(now); reset != want {
						t.Fatalf("take %d: Reset %v, want the clock minute's end, %v", i, reset, want)
					}
				case reset <= 0 || reset > minute:
					t.Fatalf("take %d: Reset %v, want the open window's end, within a minute", i, reset)
				case got.Count == 1 && reset != minute:
					t.Fatalf("take %d opened a window: Reset %v, want %v", i, reset, minute)
				}
				// The budget's read agrees with every decision, at its time.
				n, err := c.count(ctx, step.key, now, tt.policy)
				if err != nil {
					t.Fatalf("count %d: %v", i, err)
				}
				if n != step.want.Count {
					t.Fatalf("count after take %d (%s at +%v) = %d, want %d", i, step.key, step.at, n, step.want.Count)
				}
			}
		})
	}

	// §8 in every mode: a steady stream of one request a second for three
	// minutes never gets more than the limit through within one window
	// as the mode defines it.
	for _, p := range []simulator.RatePolicy{sliding, slidingRefused, fixedClock, fixedClockRefused, fixedFirst, fixedFirstRefused} {
		t.Run(fmt.Sprintf("spec §8 holds under %+v", p), func(t *testing.T) {
			const limit = 5
			c := newTaker(t, limit, minute)
			var allowedAt []time.Time
			for i := range 180 {
				now := t0.Add(time.Duration(i) * time.Second)
				d, err := c.take(context.Background(), "k", now, p)
				if err != nil {
					t.Fatalf("take %d: %v", i, err)
				}
				if d.Allowed {
					allowedAt = append(allowedAt, now)
				}
			}
			if len(allowedAt) < limit {
				t.Fatalf("%d allowed in 3 minutes, want at least %d", len(allowedAt), limit)
			}
			for i, at := range allowedAt {
				in := 0
				for _, u := range allowedAt[i:] {
					if u.Sub(at) < minute && windowHolds(p, at, u, allowedAt[0]) {
						in++
					}
				}
				if in > limit {
					t.Fatalf("%d allowed in the window from %v, limit %d", in, at, limit)
				}
			}
		})
	}
}

// windowHolds reports whether u falls in the same window as at under p:
// any minute for sliding; the same clock minute for fixed-clock. For
// fixed-first, windows are at most a minute long and start at an allowed
// request, so "within a minute of an allowed request" is a superset that
// must still hold the limit.
func windowHolds(p simulator.RatePolicy, at, u, _ time.Time) bool {
	if p.Window == simulator.WindowFixedClock {
		return simulator.FixedClockStart(at, time.Minute).Equal(simulator.FixedClockStart(u, time.Minute))
	}
	return true
}
