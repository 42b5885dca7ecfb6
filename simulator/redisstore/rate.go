package redisstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/partner-v3/conformance-kit/simulator"
)

var _ simulator.RateCounter = (*RateCounter)(nil)

// RateCounter is the exact sliding-window counter of spec §8 in Redis,
// shared by every process that uses the same Redis and prefix.
//
// Each key is a sorted set holding one member per counted request,
// "<time>:<unique>", all with score 0. The time is the caller's now (the
// simulator's clock, so the control API can move it; never Redis TIME),
// encoded as 20 decimal digits so that the lexical order of members is the
// time order, to the nanosecond. Scores would not do: a float64 holds
// nanoseconds since 1970 only to about 256 ns. The unique part keeps
// members of equal times apart.
type RateCounter struct {
	db     *DB
	limit  int
	window time.Duration
}

// NewRateCounter returns a counter that allows limit requests per key in
// any window. It panics unless limit and window are positive (programmer
// error, as chi's Throttle).
func NewRateCounter(db *DB, limit int, window time.Duration) *RateCounter {
	if limit <= 0 || window <= 0 {
		panic("redisstore: NewRateCounter expects limit > 0 and window > 0")
	}
	return &RateCounter{db: db, limit: limit, window: window}
}

// takeScript is the whole decision, atomic across processes: drop the
// members that left the window (t <= now-window), count the rest, and add
// this request only if fewer than limit were counted. A refused request
// adds nothing (simulator.RateCounter: refused requests are not counted).
// Like inmem, members after now (the control API set the clock back) still
// count: the counter never lets more through than a monotonic clock would.
//
// A re-sent call (go-redis retries once when a reply is lost) is answered
// from the reply key that an allowed call leaves (see DB.Open), so a request
// is counted once. A refused call changes nothing but the trim, so its
// retry just decides again.
//
// KEYS: the key's zset, the set of rate keys, the call's reply key. ARGV:
// the first time inside the window (now-window+1ns, encoded), limit, the
// new member, the reply key's lifetime in milliseconds.
// Returns {1, count, ""} when allowed, {0, count, oldest member} when not.
var takeScript = redis.NewScript(`
local done = redis.call('GET', KEYS[3])
if done then
  return {1, tonumber(done), ''}
end
redis.call('ZREMRANGEBYLEX', KEYS[1], '-', '(' .. ARGV[1])
local count = redis.call('ZCARD', KEYS[1])
if count < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], 0, ARGV[3])
  redis.call('SADD', KEYS[2], KEYS[1])
  redis.call('SET', KEYS[3], count + 1, 'PX', ARGV[4])
  return {1, count + 1, ''}
end
return {0, count, redis.call('ZRANGE', KEYS[1], 0, 0)[1]}
`)

// resetAllScript deletes every rate key. KEYS: the set of rate keys.
var resetAllScript = redis.NewScript(`
for _, k in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  redis.call('DEL', k)
end
redis.call('DEL', KEYS[1])
return 1
`)

// encodeTime maps nanoseconds since 1970 onto 20 digits whose lexical order
// is the numeric order, negative times included (flipping the sign bit maps
// int64 order onto uint64 order).
func encodeTime(ns int64) string {
	return fmt.Sprintf("%020d", uint64(ns)^(1<<63))
}

func decodeTime(s string) (int64, error) {
	u, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("decode time %q: %w", s, err)
	}
	return int64(u ^ (1 << 63)), nil
}

// Take implements simulator.RateCounter.
func (r *RateCounter) Take(ctx context.Context, key string, now time.Time) (simulator.RateDecision, error) {
	return r.take(ctx, key, now, r.db.uniqueMember())
}

// take is Take with the call's unique id given, so that a test can re-send
// a call as go-redis's retry does.
func (r *RateCounter) take(ctx context.Context, key string, now time.Time, id string) (simulator.RateDecision, error) {
	db := r.db
	ns := now.UnixNano()
	keys := []string{db.key("rate", key), db.key("rate-keys"), db.replyKey(id)}
	res, err := takeScript.Run(ctx, db.client, keys,
		encodeTime(ns-int64(r.window)+1), r.limit,
		encodeTime(ns)+":"+id, db.replyTTL.Milliseconds(),
	).Slice()
	if err != nil {
		return simulator.RateDecision{}, fmt.Errorf("take rate: %w", err)
	}
	if len(res) != 3 {
		return simulator.RateDecision{}, fmt.Errorf("take rate: unexpected reply %v", res)
	}
	allowed, _ := res[0].(int64)
	count, _ := res[1].(int64)
	d := simulator.RateDecision{Allowed: allowed == 1, Count: int(count)}
	if d.Allowed {
		return d, nil
	}
	oldest, _ := res[2].(string)
	at, _, _ := strings.Cut(oldest, ":")
	t, err := decodeTime(at)
	if err != nil {
		return simulator.RateDecision{}, fmt.Errorf("take rate: %w", err)
	}
	d.RetryAfter = time.Duration(t + int64(r.window) - ns)
	return d, nil
}

// Reset implements simulator.RateCounter.
func (r *RateCounter) Reset(ctx context.Context, key string) error {
	db := r.db
	k := db.key("rate", key)
	if _, err := db.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, k)
		p.SRem(ctx, db.key("rate-keys"), k)
		return nil
	}); err != nil {
		return fmt.Errorf("reset rate: %w", err)
	}
	return nil
}

// ResetAll implements simulator.RateCounter.
func (r *RateCounter) ResetAll(ctx context.Context) error {
	db := r.db
	if err := resetAllScript.Run(ctx, db.client, []string{db.key("rate-keys")}).Err(); err != nil {
		return fmt.Errorf("reset rates: %w", err)
	}
	return nil
}

// Count implements simulator.RateCounter: one ZLEXCOUNT of the members from
// the first time inside the window on, the ones Take would count, at the
// caller's now (the simulator's clock). It trims nothing.
func (r *RateCounter) Count(ctx context.Context, key string, now time.Time) (int, error) {
	from := "[" + encodeTime(now.UnixNano()-int64(r.window)+1)
	n, err := r.db.client.ZLexCount(ctx, r.db.key("rate", key), from, "+").Result()
	if err != nil {
		return 0, fmt.Errorf("count rate: %w", err)
	}
	return int(n), nil
}
