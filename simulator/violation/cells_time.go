package violation

// The switches of rules rate-holds and rate-concurrent (spec §8 over time,
// across connections and under concurrency; issue 27): the limiter bugs
// that a suite checking one request after another, at one instant, over
// one kept-alive connection, never sees.

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/steps/matrix"
)

// raceYield is how long the racy counter of rate-concurrent waits between
// reading an account's count and writing it: long enough for the other
// requests of the account in flight at the same time to be counted
// meanwhile, short enough to cost a run a few seconds.
const raceYield = 30 * time.Millisecond

// rateLimits holds the limit and window the simulator's counter was given
// (breach.limits reads them and changes nothing), for the switches that
// mimic a limiter of their own.
type rateLimits struct {
	limit  atomic.Int64
	window atomic.Int64
}

func (l *rateLimits) hook(limit int, window time.Duration) (int, time.Duration) {
	l.limit.Store(int64(limit))
	l.window.Store(int64(window))
	return limit, window
}

// rateHoldsBreach breaks rule rate-holds in one cell: late in the window,
// the operation of the account is served although the budget is spent.
// Late on the run's connection: the limiter of that account and operation
// frees its budget early, deciding over a window half the configured one.
// Late on a new connection: it counts per connection, so the first request
// of a connection the account's counter has not seen is served.
func rateHoldsBreach(c matrix.Cell) (breach, bool) {
	op := operationPath(c.Operation)
	mine := func(n *note) bool { return n.role == c.Account && n.op == op }
	switch c.Condition {
	case matrix.CondLate:
		l := &rateLimits{}
		return breach{limits: l.hook, counter: func(next simulator.RateCounter) simulator.RateCounter {
			return &earlyCounter{keyedCounter: newKeyedCounter[[]time.Time](next), mine: mine, limits: l}
		}}, true
	case matrix.CondLateFresh:
		return breach{counter: func(next simulator.RateCounter) simulator.RateCounter {
			return &connCounter{keyedCounter: newKeyedCounter[map[string]bool](next), mine: mine}
		}}, true
	}
	return breach{}, false
}

// keyedCounter is a decorating counter's own state by key, cleared with
// the counter it decorates (the control API's rate-limit reset clears
// both).
type keyedCounter[V any] struct {
	simulator.RateCounter

	mu    sync.Mutex
	byKey map[string]V
}

func newKeyedCounter[V any](next simulator.RateCounter) keyedCounter[V] {
	return keyedCounter[V]{RateCounter: next, byKey: map[string]V{}}
}

// Reset implements simulator.RateCounter.
func (k *keyedCounter[V]) Reset(ctx context.Context, key string) error {
	k.mu.Lock()
	delete(k.byKey, key)
	k.mu.Unlock()
	return k.RateCounter.Reset(ctx, key)
}

// ResetAll implements simulator.RateCounter.
func (k *keyedCounter[V]) ResetAll(ctx context.Context) error {
	k.mu.Lock()
	clear(k.byKey)
	k.mu.Unlock()
	return k.RateCounter.ResetAll(ctx)
}

// earlyCounter decides the requests of one operation and account over a
// window half the configured one: a budget spent at the start of a window
// is free again in its second half.
type earlyCounter struct {
	// by key: the requests counted, oldest first
	keyedCounter[[]time.Time]
	mine   func(*note) bool
	limits *rateLimits
}

// Take implements simulator.RateCounter.
func (e *earlyCounter) Take(ctx context.Context, key string, now time.Time) (simulator.RateDecision, error) {
	d, err := e.RateCounter.Take(ctx, key, now)
	if err != nil {
		return d, err
	}
	window := time.Duration(e.limits.window.Load())
	e.mu.Lock()
	defer e.mu.Unlock()
	log := e.byKey[key]
	for len(log) > 0 && !log[0].After(now.Add(-window)) {
		log = log[1:]
	}
	if !d.Allowed && e.mine(noteFrom(ctx)) {
		half, n := now.Add(-window/2), 0
		for _, t := range log {
			if t.After(half) {
				n++
			}
		}
		if int64(n) < e.limits.limit.Load() {
			d.Allowed, d.RetryAfter = true, 0
		}
	}
	if d.Allowed {
		log = append(log, now)
	}
	e.byKey[key] = log
	return d, nil
}

// connCounter serves the first request of one operation and account on a
// connection the account's counter has not seen, whatever its budget: a
// limiter kept per connection.
type connCounter struct {
	// by key: the client addresses counted
	keyedCounter[map[string]bool]
	mine func(*note) bool
}

// Take implements simulator.RateCounter.
func (c *connCounter) Take(ctx context.Context, key string, now time.Time) (simulator.RateDecision, error) {
	d, err := c.RateCounter.Take(ctx, key, now)
	if err != nil {
		return d, err
	}
	n := noteFrom(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	conns := c.byKey[key]
	if conns == nil {
		conns = map[string]bool{}
		c.byKey[key] = conns
	}
	if !d.Allowed && n.remote != "" && !conns[n.remote] && c.mine(n) {
		d.Allowed, d.RetryAfter = true, 0
	}
	conns[n.remote] = true
	return d, nil
}

// rateConcurrentBreach breaks rule rate-concurrent in one cell: the
// account's requests of the operation are counted by reading the count,
// yielding, and writing it back. One after another nothing changes; when
// another request of the account is counted meanwhile, this one decides on
// the stale count and its write loses the other's count, so the account is
// let through more than the limit.
func rateConcurrentBreach(c matrix.Cell) breach {
	l := &rateLimits{}
	return breach{limits: l.hook, counter: cellCounter(c, func(ctx context.Context, next simulator.RateCounter, key string, now time.Time) (simulator.RateDecision, error) {
		before, err := next.Count(ctx, key, now)
		if err != nil {
			return simulator.RateDecision{}, err
		}
		select {
		case <-time.After(raceYield):
		case <-ctx.Done():
			return simulator.RateDecision{}, ctx.Err()
		}
		after, err := next.Count(ctx, key, now)
		if err != nil {
			return simulator.RateDecision{}, err
		}
		if after == before {
			return next.Take(ctx, key, now) // nothing was written meanwhile
		}
		d := simulator.RateDecision{Allowed: int64(before) < l.limit.Load(), Count: before + 1}
		if !d.Allowed {
			d.RetryAfter = time.Second
		}
		return d, nil
	})}
}
