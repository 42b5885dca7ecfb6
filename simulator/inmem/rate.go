package inmem

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
)

var _ simulator.PolicyCounter = (*RateCounter)(nil)

// RateCounter is the exact sliding-window counter of spec §8 kept in memory
// (and, under a simulator.RatePolicy, the other windows: see rule):
// for each key, the times of the requests it allowed in the last window,
// oldest first. One mutex makes every Take atomic, which is what "exactly
// 100 under concurrency" needs; a Take costs O(expired) amortised.
//
// The times are Unix nanoseconds, not time.Time: a log holds no pointer,
// so the garbage collector never scans it, however long a load test's
// limit (--rate-limit 1000000000) lets it grow (issue 31, hot path).
type RateCounter struct {
	limit  int
	window time.Duration

	mu   sync.Mutex
	logs map[string][]int64
}

// NewRateCounter returns a counter that allows limit requests per key in
// any window. It panics unless limit > 0 and window > 0: a programmer error.
func NewRateCounter(limit int, window time.Duration) *RateCounter {
	if limit <= 0 || window <= 0 {
		panic(fmt.Sprintf("inmem.NewRateCounter: limit %d and window %v must be positive", limit, window))
	}
	return &RateCounter{limit: limit, window: window, logs: make(map[string][]int64)}
}

// Take implements simulator.RateCounter.
func (c *RateCounter) Take(ctx context.Context, key string, now time.Time) (simulator.RateDecision, error) {
	return c.TakePolicy(ctx, key, now, simulator.RatePolicy{})
}

// rule is the window rule of spec §8 under p, the one place in Go that
// knows the window modes (redisstore's Lua rate_window in luaRate is its
// twin, rule for rule): for a request at now, given the key's counted
// requests (oldest first), it returns from, the instant from which they
// still count, and end, the instant a fixed window ends and frees all its
// slots (ends false for the sliding window, whose slots free one by one).
//
//   - sliding: a request at t counts while t > now-window: at exactly
//     t+window it is out.
//   - fixed-clock: from the window's start (simulator.FixedClockStart);
//     it ends a window later.
//   - fixed-first: from the oldest request, which opened the window; once
//     that window has ended, from its end, and the next request opens
//     another (it ends a window after whichever request opened it).
func (c *RateCounter) rule(log []int64, now int64, p simulator.RatePolicy) (from, end int64, ends bool) {
	w := int64(c.window)
	switch p.Window {
	case simulator.WindowFixedClock:
		start := simulator.FixedClockStart(time.Unix(0, now), c.window).UnixNano()
		return start, start + w, true
	case simulator.WindowFixedFirst:
		if len(log) == 0 {
			return now, now + w, true
		}
		end := log[0] + w
		if now < end {
			return log[0], end, true
		}
		if i := countedFrom(log, end); i < len(log) {
			return end, log[i] + w, true
		}
		return end, now + w, true
	}
	return now - w + 1, 0, false
}

// countedFrom is the index of the first request of log at or after from.
func countedFrom(log []int64, from int64) int {
	i := 0
	for i < len(log) && log[i] < from {
		i++
	}
	return i
}

// counted returns the part of log that counts at now under p, and the
// window's end when it has one (see rule).
func (c *RateCounter) counted(log []int64, now int64, p simulator.RatePolicy) (counted []int64, end int64, ends bool) {
	from, end, ends := c.rule(log, now, p)
	return log[countedFrom(log, from):], end, ends
}

// TakePolicy implements simulator.PolicyCounter.
func (c *RateCounter) TakePolicy(_ context.Context, key string, at time.Time, p simulator.RatePolicy) (simulator.RateDecision, error) {
	now := at.UnixNano()
	c.mu.Lock()
	defer c.mu.Unlock()
	log, end, ends := c.counted(c.logs[key], now, p)
	if len(log) < c.limit {
		log = append(log, now)
		c.logs[key] = log
		d := simulator.RateDecision{Allowed: true, Count: len(log)}
		if ends {
			d.Reset = time.Duration(end - now)
		}
		return d, nil
	}
	if p.CountsRefused {
		log = append(log, now)
	}
	c.logs[key] = log
	d := simulator.RateDecision{Count: len(log)}
	if !ends {
		// A slot frees when the request limit places before the newest
		// leaves: the oldest, unless refused requests were counted too.
		end = log[len(log)-c.limit] + int64(c.window)
	}
	d.RetryAfter = time.Duration(end - now)
	return d, nil
}

// Reset implements simulator.RateCounter.
func (c *RateCounter) Reset(_ context.Context, key string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.logs, key)
	return nil
}

// ResetAll implements simulator.RateCounter.
func (c *RateCounter) ResetAll(context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.logs)
	return nil
}

// Count implements simulator.RateCounter.
func (c *RateCounter) Count(ctx context.Context, key string, now time.Time) (int, error) {
	return c.CountPolicy(ctx, key, now, simulator.RatePolicy{})
}

// CountPolicy implements simulator.PolicyCounter.
func (c *RateCounter) CountPolicy(_ context.Context, key string, now time.Time, p simulator.RatePolicy) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	log, _, _ := c.counted(c.logs[key], now.UnixNano(), p)
	return len(log), nil
}
