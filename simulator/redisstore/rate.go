package redisstore

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"sync"
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
	db   *DB
	args rateArgs
}

// NewRateCounter returns a counter that allows limit requests per key in
// any window. It panics unless limit and window are positive (programmer
// error, as chi's Throttle).
func NewRateCounter(db *DB, limit int, window time.Duration) *RateCounter {
	if limit <= 0 || window <= 0 {
		panic("redisstore: NewRateCounter expects limit > 0 and window > 0")
	}
	return &RateCounter{db: db, args: rateArgs{db: db, limit: limit, window: window}}
}

// luaRate is the rate decision of Redis, the twin of inmem.RateCounter's
// (one Lua chunk, composed into every script that counts: takeScript,
// countScript, admitScript and clusterAdmitScript), so that replicas on one
// Redis decide alike whatever profile (simulator.RatePolicy, issue 20) an
// account plays.
//
// Times are whole seconds and nanoseconds in [0, 1e9): add() keeps that
// form, enc() writes it as encodeTime does (2^63 plus the nanoseconds, in
// 20 digits), dec() reads a member's time back, with no number past 2^53.
//
// rate_window(key, mode, s, n, ws, wn) is the window rule, the one place
// that knows the window modes (inmem's counted is its Go twin): for the
// request at (s, n), with the window (ws, wn), it returns from, the
// encoded instant from which counted members still count, and free, the
// encoded instant a fixed window ends and frees all its slots (” for the
// sliding window, whose slots free one by one). It changes nothing.
//
//   - sliding: from a window before now, exclusive (t > now-window).
//   - fixed-clock: from the window's start, the greatest multiple of the
//     window since the epoch (the window is a whole number of seconds or
//     divides one: checkWindow); free at its end.
//   - fixed-first: from the oldest member, which opened the window; once
//     that window has ended, from its end, and the next request opens
//     another (free at the end of whichever window is open).
//
// decide(key, s, n, ws, wn, limit, mode, refused, id) drops the members
// before from, counts the rest and adds the request (member "<time>:<id>")
// if fewer than limit were counted, or if refused is "1". Returns allowed
// (0 or 1), the count, the instant a slot frees (encoded; for a sliding
// window when the member limit places before the newest leaves; ” when
// allowed under it) and whether a member was added.
//
// Members after now (the control API set the clock back) still count: the
// counter never lets more through than a monotonic clock would.
//
// Every script that counts reads one argument layout, through
// rate_decide and rate_count (the Go side: rateArgs):
//
//	KEYS[1]  the key's rate zset
//	KEYS[2]  the call's reply key (not countScript's)
//	ARGV[1], ARGV[2]  the time (sec, nsec): the decision's (takeScript,
//	         countScript), or the real time the admit scripts apply the
//	         clock to (luaAdmit)
//	ARGV[3], ARGV[4]  the window (sec, nsec)
//	ARGV[5]  the limit
//	ARGV[6]  the window mode, ARGV[7] "1" when refusals count
//	ARGV[8]  the call's unique id, ARGV[9] the reply key's lifetime in ms
//
// then each script's own KEYS and ARGV (luaAdmit adds the admit scripts'
// shared KEYS[3] and KEYS[4]).
//
// Constant arguments of redis.call are strings ('0', not 0): Redis writes
// a Lua number it is given with snprintf("%.17g"), the floating-point
// printer, on every call (callgrind, issue 21); a literal string costs
// nothing. The same holds in luaTakeFault.
const luaRate = `
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
local function rate_window(key, mode, s, n, ws, wn)
  if mode == 'fixed-clock' then
    local ss, sn = s - s % ws, 0
    if ws == 0 then
      ss, sn = s, n - n % wn
    end
    return enc(ss, sn), enc(add(ss, sn, ws, wn))
  elseif mode == 'fixed-first' then
    local first = redis.call('ZRANGE', key, '0', '0')[1]
    if not first then
      return enc(s, n), enc(add(s, n, ws, wn))
    end
    local fs, fn = dec(first)
    local e = enc(add(fs, fn, ws, wn))
    if enc(s, n) < e then
      return enc(fs, fn), e
    end
    local nxt = redis.call('ZRANGEBYLEX', key, '[' .. e, '+', 'LIMIT', '0', '1')[1]
    if nxt then
      fs, fn = dec(nxt)
    else
      fs, fn = s, n
    end
    return e, enc(add(fs, fn, ws, wn))
  end
  local cs, cn = -ws, 1 - wn
  if cn < 0 then
    cs, cn = cs - 1, cn + 1e9
  end
  return enc(add(s, n, cs, cn)), ''
end
local function decide(key, s, n, ws, wn, limit, mode, refused, id)
  local now = enc(s, n)
  local from, free = rate_window(key, mode, s, n, ws, wn)
  redis.call('ZREMRANGEBYLEX', key, '-', '(' .. from)
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
  if free == '' then
    local m = redis.call('ZRANGE', key, count - limit, count - limit)[1]
    local fs, fn = dec(m)
    free = enc(add(fs, fn, ws, wn))
  end
  return 0, count, free, added
end
local function rate_decide(s, n)
  return decide(KEYS[1], s, n, tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6], ARGV[7], ARGV[8])
end
local function rate_count(s, n)
  local from = rate_window(KEYS[1], ARGV[6], s, n, tonumber(ARGV[3]), tonumber(ARGV[4]))
  return redis.call('ZLEXCOUNT', KEYS[1], '[' .. from, '+')
end
`

// takeScript is RateCounter.TakePolicy: the whole decision (luaRate),
// atomic across processes. A refused request adds nothing unless the
// policy counts refusals.
//
// A re-sent call (go-redis retries once when a reply is lost) is answered
// from the reply key that a call which added a member leaves (see
// DB.Open), so a request is counted once. A call that added nothing
// changes nothing but the trim, so its retry just decides again.
//
// KEYS and ARGV: luaRate's layout, then, but on a sharded cluster (where
// ResetAll finds the rate keys by their names), KEYS[3] the set of rate
// keys. Returns {allowed, count, free-at or ""}.
var takeScript = redis.NewScript(luaRate + `
local done = redis.call('GET', KEYS[2])
if done then
  return cjson.decode(done)
end
local allowed, count, free, added = rate_decide(tonumber(ARGV[1]), tonumber(ARGV[2]))
local reply = {allowed, count, free}
if added then
  if KEYS[3] then
    redis.call('SADD', KEYS[3], KEYS[1])
  end
  redis.call('SET', KEYS[2], cjson.encode(reply), 'PX', ARGV[9])
end
return reply
`)

// countScript is RateCounter.CountPolicy: the members luaRate's window
// counts at the time given, changing nothing. KEYS and ARGV: luaRate's
// layout (KEYS[1] alone; the id and the reply key's lifetime unread).
var countScript = redis.NewScript(luaRate + `
return rate_count(tonumber(ARGV[1]), tonumber(ARGV[2]))
`)

// rateArgs builds the ARGV of luaRate's layout for a counter of limit
// requests per window: what every call sends alike is boxed once, at the
// first call (after DB.Open has fixed the reply keys' lifetime), rather
// than per request (issue 21).
type rateArgs struct {
	db     *DB
	limit  int
	window time.Duration

	once  sync.Once
	fixed [4]any // the window (sec, nsec), the limit, the reply key's lifetime
}

// argv returns luaRate's ARGV for a call at t (sec, nsec) under p with the
// unique id, with room for extra arguments of the script's own.
func (r *rateArgs) argv(t time.Time, p simulator.RatePolicy, id string, extra int) []any {
	r.once.Do(func() {
		sec, nsec := splitDuration(r.window)
		r.fixed = [4]any{sec, nsec, r.limit, r.db.replyTTL.Milliseconds()}
	})
	refused := "0"
	if p.CountsRefused {
		refused = "1"
	}
	mode := cmp.Or(p.Window, simulator.WindowSliding)
	f := &r.fixed
	args := make([]any, 0, 9+extra)
	return append(args, t.Unix(), t.Nanosecond(), f[0], f[1], f[2], mode, refused, id, f[3])
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
	if err := checkWindow(p, r.args.window); err != nil {
		return simulator.RateDecision{}, fmt.Errorf("take rate: %w", err)
	}
	db := r.db
	keys := []string{db.acctKey("rate", key), db.acctReplyKey(key, id)}
	if !db.sharded {
		keys = append(keys, db.key("rate-keys"))
	}
	res, err := takeScript.Run(ctx, db.client, keys, r.args.argv(now, p, id, 0)...).Slice()
	if err != nil {
		return simulator.RateDecision{}, fmt.Errorf("take rate: %w", err)
	}
	d, err := decodeDecision(res, now)
	if err != nil {
		return simulator.RateDecision{}, fmt.Errorf("take rate: %w", err)
	}
	return d, nil
}

// decodeDecision reads the {allowed, count, free-at} that luaRate's
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

// Count implements simulator.RateCounter: the requests Take would count
// at the caller's now (the simulator's clock). It trims nothing.
func (r *RateCounter) Count(ctx context.Context, key string, now time.Time) (int, error) {
	return r.CountPolicy(ctx, key, now, simulator.RatePolicy{})
}

// CountPolicy implements simulator.PolicyCounter: one script (countScript)
// counts the members from the start of the window now falls in, as
// TakePolicy would count them, under luaRate's window rule.
func (r *RateCounter) CountPolicy(ctx context.Context, key string, now time.Time, p simulator.RatePolicy) (int, error) {
	if err := checkWindow(p, r.args.window); err != nil {
		return 0, fmt.Errorf("count rate: %w", err)
	}
	n, err := countScript.Run(ctx, r.db.client, []string{r.db.acctKey("rate", key)}, r.args.argv(now, p, "", 0)...).Int()
	if err != nil {
		return 0, fmt.Errorf("count rate: %w", err)
	}
	return n, nil
}
