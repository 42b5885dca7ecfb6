package simulator

import (
	"context"
	"fmt"
	"time"
)

// RateDecision is the outcome of one RateCounter.Take.
type RateDecision struct {
	Allowed bool
	// Count is the number of requests counted in the window, this one
	// included when it was allowed.
	Count int
	// RetryAfter is, for a refused request, how long until the oldest counted
	// request leaves the window and a slot frees.
	RetryAfter time.Duration
}

// RateCounter is an exact sliding-window counter (spec §8): a request at
// time now is allowed when fewer than limit requests of the same key were
// allowed in (now-window, now]. Refused requests are not counted, so a
// client that keeps retrying is let through as soon as a slot frees. A
// request counted at t stops counting at exactly t+window.
//
// Implementations are safe for concurrent use, and Take is atomic: n
// concurrent Takes on one key let exactly min(n, free slots) through.
type RateCounter interface {
	// Take decides one request of key at now and counts it when allowed.
	Take(ctx context.Context, key string, now time.Time) (RateDecision, error)

	// Reset forgets every request counted for key.
	Reset(ctx context.Context, key string) error

	// ResetAll forgets every request of every key.
	ResetAll(ctx context.Context) error

	// Count returns the number of requests of key counted in
	// (now-window, now] (and any counted after now, as Take counts them),
	// and changes nothing: what the control API's GET
	// /accounts/{accountId}/budget reports.
	Count(ctx context.Context, key string, now time.Time) (int, error)
}

// Arrival is one authenticated partner request, as a Gate sees it.
type Arrival struct {
	AccountID string
	Operation string
	// Real is real time; the gate applies the control API's Clock to it.
	Real time.Time
	// Draw is uniform in [0, 1), for the faults with a probability
	// (FaultQuery.Draw).
	Draw float64
}

// Admission is the outcome of one Gate.Admit.
type Admission struct {
	// Now is the simulator time the request was decided at: the Clock
	// applied to Arrival.Real.
	Now time.Time
	// Rate is the decision of the account's rate counter.
	Rate RateDecision
	// Fault is the fault taken for the request, or nil. Always nil for a
	// request the rate counter refused: a 429 consumes no fault.
	Fault *Fault
}

// Gate is the one step between authentication and an operation: it reads
// the clock, decides the request on its account's rate counter (spec §8:
// the request counts when allowed, whatever happens next, a fault
// included) and, for an allowed request, takes the pending fault that
// applies (ControlStore.TakeFault). A backend may do all of it in one round
// trip; StoreGate composes the separate stores.
type Gate interface {
	Admit(ctx context.Context, a Arrival) (Admission, error)
}

// StoreGate is a Gate made of a ControlStore and a RateCounter, in three
// calls, each atomic on its own: what the in-memory backend uses, and the
// fallback when the counter is decorated (the violation layer counts
// under other keys).
type StoreGate struct {
	Control ControlStore
	Counter RateCounter
}

// Admit implements Gate.
func (g StoreGate) Admit(ctx context.Context, a Arrival) (Admission, error) {
	c, err := g.Control.Clock(ctx)
	if err != nil {
		return Admission{}, fmt.Errorf("read clock: %w", err)
	}
	off, err := g.Control.AccountOffset(ctx, a.AccountID)
	if err != nil {
		return Admission{}, fmt.Errorf("read account clock: %w", err)
	}
	ad := Admission{Now: c.Now(a.Real).Add(off)}
	if ad.Rate, err = g.Counter.Take(ctx, a.AccountID, ad.Now); err != nil {
		return Admission{}, fmt.Errorf("rate counter: %w", err)
	}
	if !ad.Rate.Allowed {
		return ad, nil
	}
	if ad.Fault, err = g.Control.TakeFault(ctx, FaultQuery{Operation: a.Operation, AccountID: a.AccountID, Draw: a.Draw}); err != nil {
		return Admission{}, fmt.Errorf("take fault: %w", err)
	}
	return ad, nil
}
