package simulator

import (
	"context"
	"time"
)

// Spec §8: 100 requests per minute per account, all operations together.
const (
	DefaultRateLimit  = 100
	DefaultRateWindow = time.Minute
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
}
