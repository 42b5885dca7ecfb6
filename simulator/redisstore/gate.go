package redisstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/partner-v3/conformance-kit/simulator"
)

var _ simulator.Gate = (*Gate)(nil)

// Gate is simulator.Gate in one Redis round trip: one script reads the
// clock, decides the request on the account's rate counter exactly as
// RateCounter.Take does (same keys, same members), and, for an allowed
// request, takes the pending fault as ControlStore.TakeFault does. It is
// atomic across replicas as a whole.
//
// The script is deterministic: Go passes real time and the random draw.
type Gate struct {
	db     *DB
	limit  int
	window time.Duration
}

// NewGate returns a Gate on db whose rate counter allows limit requests per
// account in any window, sharing its state with NewRateCounter(db, limit,
// window) and NewControlStore(db). It panics unless limit and window are
// positive (programmer error).
func NewGate(db *DB, limit int, window time.Duration) *Gate {
	if limit <= 0 || window <= 0 {
		panic("redisstore: NewGate expects limit > 0 and window > 0")
	}
	return &Gate{db: db, limit: limit, window: window}
}

// admitScript: the clock, the rate decision and the fault, in one script.
// Times are whole seconds and nanoseconds in [0, 1e9) (see clockFields):
// add() keeps that form, enc() writes it as encodeTime does (2^63 plus the
// nanoseconds, in 20 digits), with no number past 2^53.
//
// An allowed call stores its whole reply (the count, the instant, the fault
// taken) as JSON under its reply key, and a re-sent call returns it (see
// DB.Open): the request is counted once and the fault occurrence taken
// once, whatever happened to the clock meanwhile. A refused call changes
// nothing but the trim, so its retry just decides again.
//
// KEYS: clock, the account's rate zset, the set of rate keys, the six fault
// keys, the call's reply key, the account's clock offset. ARGV: real time (sec, nsec), minus the window
// plus 1ns (sec, nsec), limit, the call's unique id (the member's suffix),
// operation, account, draw, the reply key's lifetime in milliseconds.
// Returns {allowed, count, oldest member or "", now sec, now nsec, fault
// JSON or "", fault remaining}.
var admitScript = redis.NewScript(luaTakeFault + `
local done = redis.call('GET', KEYS[10])
if done then
  return cjson.decode(done)
end
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
local c = redis.call('HMGET', KEYS[1], 'offsetSec', 'offsetNsec', 'frozen', 'frozenSec', 'frozenNsec')
local s, n
if c[3] == '1' then
  s, n = tonumber(c[4]), tonumber(c[5])
else
  s, n = add(tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(c[1] or '0'), tonumber(c[2] or '0'))
end
local ao = redis.call('HMGET', KEYS[11], 'offsetSec', 'offsetNsec')
if ao[1] then
  s, n = add(s, n, tonumber(ao[1]), tonumber(ao[2]))
end
local cs, cn = add(s, n, tonumber(ARGV[3]), tonumber(ARGV[4]))
redis.call('ZREMRANGEBYLEX', KEYS[2], '-', '(' .. enc(cs, cn))
local count = redis.call('ZCARD', KEYS[2])
if count >= tonumber(ARGV[5]) then
  return {0, count, redis.call('ZRANGE', KEYS[2], 0, 0)[1], s, n, '', 0}
end
redis.call('ZADD', KEYS[2], 0, enc(s, n) .. ':' .. ARGV[6])
redis.call('SADD', KEYS[3], KEYS[2])
local reply = {1, count + 1, '', s, n, '', 0}
local f = take_fault(4, ARGV[7], ARGV[8], tonumber(ARGV[9]))
if f ~= nil then
  reply[6], reply[7] = f[1], f[2]
end
redis.call('SET', KEYS[10], cjson.encode(reply), 'PX', ARGV[10])
return reply
`)

// Admit implements simulator.Gate.
func (g *Gate) Admit(ctx context.Context, a simulator.Arrival) (simulator.Admission, error) {
	return g.admit(ctx, a, g.db.uniqueMember())
}

// admit is Admit with the call's unique id given, so that a test can
// re-send a call as go-redis's retry does.
func (g *Gate) admit(ctx context.Context, a simulator.Arrival, id string) (simulator.Admission, error) {
	db := g.db
	keys := append([]string{db.key("clock"), db.key("rate", a.AccountID), db.key("rate-keys")}, faultKeys(db)...)
	keys = append(keys, db.replyKey(id), db.accountClockKey(a.AccountID))
	cutSec, cutNsec := splitDuration(-g.window + time.Nanosecond)
	res, err := admitScript.Run(ctx, db.client, keys,
		a.Real.Unix(), a.Real.Nanosecond(), cutSec, cutNsec, g.limit, id,
		a.Operation, a.AccountID, formatFloat(a.Draw), db.replyTTL.Milliseconds(),
	).Slice()
	if err != nil {
		return simulator.Admission{}, fmt.Errorf("admit: %w", err)
	}
	ad, err := g.decode(a, res)
	if err != nil {
		return simulator.Admission{}, fmt.Errorf("admit: %w", err)
	}
	return ad, nil
}

func (g *Gate) decode(a simulator.Arrival, res []any) (simulator.Admission, error) {
	var ad simulator.Admission
	if len(res) != 7 {
		return ad, fmt.Errorf("unexpected reply %v", res)
	}
	allowed, ok1 := res[0].(int64)
	count, ok2 := res[1].(int64)
	sec, ok3 := res[3].(int64)
	nsec, ok4 := res[4].(int64)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return ad, fmt.Errorf("unexpected reply %v", res)
	}
	ad.Now = time.Unix(sec, nsec).In(a.Real.Location())
	ad.Rate = simulator.RateDecision{Allowed: allowed == 1, Count: int(count)}
	if !ad.Rate.Allowed {
		oldest, _ := res[2].(string)
		at, _, _ := strings.Cut(oldest, ":")
		t, err := decodeTime(at)
		if err != nil {
			return ad, err
		}
		ad.Rate.RetryAfter = time.Duration(t + int64(g.window) - ad.Now.UnixNano())
		return ad, nil
	}
	if data, _ := res[5].(string); data != "" {
		f, err := decodeFault(res[5:7])
		if err != nil {
			return ad, err
		}
		ad.Fault = &f
	}
	return ad, nil
}

// replyKey is the key under which the state-changing script called with
// the unique id keeps its reply for a re-sent copy (see DB.Open).
func (db *DB) replyKey(id string) string { return db.key("reply", id) }

// AddHook adds h to the connection pool's hooks, after Open: for tracing,
// or for a test that counts round trips.
func (db *DB) AddHook(h redis.Hook) { db.client.AddHook(h) }
