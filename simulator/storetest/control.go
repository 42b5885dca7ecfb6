package storetest

import (
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

func mustClock(t *testing.T, s simulator.ControlStore) simulator.Clock {
	t.Helper()
	c, err := s.Clock(context.Background())
	if err != nil {
		t.Fatalf("Clock: %v", err)
	}
	return c
}

func mustFaults(t *testing.T, s simulator.ControlStore) []simulator.Fault {
	t.Helper()
	fs, err := s.Faults(context.Background())
	if err != nil {
		t.Fatalf("Faults: %v", err)
	}
	return fs
}

// mustTakeFault takes a fault for a request of op by account "acc", with
// a draw of 0 (every probability hits).
func mustTakeFault(t *testing.T, s simulator.ControlStore, op string) *simulator.Fault {
	t.Helper()
	return mustTakeQuery(t, s, simulator.FaultQuery{Operation: op, AccountID: "acc"})
}

func mustTakeQuery(t *testing.T, s simulator.ControlStore, q simulator.FaultQuery) *simulator.Fault {
	t.Helper()
	f, err := s.TakeFault(context.Background(), q)
	if err != nil {
		t.Fatalf("TakeFault(%+v): %v", q, err)
	}
	return f
}

// equalClock compares FrozenAt with time.Equal: a backend may hand back
// another location.
func equalClock(a, b simulator.Clock) bool {
	return a.Offset == b.Offset && a.Frozen == b.Frozen && a.FrozenAt.Equal(b.FrozenAt)
}

// faultIDs lists the IDs and remaining counts, the parts a test reads.
func faultIDs(fs []simulator.Fault) map[string]int {
	m := map[string]int{}
	for _, f := range fs {
		m[f.ID] = f.Remaining
	}
	return m
}

func testControl(t *testing.T, open func(t *testing.T) Backend) {
	ctx := context.Background()

	t.Run("the clock starts at real time", func(t *testing.T) {
		s := open(t).Control
		if got := mustClock(t, s); !equalClock(got, simulator.Clock{}) {
			t.Errorf("Clock = %+v, want the zero Clock", got)
		}
	})

	t.Run("the clock round-trips", func(t *testing.T) {
		s := open(t).Control
		tests := []struct {
			name  string
			clock simulator.Clock
		}{
			{"an offset", simulator.Clock{Offset: 90*time.Second + 5*time.Nanosecond}},
			{"a negative offset", simulator.Clock{Offset: -time.Hour}},
			{"frozen with nanoseconds", simulator.Clock{Frozen: true, FrozenAt: t0}},
			{"frozen in another zone", simulator.Clock{Frozen: true, FrozenAt: t0.In(time.FixedZone("IST", 5*3600+1800))}},
			{"frozen with an offset kept", simulator.Clock{Offset: time.Minute, Frozen: true, FrozenAt: t0}},
			{"back to real time", simulator.Clock{}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if err := s.SetClock(ctx, tt.clock); err != nil {
					t.Fatalf("SetClock: %v", err)
				}
				got := mustClock(t, s)
				if !equalClock(got, tt.clock) {
					t.Fatalf("Clock = %+v, want %+v", got, tt.clock)
				}
				real := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
				if !got.Now(real).Equal(tt.clock.Now(real)) {
					t.Errorf("Now = %v, want %v", got.Now(real), tt.clock.Now(real))
				}
			})
		}
	})

	t.Run("faults are listed oldest first as added", func(t *testing.T) {
		s := open(t).Control
		if got := mustFaults(t, s); len(got) != 0 {
			t.Fatalf("Faults = %+v, want none", got)
		}
		want := []simulator.Fault{
			{ID: "f1", Operation: spec.PathContactAdd, Kind: simulator.FaultError, Remaining: 2},
			{ID: "f2", Operation: "*", Kind: simulator.FaultDelay, Remaining: 1, Delay: 1500 * time.Millisecond},
			{ID: "f3", Operation: spec.PathCampaignList, Kind: simulator.FaultDrop, Remaining: 3},
		}
		for _, f := range want {
			if err := s.AddFault(ctx, f); err != nil {
				t.Fatalf("AddFault(%s): %v", f.ID, err)
			}
		}
		if got := mustFaults(t, s); !reflect.DeepEqual(got, want) {
			t.Errorf("Faults = %+v, want %+v", got, want)
		}
	})

	t.Run("TakeFault consumes the oldest applicable fault and removes it at zero", func(t *testing.T) {
		s := open(t).Control
		for _, f := range []simulator.Fault{
			{ID: "f1", Operation: spec.PathContactAdd, Kind: simulator.FaultError, Remaining: 2},
			{ID: "f2", Operation: "*", Kind: simulator.FaultDelay, Remaining: 1, Delay: 1500 * time.Millisecond},
			{ID: "f3", Operation: spec.PathCampaignList, Kind: simulator.FaultDrop, Remaining: 1},
		} {
			if err := s.AddFault(ctx, f); err != nil {
				t.Fatalf("AddFault(%s): %v", f.ID, err)
			}
		}
		steps := []struct {
			op     string
			wantID string // "" means no fault applies
			after  map[string]int
		}{
			// f1 is older than f2 and applies.
			{spec.PathContactAdd, "f1", map[string]int{"f1": 1, "f2": 1, "f3": 1}},
			// "*" applies to an operation no other fault names; f2 is then gone.
			{spec.PathCampaignStats, "f2", map[string]int{"f1": 1, "f3": 1}},
			{spec.PathCampaignStats, "", map[string]int{"f1": 1, "f3": 1}},
			{spec.PathCampaignList, "f3", map[string]int{"f1": 1}},
			{spec.PathContactAdd, "f1", map[string]int{}},
			{spec.PathContactAdd, "", map[string]int{}},
		}
		for i, st := range steps {
			f := mustTakeFault(t, s, st.op)
			switch {
			case st.wantID == "" && f != nil:
				t.Fatalf("step %d: TakeFault(%q) = %+v, want nil", i, st.op, f)
			case st.wantID != "" && f == nil:
				t.Fatalf("step %d: TakeFault(%q) = nil, want %s", i, st.op, st.wantID)
			case f != nil && f.ID != st.wantID:
				t.Fatalf("step %d: TakeFault(%q) = %s, want %s", i, st.op, f.ID, st.wantID)
			}
			if got := faultIDs(mustFaults(t, s)); !reflect.DeepEqual(got, st.after) {
				t.Fatalf("step %d: faults after TakeFault(%q) = %v, want %v", i, st.op, got, st.after)
			}
		}
	})

	t.Run("TakeFault returns the fault's kind, operation and delay", func(t *testing.T) {
		s := open(t).Control
		add := simulator.Fault{ID: "f1", Operation: "*", Kind: simulator.FaultDelay, Remaining: 5, Delay: 2500 * time.Millisecond}
		if err := s.AddFault(ctx, add); err != nil {
			t.Fatalf("AddFault: %v", err)
		}
		f := mustTakeFault(t, s, spec.PathCampaignList)
		if f == nil {
			t.Fatalf("TakeFault = nil, want f1")
		}
		if f.ID != add.ID || f.Operation != add.Operation || f.Kind != add.Kind || f.Delay != add.Delay {
			t.Errorf("TakeFault = %+v, want the fields of %+v", *f, add)
		}
	})

	t.Run("a fault named for one operation does not apply to another", func(t *testing.T) {
		s := open(t).Control
		if err := s.AddFault(ctx, simulator.Fault{ID: "f1", Operation: spec.PathCampaignStats, Kind: simulator.FaultError, Remaining: 1}); err != nil {
			t.Fatalf("AddFault: %v", err)
		}
		for _, op := range []string{spec.PathContactAdd, spec.PathCampaignList} {
			if f := mustTakeFault(t, s, op); f != nil {
				t.Errorf("TakeFault(%q) = %+v, want nil", op, f)
			}
		}
		if got, want := faultIDs(mustFaults(t, s)), map[string]int{"f1": 1}; !reflect.DeepEqual(got, want) {
			t.Errorf("faults = %v, want %v", got, want)
		}
	})

	t.Run("concurrent TakeFault consumes each occurrence once", func(t *testing.T) {
		s := open(t).Control
		const remaining, takers = 10, 25
		if err := s.AddFault(ctx, simulator.Fault{ID: "f1", Operation: "*", Kind: simulator.FaultError, Remaining: remaining}); err != nil {
			t.Fatalf("AddFault: %v", err)
		}
		var (
			wg    sync.WaitGroup
			mu    sync.Mutex
			taken int
			errs  []error
		)
		for range takers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				f, err := s.TakeFault(ctx, simulator.FaultQuery{Operation: spec.PathContactAdd, AccountID: "acc"})
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, err)
				} else if f != nil {
					taken++
				}
			}()
		}
		wg.Wait()
		if len(errs) > 0 {
			t.Fatalf("TakeFault: %d errors, first: %v", len(errs), errs[0])
		}
		if taken != remaining {
			t.Errorf("faults taken = %d, want %d", taken, remaining)
		}
		if got := mustFaults(t, s); len(got) != 0 {
			t.Errorf("Faults = %+v, want none", got)
		}
	})

	t.Run("ClearFaults removes every fault and keeps the clock", func(t *testing.T) {
		s := open(t).Control
		clock := simulator.Clock{Offset: 2 * time.Hour}
		if err := s.SetClock(ctx, clock); err != nil {
			t.Fatalf("SetClock: %v", err)
		}
		for _, id := range []string{"f1", "f2"} {
			if err := s.AddFault(ctx, simulator.Fault{ID: id, Operation: "*", Kind: simulator.FaultError, Remaining: 3}); err != nil {
				t.Fatalf("AddFault: %v", err)
			}
		}
		if err := s.ClearFaults(ctx); err != nil {
			t.Fatalf("ClearFaults: %v", err)
		}
		if got := mustFaults(t, s); len(got) != 0 {
			t.Errorf("Faults = %+v, want none", got)
		}
		if f := mustTakeFault(t, s, spec.PathCampaignList); f != nil {
			t.Errorf("TakeFault after ClearFaults = %+v, want nil", f)
		}
		if got := mustClock(t, s); !equalClock(got, clock) {
			t.Errorf("Clock = %+v, want %+v", got, clock)
		}
		if err := s.ClearFaults(ctx); err != nil {
			t.Errorf("ClearFaults without faults: %v", err)
		}
	})

	t.Run("an account's clock offset is its own, and ResetControl forgets it", func(t *testing.T) {
		s := open(t).Control
		offset := func(id string) time.Duration {
			t.Helper()
			d, err := s.AccountOffset(ctx, id)
			if err != nil {
				t.Fatalf("AccountOffset(%s): %v", id, err)
			}
			return d
		}
		if got := offset("acc-a"); got != 0 {
			t.Errorf("AccountOffset of an account never advanced = %v, want 0", got)
		}
		want := 61*time.Second + 7*time.Nanosecond
		if err := s.SetAccountOffset(ctx, "acc-a", want); err != nil {
			t.Fatalf("SetAccountOffset: %v", err)
		}
		if got := offset("acc-a"); got != want {
			t.Errorf("AccountOffset = %v, want %v", got, want)
		}
		if got := offset("acc-b"); got != 0 {
			t.Errorf("AccountOffset of another account = %v, want 0", got)
		}
		if got := mustClock(t, s); !equalClock(got, simulator.Clock{}) {
			t.Errorf("Clock = %+v, want the zero Clock: an account's offset is not the simulator's", got)
		}
		if err := s.SetAccountOffset(ctx, "acc-b", time.Hour); err != nil {
			t.Fatalf("SetAccountOffset: %v", err)
		}
		if err := s.SetAccountOffset(ctx, "acc-b", 0); err != nil {
			t.Fatalf("SetAccountOffset zero: %v", err)
		}
		if got := offset("acc-b"); got != 0 {
			t.Errorf("AccountOffset after setting zero = %v, want 0", got)
		}
		if err := s.ResetControl(ctx); err != nil {
			t.Fatalf("ResetControl: %v", err)
		}
		if got := offset("acc-a"); got != 0 {
			t.Errorf("AccountOffset after ResetControl = %v, want 0", got)
		}
	})

	t.Run("ResetControl clears the faults and returns the clock to real time", func(t *testing.T) {
		s := open(t).Control
		if err := s.SetClock(ctx, simulator.Clock{Frozen: true, FrozenAt: t0, Offset: time.Hour}); err != nil {
			t.Fatalf("SetClock: %v", err)
		}
		for _, id := range []string{"f1", "f2"} {
			if err := s.AddFault(ctx, simulator.Fault{ID: id, Operation: "*", Kind: simulator.FaultError, Remaining: 1}); err != nil {
				t.Fatalf("AddFault: %v", err)
			}
		}
		if err := s.ResetControl(ctx); err != nil {
			t.Fatalf("ResetControl: %v", err)
		}
		if got := mustClock(t, s); !equalClock(got, simulator.Clock{}) {
			t.Errorf("Clock = %+v, want the zero Clock", got)
		}
		if got := mustFaults(t, s); len(got) != 0 {
			t.Errorf("Faults = %+v, want none", got)
		}
		if f := mustTakeFault(t, s, spec.PathContactAdd); f != nil {
			t.Errorf("TakeFault after ResetControl = %+v, want nil", f)
		}
		// The store works again after a reset.
		if err := s.AddFault(ctx, simulator.Fault{ID: "f3", Operation: "*", Kind: simulator.FaultError, Remaining: 1}); err != nil {
			t.Fatalf("AddFault: %v", err)
		}
		if f := mustTakeFault(t, s, spec.PathContactAdd); f == nil || f.ID != "f3" {
			t.Errorf("TakeFault = %+v, want f3", f)
		}
	})
	t.Run("every field of a fault round-trips", func(t *testing.T) {
		s := open(t).Control
		want := []simulator.Fault{
			{ID: "f1", Operation: spec.PathContactAdd, AccountID: "acc_a", Kind: simulator.FaultError, Remaining: 2, Status: 503},
			{ID: "f2", Operation: "*", Kind: simulator.FaultRateLimit, Remaining: 1, RetryAfter: 7 * time.Second, Probability: 0.25},
			{ID: "f3", Operation: spec.PathCampaignStats, Kind: simulator.FaultMalformed, Remaining: 4, Probability: 0.1 + 0.2},
		}
		for _, f := range want {
			if err := s.AddFault(ctx, f); err != nil {
				t.Fatalf("AddFault(%s): %v", f.ID, err)
			}
		}
		if got := mustFaults(t, s); !reflect.DeepEqual(got, want) {
			t.Fatalf("Faults = %+v, want %+v", got, want)
		}
		f := mustTakeQuery(t, s, simulator.FaultQuery{Operation: spec.PathContactAdd, AccountID: "acc_a"})
		if wantF := (simulator.Fault{ID: "f1", Operation: spec.PathContactAdd, AccountID: "acc_a", Kind: simulator.FaultError, Remaining: 1, Status: 503}); f == nil || *f != wantF {
			t.Errorf("TakeFault = %+v, want %+v", f, wantF)
		}
	})

	t.Run("a fault for one account applies to that account only", func(t *testing.T) {
		s := open(t).Control
		for _, f := range []simulator.Fault{
			{ID: "a", Operation: "*", AccountID: "acc_a", Kind: simulator.FaultError, Remaining: 1},
			{ID: "all", Operation: "*", Kind: simulator.FaultError, Remaining: 1},
		} {
			if err := s.AddFault(ctx, f); err != nil {
				t.Fatalf("AddFault(%s): %v", f.ID, err)
			}
		}
		steps := []struct {
			account, wantID string
		}{
			// acc_b skips acc_a's older fault and takes the one for all.
			{"acc_b", "all"},
			{"acc_b", ""},
			{"acc_a", "a"},
			{"acc_a", ""},
		}
		for i, st := range steps {
			f := mustTakeQuery(t, s, simulator.FaultQuery{Operation: spec.PathCampaignList, AccountID: st.account})
			if got := faultID(f); got != st.wantID {
				t.Fatalf("step %d: TakeFault for %s = %q, want %q", i, st.account, got, st.wantID)
			}
		}
	})

	t.Run("a fault with a probability is taken when the draw is below it", func(t *testing.T) {
		s := open(t).Control
		if err := s.AddFault(ctx, simulator.Fault{ID: "p", Operation: "*", Kind: simulator.FaultError, Remaining: 2, Probability: 0.3}); err != nil {
			t.Fatalf("AddFault: %v", err)
		}
		steps := []struct {
			draw   float64
			wantID string
			left   map[string]int
		}{
			{0.3, "", map[string]int{"p": 2}}, // a miss consumes nothing
			{0.99, "", map[string]int{"p": 2}},
			{0.29, "p", map[string]int{"p": 1}},
			{0, "p", map[string]int{}},
		}
		for i, st := range steps {
			f := mustTakeQuery(t, s, simulator.FaultQuery{Operation: spec.PathContactAdd, AccountID: "acc", Draw: st.draw})
			if got := faultID(f); got != st.wantID {
				t.Fatalf("step %d: TakeFault(draw %v) = %q, want %q", i, st.draw, got, st.wantID)
			}
			if got := faultIDs(mustFaults(t, s)); !reflect.DeepEqual(got, st.left) {
				t.Fatalf("step %d: faults = %v, want %v", i, got, st.left)
			}
		}
	})

	t.Run("a missed fault hands the rest of the draw to the next", func(t *testing.T) {
		// Two faults of probability 0.5: draw u misses the first when
		// u >= 0.5 and then decides the second with (u-0.5)/0.5.
		tests := []struct {
			name   string
			draw   float64
			wantID string
		}{
			{"a draw below the first probability takes the first", 0.4, "first"},
			{"a draw that misses the first and, carried, hits the second", 0.6, "second"},
			{"a draw that misses both", 0.75, ""},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				s := open(t).Control
				for _, id := range []string{"first", "second"} {
					if err := s.AddFault(ctx, simulator.Fault{ID: id, Operation: "*", Kind: simulator.FaultError, Remaining: 1, Probability: 0.5}); err != nil {
						t.Fatalf("AddFault: %v", err)
					}
				}
				f := mustTakeQuery(t, s, simulator.FaultQuery{Operation: spec.PathContactAdd, Draw: tt.draw})
				if got := faultID(f); got != tt.wantID {
					t.Errorf("TakeFault(draw %v) = %q, want %q", tt.draw, got, tt.wantID)
				}
			})
		}
	})

	t.Run("a fault's probability is its share of matching requests", func(t *testing.T) {
		// A fixed random source: the count is the same on every run, and
		// the bound (five standard deviations) is the statistics' own, so
		// a backend that decides differently from Fault.Hits fails it.
		s := open(t).Control
		const n, p = 2000, 0.25
		if err := s.AddFault(ctx, simulator.Fault{ID: "p", Operation: "*", Kind: simulator.FaultError, Remaining: n, Probability: p}); err != nil {
			t.Fatalf("AddFault: %v", err)
		}
		rng := rand.New(rand.NewPCG(10, 20))
		hits, want := 0, 0
		for range n {
			draw := rng.Float64()
			if draw < p {
				want++
			}
			if mustTakeQuery(t, s, simulator.FaultQuery{Operation: spec.PathCampaignStats, Draw: draw}) != nil {
				hits++
			}
		}
		if hits != want {
			t.Errorf("faulted %d of %d requests, want exactly the %d draws below %v", hits, n, want, p)
		}
		if sd := math.Sqrt(n * p * (1 - p)); math.Abs(float64(hits)-n*p) > 5*sd {
			t.Errorf("faulted %d of %d requests, want about %v", hits, n, n*p)
		}
		if got, want := faultIDs(mustFaults(t, s)), map[string]int{"p": n - hits}; !reflect.DeepEqual(got, want) {
			t.Errorf("faults = %v, want %v", got, want)
		}
	})

	t.Run("DeleteFault removes one fault and keeps the others in order", func(t *testing.T) {
		s := open(t).Control
		for _, id := range []string{"f1", "f2", "f3"} {
			if err := s.AddFault(ctx, simulator.Fault{ID: id, Operation: "*", Kind: simulator.FaultDrop, Remaining: 2}); err != nil {
				t.Fatalf("AddFault: %v", err)
			}
		}
		mustTakeFault(t, s, spec.PathContactAdd) // f1 down to 1
		f, err := s.DeleteFault(ctx, "f2")
		if err != nil || f == nil || f.ID != "f2" || f.Remaining != 2 || f.Kind != simulator.FaultDrop {
			t.Fatalf("DeleteFault(f2) = %+v, %v; want f2 with 2 left", f, err)
		}
		if got := mustFaults(t, s); len(got) != 2 || got[0].ID != "f1" || got[0].Remaining != 1 || got[1].ID != "f3" {
			t.Errorf("Faults = %+v, want f1 (1 left) then f3", got)
		}
		if _, err := s.DeleteFault(ctx, "f2"); simulator.ErrorCode(err) != simulator.ENOTFOUND {
			t.Errorf("DeleteFault(f2) again = %v, want ENOTFOUND", err)
		}
		if _, err := s.DeleteFault(ctx, "nope"); simulator.ErrorCode(err) != simulator.ENOTFOUND {
			t.Errorf("DeleteFault(nope) = %v, want ENOTFOUND", err)
		}
		// The deleted fault is not taken again; the others are.
		for _, want := range []string{"f1", "f3", "f3", ""} {
			if got := faultID(mustTakeFault(t, s, spec.PathContactAdd)); got != want {
				t.Fatalf("TakeFault = %q, want %q", got, want)
			}
		}
	})
}

func faultID(f *simulator.Fault) string {
	if f == nil {
		return ""
	}
	return f.ID
}
