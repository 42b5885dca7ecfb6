package storetest

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// gateCounter runs the rate counter contract through a Gate: Take is an
// Admit at real time now on the real clock, so the simulator time must be
// now itself.
type gateCounter struct {
	gate simulator.Gate
	simulator.RateCounter
}

func (c gateCounter) Take(ctx context.Context, key string, now time.Time) (simulator.RateDecision, error) {
	ad, err := c.gate.Admit(ctx, simulator.Arrival{AccountID: key, Operation: spec.PathCampaignList, Real: now})
	if err != nil {
		return simulator.RateDecision{}, err
	}
	if !ad.Now.Equal(now) {
		return simulator.RateDecision{}, fmt.Errorf("Admit decided at %v on the real clock, want %v", ad.Now, now)
	}
	return ad.Rate, nil
}

func mustAdmit(t *testing.T, g simulator.Gate, a simulator.Arrival) simulator.Admission {
	t.Helper()
	ad, err := g.Admit(context.Background(), a)
	if err != nil {
		t.Fatalf("Admit(%+v): %v", a, err)
	}
	return ad
}

func testGate(t *testing.T, open func(t *testing.T) Backend) {
	ctx := context.Background()
	const minute = time.Minute

	t.Run("the gate decides as the rate counter does", func(t *testing.T) {
		testRateCounter(t, func(t *testing.T, limit int, window time.Duration) simulator.RateCounter {
			g, c := open(t).NewGate(limit, window)
			return gateCounter{gate: g, RateCounter: c}
		})
	})

	t.Run("the gate adds an account's own clock offset to that account alone", func(t *testing.T) {
		b := open(t)
		g, _ := b.NewGate(2, minute)
		real := time.Date(2026, 5, 6, 7, 8, 9, 999_999_998, time.UTC)
		clock := simulator.Clock{Offset: time.Hour}
		if err := b.Control.SetClock(ctx, clock); err != nil {
			t.Fatalf("SetClock: %v", err)
		}
		for _, acc := range []string{"acc-a", "acc-b"} {
			for range 2 {
				mustAdmit(t, g, simulator.Arrival{AccountID: acc, Operation: spec.PathCampaignList, Real: real})
			}
		}
		// A full window passes for acc-a alone: its budget frees, acc-b's
		// stays spent.
		off := minute + 2*time.Nanosecond
		if err := b.Control.SetAccountOffset(ctx, "acc-a", off); err != nil {
			t.Fatalf("SetAccountOffset: %v", err)
		}
		a := mustAdmit(t, g, simulator.Arrival{AccountID: "acc-a", Operation: spec.PathCampaignList, Real: real})
		if want := clock.Now(real).Add(off); !a.Now.Equal(want) {
			t.Errorf("acc-a Now = %v, want %v", a.Now, want)
		}
		if !a.Rate.Allowed {
			t.Errorf("acc-a after its own window passed: %+v, want allowed", a.Rate)
		}
		bd := mustAdmit(t, g, simulator.Arrival{AccountID: "acc-b", Operation: spec.PathCampaignList, Real: real})
		if want := clock.Now(real); !bd.Now.Equal(want) {
			t.Errorf("acc-b Now = %v, want %v", bd.Now, want)
		}
		if bd.Rate.Allowed {
			t.Errorf("acc-b, whose window did not pass: %+v, want refused", bd.Rate)
		}
	})

	t.Run("the gate decides at the control API's time", func(t *testing.T) {
		// Nanoseconds that carry into the next second when the offset is
		// added: a backend that computes in floating point loses them.
		real := time.Date(2026, 5, 6, 7, 8, 9, 999_999_998, time.UTC)
		tests := []struct {
			name  string
			clock simulator.Clock
		}{
			{"real time", simulator.Clock{}},
			{"an offset with nanoseconds", simulator.Clock{Offset: 90*time.Second + 5*time.Nanosecond}},
			{"an offset of years", simulator.Clock{Offset: 4 * 365 * 24 * time.Hour}},
			{"a negative offset", simulator.Clock{Offset: -time.Hour - 3*time.Nanosecond}},
			{"frozen", simulator.Clock{Frozen: true, FrozenAt: t0}},
			{"frozen with an offset kept", simulator.Clock{Offset: time.Minute, Frozen: true, FrozenAt: t0.Add(time.Hour)}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				b := open(t)
				g, _ := b.NewGate(10, minute)
				if err := b.Control.SetClock(ctx, tt.clock); err != nil {
					t.Fatalf("SetClock: %v", err)
				}
				ad := mustAdmit(t, g, simulator.Arrival{AccountID: "acc", Operation: spec.PathCampaignStats, Real: real})
				if want := tt.clock.Now(real); !ad.Now.Equal(want) {
					t.Errorf("Now = %v, want %v", ad.Now, want)
				}
				if got, want := ad.Rate, allowed(1); got != want {
					t.Errorf("Rate = %+v, want %+v", got, want)
				}
			})
		}
	})

	t.Run("the window runs on the control API's clock", func(t *testing.T) {
		b := open(t)
		g, _ := b.NewGate(1, minute)
		real := t0
		at := func() simulator.RateDecision {
			return mustAdmit(t, g, simulator.Arrival{AccountID: "acc", Operation: spec.PathContactAdd, Real: real}).Rate
		}
		if got, want := at(), allowed(1); got != want {
			t.Fatalf("first = %+v, want %+v", got, want)
		}
		if got, want := at(), refused(1, minute); got != want {
			t.Fatalf("second = %+v, want %+v", got, want)
		}
		// A minute later on the simulator's clock, none on the real one.
		if err := b.Control.SetClock(ctx, simulator.Clock{Offset: minute}); err != nil {
			t.Fatal(err)
		}
		if got, want := at(), allowed(1); got != want {
			t.Fatalf("after advancing the clock = %+v, want %+v", got, want)
		}
		// Frozen there: an hour of real time changes nothing.
		if err := b.Control.SetClock(ctx, simulator.Clock{Frozen: true, FrozenAt: t0.Add(minute + time.Second)}); err != nil {
			t.Fatal(err)
		}
		real = real.Add(time.Hour)
		if got, want := at(), refused(1, minute-time.Second); got != want {
			t.Fatalf("frozen = %+v, want %+v", got, want)
		}
	})

	t.Run("a request refused with 429 takes no fault", func(t *testing.T) {
		b := open(t)
		g, _ := b.NewGate(1, minute)
		a := simulator.Arrival{AccountID: "acc", Operation: spec.PathContactAdd, Real: t0}
		if ad := mustAdmit(t, g, a); !ad.Rate.Allowed || ad.Fault != nil {
			t.Fatalf("first = %+v, want allowed without a fault", ad)
		}
		if err := b.Control.AddFault(ctx, simulator.Fault{ID: "f", Operation: "*", Kind: simulator.FaultError, Remaining: 1}); err != nil {
			t.Fatal(err)
		}
		if ad := mustAdmit(t, g, a); ad.Rate.Allowed || ad.Fault != nil {
			t.Fatalf("second = %+v, want refused without a fault", ad)
		}
		if got, want := faultIDs(mustFaults(t, b.Control)), map[string]int{"f": 1}; !reflect.DeepEqual(got, want) {
			t.Fatalf("faults after the refusal = %v, want %v", got, want)
		}
		a.Real = t0.Add(minute)
		ad := mustAdmit(t, g, a)
		if !ad.Rate.Allowed || faultID(ad.Fault) != "f" || ad.Fault.Remaining != 0 {
			t.Fatalf("a minute later = %+v, want allowed with fault f, 0 left", ad)
		}
		if got := mustFaults(t, b.Control); len(got) != 0 {
			t.Errorf("faults = %+v, want none", got)
		}
	})

	t.Run("an allowed request takes the fault of its operation and account", func(t *testing.T) {
		b := open(t)
		g, _ := b.NewGate(100, minute)
		f := simulator.Fault{ID: "f", Operation: spec.PathCampaignStats, AccountID: "acc_a", Kind: simulator.FaultRateLimit,
			Remaining: 2, RetryAfter: 3 * time.Second, Probability: 0.5}
		if err := b.Control.AddFault(ctx, f); err != nil {
			t.Fatal(err)
		}
		steps := []struct {
			account, op string
			draw        float64
			wantID      string
		}{
			{"acc_b", spec.PathCampaignStats, 0, ""},
			{"acc_a", spec.PathCampaignList, 0, ""},
			{"acc_a", spec.PathCampaignStats, 0.5, ""}, // the draw misses
			{"acc_a", spec.PathCampaignStats, 0.25, "f"},
		}
		for i, st := range steps {
			ad := mustAdmit(t, g, simulator.Arrival{AccountID: st.account, Operation: st.op, Real: t0, Draw: st.draw})
			if !ad.Rate.Allowed || faultID(ad.Fault) != st.wantID {
				t.Fatalf("step %d: Admit = %+v, want allowed with fault %q", i, ad, st.wantID)
			}
		}
		if ad := mustAdmit(t, g, simulator.Arrival{AccountID: "acc_a", Operation: spec.PathCampaignStats, Real: t0}); !reflect.DeepEqual(ad.Fault, &simulator.Fault{
			ID: "f", Operation: spec.PathCampaignStats, AccountID: "acc_a", Kind: simulator.FaultRateLimit,
			Remaining: 0, RetryAfter: 3 * time.Second, Probability: 0.5}) {
			t.Fatalf("second take = %+v, want every field of f with 0 left", ad.Fault)
		}
		ad := mustAdmit(t, g, simulator.Arrival{AccountID: "acc_a", Operation: spec.PathCampaignStats, Real: t0})
		if ad.Fault != nil {
			t.Fatalf("third take = %+v, want no fault: count 2 is spent", ad.Fault)
		}
	})

	t.Run("concurrent requests consume a fault of count 3 exactly 3 times", func(t *testing.T) {
		b := open(t)
		const requests, count = 40, 3
		g, _ := b.NewGate(requests, minute)
		if err := b.Control.AddFault(ctx, simulator.Fault{ID: "f", Operation: "*", Kind: simulator.FaultError, Remaining: count}); err != nil {
			t.Fatal(err)
		}
		var (
			wg     sync.WaitGroup
			mu     sync.Mutex
			faults int
			counts []int
			errs   []error
		)
		for range requests {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ad, err := g.Admit(ctx, simulator.Arrival{AccountID: "acc", Operation: spec.PathContactAdd, Real: t0})
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, err)
					return
				}
				counts = append(counts, ad.Rate.Count)
				if ad.Fault != nil {
					faults++
				}
			}()
		}
		wg.Wait()
		if len(errs) > 0 {
			t.Fatalf("Admit: %d errors, first: %v", len(errs), errs[0])
		}
		if faults != count {
			t.Errorf("faulted %d requests, want %d", faults, count)
		}
		// Every request was allowed and counted once (faulted ones too).
		sort.Ints(counts)
		for i, n := range counts {
			if n != i+1 {
				t.Fatalf("sorted counts[%d] = %d, want %d", i, n, i+1)
			}
		}
		if got := mustFaults(t, b.Control); len(got) != 0 {
			t.Errorf("faults = %+v, want none", got)
		}
	})

	t.Run("the counter resets what the gate counted", func(t *testing.T) {
		g, c := open(t).NewGate(1, minute)
		a := simulator.Arrival{AccountID: "acc", Operation: spec.PathCampaignList, Real: t0}
		mustAdmit(t, g, a)
		if err := c.Reset(ctx, "acc"); err != nil {
			t.Fatal(err)
		}
		if got, want := mustAdmit(t, g, a).Rate, allowed(1); got != want {
			t.Errorf("after Reset = %+v, want %+v", got, want)
		}
		if got, want := mustTake(t, c, "acc", t0), refused(1, minute); got != want {
			t.Errorf("the counter's Take after the gate's = %+v, want %+v", got, want)
		}
	})
}
