package redisstore

import (
	"context"
	"fmt"
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

// admitScript: the clock, the rate decision (luaDecide, under the
// request's policy) and the fault, in one script. Times are whole seconds
// and nanoseconds in [0, 1e9) (see clockFields and luaDecide).
//
// A call that counted its request stores its whole reply (the count, the
// instant, the fault taken) as JSON under its reply key, and a re-sent
// call returns it (see DB.Open): the request is counted once and the fault
// occurrence taken once, whatever happened to the clock meanwhile. A call
// that counted nothing changes nothing but the trim, so its retry just
// decides again.
//
// KEYS: clock, the account's rate zset, the set of rate keys, the six fault
// keys, the call's reply key, the account's clock offset. ARGV: real time
// (sec, nsec), minus the window plus 1ns (sec, nsec), limit, the call's
// unique id (the member's suffix), operation, account, draw, the reply
// key's lifetime in milliseconds, the window mode, "1" when refusals
// count, the window (sec, nsec).
// Returns {allowed, count, free-at or "", now sec, now nsec, fault JSON or
// "", fault remaining}.
var admitScript = redis.NewScript(luaTakeFault + luaDecide + `
local done = redis.call('GET', KEYS[10])
if done then
  return cjson.decode(done)
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
local allowed, count, free, added = decide(KEYS[2], s, n, tonumber(ARGV[3]), tonumber(ARGV[4]),
  tonumber(ARGV[13]), tonumber(ARGV[14]), ARGV[11], tonumber(ARGV[5]), ARGV[12], ARGV[6])
local reply = {allowed, count, free, s, n, '', 0}
if added then
  redis.call('SADD', KEYS[3], KEYS[2])
end
if allowed == 1 then
  local f = take_fault(4, ARGV[7], ARGV[8], tonumber(ARGV[9]))
  if f ~= nil then
    reply[6], reply[7] = f[1], f[2]
  end
end
if added then
  redis.call('SET', KEYS[10], cjson.encode(reply), 'PX', ARGV[10])
end
return reply
`)

// Admit implements simulator.Gate, under the arrival's RatePolicy.
func (g *Gate) Admit(ctx context.Context, a simulator.Arrival) (simulator.Admission, error) {
	return g.admit(ctx, a, g.db.uniqueMember())
}

// admit is Admit with the call's unique id given, so that a test can
// re-send a call as go-redis's retry does.
func (g *Gate) admit(ctx context.Context, a simulator.Arrival, id string) (simulator.Admission, error) {
	if err := checkWindow(a.Policy, g.window); err != nil {
		return simulator.Admission{}, fmt.Errorf("admit: %w", err)
	}
	db := g.db
	if db.sharded {
		return g.admitSteps(ctx, a, id)
	}
	keys := append([]string{db.key("clock"), db.acctKey("rate", a.AccountID), db.key("rate-keys")}, faultKeys(db)...)
	keys = append(keys, db.replyKey(id), db.accountClockKey(a.AccountID))
	cutSec, cutNsec := splitDuration(-g.window + time.Nanosecond)
	winSec, winNsec := splitDuration(g.window)
	mode, refused := policyArgs(a.Policy)
	res, err := admitScript.Run(ctx, db.client, keys,
		a.Real.Unix(), a.Real.Nanosecond(), cutSec, cutNsec, g.limit, id,
		a.Operation, a.AccountID, formatFloat(a.Draw), db.replyTTL.Milliseconds(),
		mode, refused, winSec, winNsec,
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
	sec, ok3 := asInt(res[3])
	nsec, ok4 := asInt(res[4])
	if !ok3 || !ok4 {
		return ad, fmt.Errorf("unexpected reply %v", res)
	}
	ad.Now = time.Unix(sec, nsec).In(a.Real.Location())
	var err error
	if ad.Rate, err = decodeDecision(res[:3], ad.Now); err != nil {
		return ad, err
	}
	if !ad.Rate.Allowed {
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
