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

// Fault kinds the control API can inject.
const (
	FaultError = "error" // answer 500 Internal server error
	FaultDelay = "delay" // wait Delay, then serve the request normally
	FaultDrop  = "drop"  // close the connection without an answer
)

// Fault is an injected failure for the next Remaining requests of Operation
// (one of Operations, or "*" for all three).
type Fault struct {
	ID        string        `json:"id"`
	Operation string        `json:"operation"`
	Kind      string        `json:"kind"`
	Remaining int           `json:"remaining"`
	Delay     time.Duration `json:"delay,omitempty"`
}

// ControlStore keeps the control API's state: the clock and the faults.
type ControlStore interface {
	// Clock returns the current clock setting.
	Clock(ctx context.Context) (Clock, error)
	// SetClock replaces the clock setting.
	SetClock(ctx context.Context, c Clock) error

	// AddFault stores f, which has its ID set by the caller.
	AddFault(ctx context.Context, f Fault) error
	// TakeFault consumes one occurrence of the oldest fault that applies to
	// operation and returns it, or returns nil when none applies. A fault
	// whose Remaining reaches zero is removed.
	TakeFault(ctx context.Context, operation string) (*Fault, error)
	// Faults lists the pending faults, oldest first.
	Faults(ctx context.Context) ([]Fault, error)
	// ClearFaults removes every pending fault.
	ClearFaults(ctx context.Context) error

	// ResetControl clears the faults and returns the clock to real time.
	ResetControl(ctx context.Context) error
}
