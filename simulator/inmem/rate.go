package inmem

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
)

var _ simulator.RateCounter = (*RateCounter)(nil)

// RateCounter is the exact sliding-window counter of spec §8 kept in memory:
// for each key, the times of the requests it allowed in the last window,
// oldest first. One mutex makes every Take atomic, which is what "exactly
// 100 under concurrency" needs; a Take costs O(expired) amortised.
type RateCounter struct {
	limit  int
	window time.Duration

	mu   sync.Mutex
	logs map[string][]time.Time
}

// NewRateCounter returns a counter that allows limit requests per key in
// any window. It panics unless limit > 0 and window > 0: a programmer error.
func NewRateCounter(limit int, window time.Duration) *RateCounter {
	if limit <= 0 || window <= 0 {
		panic(fmt.Sprintf("inmem.NewRateCounter: limit %d and window %v must be positive", limit, window))
	}
	return &RateCounter{limit: limit, window: window, logs: make(map[string][]time.Time)}
}

// Take implements simulator.RateCounter.
func (c *RateCounter) Take(_ context.Context, key string, now time.Time) (simulator.RateDecision, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	log := c.logs[key]
	// A request at t counts while t > now-window: at exactly t+window it is out.
	cutoff := now.Add(-c.window)
	i := 0
	for i < len(log) && !log[i].After(cutoff) {
		i++
	}
	log = log[i:]
	if len(log) >= c.limit {
		c.logs[key] = log
		return simulator.RateDecision{Count: len(log), RetryAfter: log[0].Sub(cutoff)}, nil
	}
	log = append(log, now)
	c.logs[key] = log
	return simulator.RateDecision{Allowed: true, Count: len(log)}, nil
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
func (c *RateCounter) Count(_ context.Context, key string, now time.Time) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cutoff := now.Add(-c.window)
	n := 0
	for _, t := range c.logs[key] {
		if t.After(cutoff) {
			n++
		}
	}
	return n, nil
}
