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

var _ simulator.PolicyCounter = (*RateCounter)(nil)

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

// luaDecide is the rate decision of RateCounter.Take and Gate.Admit under
// every simulator.RatePolicy (issue 20), shared by both scripts so that
// replicas on one Redis decide alike whatever profile an account plays.
//
// Times are whole seconds and nanoseconds in [0, 1e9): add() keeps that
// form, enc() writes it as encodeTime does (2^63 plus the nanoseconds, in
// 20 digits), dec() reads a member's time back, with no number past 2^53.
//
// decide(key, s, n, cs, cn, ws, wn, mode, limit, refused, id): the request
// at (s, n); (cs, cn) is minus the window plus 1ns, (ws, wn) the window.
// Returns allowed (0 or 1), the count, the instant a slot frees (encoded;
// ” when allowed) and whether a member was added.
//
//   - sliding: drop the members that left the window (t <= now-window);
//     a slot frees when the member limit places before the newest leaves.
//   - fixed-clock: drop the members before the window's start, the
//     greatest multiple of the window since the epoch (the window is a
//     whole number of seconds or divides one: checkWindow); all slots
//     free at its end.
//   - fixed-first: when the window the oldest member opened has ended,
//     drop its members; all slots free at the end of the open window.
//
// Members after now (the control API set the clock back) still count: the
// counter never lets more through than a monotonic clock would.
//
// Constant arguments of redis.call are strings ('0', not 0): Redis writes
// a Lua number it is given with snprintf("%.17g"), the floating-point
// printer, on every call (callgrind, issue 21); a literal string costs
// nothing. The same holds in luaTakeFault.
const luaDecide = `
local function add(s1, n1, s2, n2)
  local s, n = s1 + s2, n1 + n2
  if n >= 1e9 then
    s, n = s + 1, n - 1e9
  end
  return s, n
end
local function enc(s, n)
  local hi, lo = 9223372036 + s, 854775808 + n
  if lo >= 1e9 then
    hi, lo = hi + 1, lo - 1e9
  end
  return string.format('%011d%09d', hi, lo)
end
local function dec(m)
  local s, n = tonumber(string.sub(m, 1, 11)) - 9223372036, tonumber(string.sub(m, 12, 20)) - 854775808
  if n < 0 then
    s, n = s - 1, n + 1e9
  end
  return s, n
end
local function decide(key, s, n, cs, cn, ws, wn, mode, limit, refused, id)
  local now = enc(s, n)
  local free = ''
  if mode == 'fixed-clock' then
    local ss, sn = s - s % ws, 0
    if ws == 0 then
      ss, sn = s, n - n % wn
    end
    redis.call('ZREMRANGEBYLEX', key, '-', '(' .. enc(ss, sn))
    free = enc(add(ss, sn, ws, wn))
  elseif mode == 'fixed-first' then
    local first = redis.call('ZRANGE', key, 0, 0)[1]
    if first then
      local fs, fn = dec(first)
      local e = enc(add(fs, fn, ws, wn))
      if now >= e then
        redis.call('ZREMRANGEBYLEX', key, '-', '(' .. e)
        first = redis.call('ZRANGE', key, 0, 0)[1]
      end
    end
    if first then
      local fs, fn = dec(first)
      free = enc(add(fs, fn, ws, wn))
    else
      free = enc(add(s, n, ws, wn))
    end
  else
    redis.call('ZREMRANGEBYLEX', key, '-', '(' .. enc(add(s, n, cs, cn)))
  end
  local count = redis.call('ZCARD', key)
  if count < limit then
    redis.call('ZADD', key, '0', now .. ':' .. id)
    return 1, count + 1, free, true
  end
  local added = false
  if refused == '1' then
    redis.call('ZADD', key, '0', now .. ':' .. id)
    count, added = count + 1, true
  end
  if mode ~= 'fixed-clock' and mode ~= 'fixed-first' then
    local m = redis.call('ZRANGE', key, count - limit, count - limit)[1]
    local fs, fn = dec(m)
    free = enc(add(fs, fn, ws, wn))
  end
  return 0, count, free, added
end
`

// takeScript is the whole decision (luaDecide), atomic across processes.
// A refused request adds nothing unless the policy counts refusals.
//
// A re-sent call (go-redis retries once when a reply is lost) is answered
// from the reply key that a call which added a member leaves (see
// DB.Open), so a request is counted once. A call that added nothing
// changes nothing but the trim, so its retry just decides again.
//
// KEYS: the key's zset, the call's reply key and, but on a sharded
// cluster (where ResetAll finds the rate keys by their names), the set of
// rate keys. ARGV:
// now (sec, nsec), minus the window plus 1ns (sec, nsec), the window (sec,
// nsec), limit, the call's unique id, the reply key's lifetime in
// milliseconds, the window mode, "1" when refusals count.
// Returns {allowed, count, free-at or ""}.
var takeScript = redis.NewScript(luaDecide + `
local done = redis.call('GET', KEYS[2])
if done then
  return cjson.decode(done)
end
local allowed, count, free, added = decide(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]),
  tonumber(ARGV[5]), tonumber(ARGV[6]), ARGV[10], tonumber(ARGV[7]), ARGV[11], ARGV[8])
local reply = {allowed, count, free}
if added then
  if KEYS[3] then
    redis.call('SADD', KEYS[3], KEYS[1])
  end
  redis.call('SET', KEYS[2], cjson.encode(reply), 'PX', ARGV[9])
end
return reply
`)

// policyArgs are the ARGV a script takes for p's mode: the window mode and
// "1" when refusals count.
func policyArgs(p simulator.RatePolicy) (string, string) {
	refused := "0"
	if p.CountsRefused {
		refused = "1"
	}
	mode := p.Window
	if mode == "" {
		mode = simulator.WindowSliding
	}
	return mode, refused
}

// checkWindow refuses a fixed-clock policy on a window the script cannot
// align in whole seconds and nanoseconds: one that is neither a whole
// number of seconds nor a divisor of one (never the case for §8's minute).
func checkWindow(p simulator.RatePolicy, window time.Duration) error {
	if p.Window == simulator.WindowFixedClock && window%time.Second != 0 && time.Second%window != 0 {
		return fmt.Errorf("a fixed-clock window of %v is neither whole seconds nor a divisor of one", window)
	}
	return nil
}

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
	return r.take(ctx, key, now, simulator.RatePolicy{}, r.db.uniqueMember())
}

// TakePolicy implements simulator.PolicyCounter.
func (r *RateCounter) TakePolicy(ctx context.Context, key string, now time.Time, p simulator.RatePolicy) (simulator.RateDecision, error) {
	return r.take(ctx, key, now, p, r.db.uniqueMember())
}

// take is TakePolicy with the call's unique id given, so that a test can
// re-send a call as go-redis's retry does.
func (r *RateCounter) take(ctx context.Context, key string, now time.Time, p simulator.RatePolicy, id string) (simulator.RateDecision, error) {
	if err := checkWindow(p, r.window); err != nil {
		return simulator.RateDecision{}, fmt.Errorf("take rate: %w", err)
	}
	db := r.db
	keys := []string{db.acctKey("rate", key), db.acctReplyKey(key, id)}
	if !db.sharded {
		keys = append(keys, db.key("rate-keys"))
	}
	cutSec, cutNsec := splitDuration(-r.window + time.Nanosecond)
	winSec, winNsec := splitDuration(r.window)
	mode, refused := policyArgs(p)
	res, err := takeScript.Run(ctx, db.client, keys,
		now.Unix(), now.Nanosecond(), cutSec, cutNsec, winSec, winNsec, r.limit, id,
		db.replyTTL.Milliseconds(), mode, refused,
	).Slice()
	if err != nil {
		return simulator.RateDecision{}, fmt.Errorf("take rate: %w", err)
	}
	d, err := decodeDecision(res, now)
	if err != nil {
		return simulator.RateDecision{}, fmt.Errorf("take rate: %w", err)
	}
	return d, nil
}

// decodeDecision reads the {allowed, count, free-at} that luaDecide's
// callers return, for a request decided at now.
func decodeDecision(res []any, now time.Time) (simulator.RateDecision, error) {
	if len(res) < 3 {
		return simulator.RateDecision{}, fmt.Errorf("unexpected reply %v", res)
	}
	allowed, ok1 := asInt(res[0])
	count, ok2 := asInt(res[1])
	if !ok1 || !ok2 {
		return simulator.RateDecision{}, fmt.Errorf("unexpected reply %v", res)
	}
	d := simulator.RateDecision{Allowed: allowed == 1, Count: int(count)}
	free, _ := res[2].(string)
	if d.Allowed && free == "" {
		return d, nil
	}
	t, err := decodeTime(free)
	if err != nil {
		return simulator.RateDecision{}, err
	}
	if d.Allowed {
		d.Reset = time.Duration(t - now.UnixNano())
	} else {
		d.RetryAfter = time.Duration(t - now.UnixNano())
	}
	return d, nil
}

// asInt reads a script's integer, which a reply decoded from its JSON
// copy (cjson) may hold as a number too.
func asInt(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case string:
		i, err := strconv.ParseInt(n, 10, 64)
		return i, err == nil
	}
	return 0, false
}

// Reset implements simulator.RateCounter.
func (r *RateCounter) Reset(ctx context.Context, key string) error {
	db := r.db
	k := db.acctKey("rate", key)
	if db.sharded {
		if err := db.client.Del(ctx, k).Err(); err != nil {
			return fmt.Errorf("reset rate: %w", err)
		}
		return nil
	}
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
	if db.sharded {
		if err := db.deleteAccountKeys(ctx, "rate"); err != nil {
			return fmt.Errorf("reset rates: %w", err)
		}
		return nil
	}
	if err := resetAllScript.Run(ctx, db.client, []string{db.key("rate-keys")}).Err(); err != nil {
		return fmt.Errorf("reset rates: %w", err)
	}
	return nil
}

// Count implements simulator.RateCounter: one ZLEXCOUNT of the members from
// the first time inside the window on, the ones Take would count, at the
// caller's now (the simulator's clock). It trims nothing.
func (r *RateCounter) Count(ctx context.Context, key string, now time.Time) (int, error) {
	return r.CountPolicy(ctx, key, now, simulator.RatePolicy{})
}

// CountPolicy implements simulator.PolicyCounter: the members from the
// start of the window now falls in on, as TakePolicy would count them. A
// fixed-first window costs a second round trip, to read the oldest member
// (not atomic: a report, not a decision).
func (r *RateCounter) CountPolicy(ctx context.Context, key string, now time.Time, p simulator.RatePolicy) (int, error) {
	k := r.db.acctKey("rate", key)
	from := "[" + encodeTime(now.UnixNano()-int64(r.window)+1)
	switch p.Window {
	case simulator.WindowFixedClock:
		from = "[" + encodeTime(simulator.FixedClockStart(now, r.window).UnixNano())
	case simulator.WindowFixedFirst:
		first, err := r.db.client.ZRange(ctx, k, 0, 0).Result()
		if err != nil {
			return 0, fmt.Errorf("count rate: %w", err)
		}
		from = "-"
		if len(first) == 1 {
			at, _, _ := strings.Cut(first[0], ":")
			t, err := decodeTime(at)
			if err != nil {
				return 0, fmt.Errorf("count rate: %w", err)
			}
			if end := t + int64(r.window); now.UnixNano() >= end {
				from = "[" + encodeTime(end)
			}
		}
	}
	n, err := r.db.client.ZLexCount(ctx, k, from, "+").Result()
	if err != nil {
		return 0, fmt.Errorf("count rate: %w", err)
	}
	return int(n), nil
}
