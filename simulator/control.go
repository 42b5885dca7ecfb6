package simulator

import (
	"context"
	"time"
)

// Clock is the simulator's notion of now as the control API sets it: real
// time shifted by Offset, or, when Frozen, the fixed instant FrozenAt. The
// zero Clock is real time.
type Clock struct {
	Offset   time.Duration `json:"offset"`
	Frozen   bool          `json:"frozen"`
	FrozenAt time.Time     `json:"frozenAt"`
}

// Now returns the simulated time for the given real time.
func (c Clock) Now(real time.Time) time.Time {
	if c.Frozen {
		return c.FrozenAt
	}
	return real.Add(c.Offset)
}

// Fault kinds the control API can inject. Every fault is applied after
// authentication and the rate decision (spec §5, §8): a request answered
// 401, 403 or 429 never gets one nor consumes one.
const (
	FaultError     = "error"      // answer Status (5xx) with a JSON error
	FaultRateLimit = "rate-limit" // answer the spec §7 429 with Retry-After
	FaultMalformed = "malformed"  // answer 200 application/json with a body that is not JSON
	FaultDelay     = "delay"      // wait Delay, then serve the request normally
	FaultDrop      = "drop"       // close the connection without an answer
)

// FaultKinds lists the kinds, in the order the control API names them.
var FaultKinds = []string{FaultError, FaultRateLimit, FaultMalformed, FaultDelay, FaultDrop}

// Fault is an injected failure for the next Remaining requests of Operation
// (an operation path of package simulator/spec, or "*" for all three) made
// by AccountID (every account when empty). With a Probability below 1,
// each matching request is faulted with that probability, and one that is
// not faulted consumes nothing.
type Fault struct {
	ID        string `json:"id"`
	Operation string `json:"operation"`
	AccountID string `json:"accountId,omitempty"`
	Kind      string `json:"kind"`
	Remaining int    `json:"remaining"`
	// Status is the 5xx status of a FaultError; zero means 500.
	Status int `json:"status,omitempty"`
	// RetryAfter is the Retry-After of a FaultRateLimit.
	RetryAfter time.Duration `json:"retryAfter,omitempty"`
	// Delay is the wait of a FaultDelay.
	Delay time.Duration `json:"delay,omitempty"`
	// Probability is in (0, 1]; zero means 1 (every matching request).
	Probability float64 `json:"probability,omitempty"`
}

// Applies reports whether f concerns a request of operation by accountID.
func (f *Fault) Applies(operation, accountID string) bool {
	return (f.Operation == "*" || f.Operation == operation) && (f.AccountID == "" || f.AccountID == accountID)
}

// Hits decides whether a request that f applies to is faulted, given draw,
// uniform in [0, 1): it is when draw < Probability. When it is not, Hits
// returns the draw for the next fault: (draw-p)/(1-p), again uniform in
// [0, 1) and independent of this decision, so one draw decides any number
// of faults in turn, and the Redis script, which repeats this arithmetic,
// decides exactly as memory does.
func (f *Fault) Hits(draw float64) (bool, float64) {
	p := f.Probability
	if p <= 0 || p >= 1 || draw < p {
		return true, draw
	}
	return false, (draw - p) / (1 - p)
}

// FaultQuery is one request a fault may apply to.
type FaultQuery struct {
	Operation string
	AccountID string
	// Draw is uniform in [0, 1): the caller's random draw for the faults
	// with a probability (stores stay deterministic; tests pass their own).
	Draw float64
}

// ControlStore keeps the control API's state: the clock and the faults.
type ControlStore interface {
	// Clock returns the current clock setting.
	Clock(ctx context.Context) (Clock, error)
	// SetClock replaces the clock setting.
	SetClock(ctx context.Context, c Clock) error

	// AddFault stores f, which has its ID set by the caller.
	AddFault(ctx context.Context, f Fault) error
	// TakeFault walks the faults oldest first and consumes one occurrence
	// of the first that applies to q's operation and account and hits
	// (Fault.Hits, the draw carried from one fault to the next); it returns
	// that fault, or nil when none does. A fault whose Remaining reaches
	// zero is removed. The returned Remaining is what is left after this
	// one. Atomic: n concurrent takes of a fault with Remaining r and
	// probability 1 consume min(n, r) occurrences.
	TakeFault(ctx context.Context, q FaultQuery) (*Fault, error)
	// DeleteFault removes the fault with the given ID and returns it.
	// Returns ENOTFOUND if there is none.
	DeleteFault(ctx context.Context, id string) (*Fault, error)
	// Faults lists the pending faults, oldest first.
	Faults(ctx context.Context) ([]Fault, error)
	// ClearFaults removes every pending fault.
	ClearFaults(ctx context.Context) error

	// AccountOffset returns how far one account's clock runs ahead of the
	// Clock: what the control API advanced for that account alone, so that
	// runs sharing one simulator through their own accounts never move each
	// other's rate-limit windows (spec §8: one counter per account). Zero
	// when never set.
	AccountOffset(ctx context.Context, accountID string) (time.Duration, error)
	// SetAccountOffset replaces one account's offset; zero forgets it.
	SetAccountOffset(ctx context.Context, accountID string, d time.Duration) error

	// ResetControl clears the faults and returns the clock, every
	// account's offset included, to real time.
	ResetControl(ctx context.Context) error
}
