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
	// Reset is, for a request allowed under a fixed window (RatePolicy),
	// how long until that window ends and all its slots free; zero under
	// a sliding window, where the budget is whole again a window after
	// the newest request.
	Reset time.Duration
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
	// Policy is how the account's rate counter counts this request (the
	// profile the account plays). The zero value is the sliding window.
	Policy RatePolicy
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
	if ad.Rate, err = TakePolicy(ctx, g.Counter, a.AccountID, ad.Now, a.Policy); err != nil {
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

// TakePolicy decides on c under p: TakePolicy when c can, else Take (a
// decorated counter, such as the violation layer's, plays the sliding
// window only).
func TakePolicy(ctx context.Context, c RateCounter, key string, now time.Time, p RatePolicy) (RateDecision, error) {
	if pc, ok := c.(PolicyCounter); ok && !p.Sliding() {
		return pc.TakePolicy(ctx, key, now, p)
	}
	return c.Take(ctx, key, now)
}

// CountPolicy is c.Count under p: CountPolicy when c can, else Count.
func CountPolicy(ctx context.Context, c RateCounter, key string, now time.Time, p RatePolicy) (int, error) {
	if pc, ok := c.(PolicyCounter); ok && !p.Sliding() {
		return pc.CountPolicy(ctx, key, now, p)
	}
	return c.Count(ctx, key, now)
}

// Rate windows a RatePolicy names (simulator/profile's rateLimit.window):
// the ways a deployment may read spec §8's "100 requests per minute".
const (
	// WindowSliding: a request is allowed when fewer than the limit were
	// counted in the window that ends with it, (now-window, now]. The
	// zero RatePolicy's window.
	WindowSliding = "sliding"
	// WindowFixedClock: windows aligned to multiples of the window since
	// the Unix epoch on the simulator's clock (with a minute, each clock
	// minute from :00); a window's slots all free when it ends.
	WindowFixedClock = "fixed-clock"
	// WindowFixedFirst: a window opens at the first request counted after
	// the previous one ended, and all its slots free when it ends.
	WindowFixedFirst = "fixed-first"
)

// RatePolicy is how one request is counted (issue 20: the profile's
// rateLimit choices), passed per request since accounts may play different
// profiles. The zero value is the simulator's own: a sliding window that
// does not count refused requests.
//
// §8 holds under every policy: never more than the limit allowed within
// one window as the policy defines it.
type RatePolicy struct {
	// Window is one of the Window constants; empty means WindowSliding.
	Window string
	// CountsRefused counts a request refused with 429 too: under a sliding
	// window a client that keeps retrying then never gets through until it
	// pauses for a whole window. Under fixed windows it changes only the
	// Count (a refused request is always inside a full window).
	CountsRefused bool
}

// Sliding reports whether p is the zero policy's sliding window without
// counting refusals: what RateCounter.Take decides.
func (p RatePolicy) Sliding() bool {
	return (p.Window == "" || p.Window == WindowSliding) && !p.CountsRefused
}

// PolicyCounter is a RateCounter that can decide under any RatePolicy.
// TakePolicy with the zero policy is Take; CountPolicy is Count under the
// policy's window: the requests counted in the window now falls in (for a
// fixed-first window, 0 when none is open).
type PolicyCounter interface {
	RateCounter
	TakePolicy(ctx context.Context, key string, now time.Time, p RatePolicy) (RateDecision, error)
	CountPolicy(ctx context.Context, key string, now time.Time, p RatePolicy) (int, error)
}

// FixedClockStart is the start of the fixed-clock window of length window
// that holds now: the greatest multiple of window since the Unix epoch not
// after now.
func FixedClockStart(now time.Time, window time.Duration) time.Time {
	ns, w := now.UnixNano(), int64(window)
	r := ns % w
	if r < 0 {
		r += w
	}
	return time.Unix(0, ns-r).In(now.Location())
}
