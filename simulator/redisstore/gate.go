package redisstore

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/partner-v3/conformance-kit/simulator"
)

var _ simulator.Gate = (*Gate)(nil)

// Gate is simulator.Gate in one Redis round trip: one script reads the
// clock, decides the request on the account's rate counter exactly as
// RateCounter.Take does (same keys, same members), and, for an allowed
// request, takes the pending fault as ControlStore.TakeFault does. On one
// Redis it is atomic across replicas as a whole. On a sharded cluster
// (gate_cluster.go) it is still one round trip in the common case, from
// the account's mirror of the clock and faults flag, and goes to the
// global slot only to take a pending fault or to fill a missing mirror.
//
// The script is deterministic: Go passes real time and the random draw.
type Gate struct {
	db     *DB
	limit  int
	window time.Duration

	// fixed holds what every standalone admission sends alike, built at
	// the first (after DB.Open has fixed the key prefix): the clock, the
	// set of rate keys and the six fault keys, then the window's ARGV.
	// Built once rather than per request: eight key concatenations and
	// six boxed integers a request less (issue 21).
	once  sync.Once
	fixed struct {
		clock, rateKeys string
		faults          []string
		cutSec, cutNsec any
		winSec, winNsec any
		limit, ttl      any
	}
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

// luaAdmitReply reads back the reply admitScript keeps under a call's
// reply key: "allowed count sec nsec remaining free fault", the fault's
// JSON last since it may hold spaces. A plain string and not cjson (issue
// 21): cjson writes each of the five numbers with snprintf("%.14g"), a
// tenth of the script's CPU in Redis (callgrind); string.format's %d does
// not go through the floating-point printer.
const luaAdmitReply = `
local function decode_reply(r)
  local a, c, s, n, left, free, fault = string.match(r, '^(%d) (%d+) (%-?%d+) (%d+) (%-?%d+) (%d*) (.*)$')
  return {tonumber(a), tonumber(c), free, tonumber(s), tonumber(n), fault, tonumber(left)}
end
`

// admitScript: the clock, the rate decision (luaDecide, under the
// request's policy) and the fault, in one script. Times are whole seconds
// and nanoseconds in [0, 1e9) (see clockFields and luaDecide).
//
// A call that counted its request stores its whole reply (the count, the
// instant, the fault taken) under its reply key (luaAdmitReply), and a re-sent
// call returns it (see DB.Open): the request is counted once and the fault
// occurrence taken once, whatever happened to the clock meanwhile. A call
// that counted nothing changes nothing but the trim, so its retry just
// decides again. The account's zset joins the set of rate keys (for
// ResetAll) only when this call created it (count 1): every writer of a
// rate zset names it there when it creates it, and Reset drops both at
// once, so a zset that existed is already named (an SADD a request saved).
//
// KEYS: clock, the account's rate zset, the set of rate keys, the six fault
// keys, the call's reply key, the account's clock offset. ARGV: real time
// (sec, nsec), minus the window plus 1ns (sec, nsec), limit, the call's
// unique id (the member's suffix), operation, account, draw, the reply
// key's lifetime in milliseconds, the window mode, "1" when refusals
// count, the window (sec, nsec).
// Returns {allowed, count, free-at or "", now sec, now nsec, fault JSON or
// "", fault remaining}.
var admitScript = redis.NewScript(luaTakeFault + luaDecide + luaAdmitReply + `
local done = redis.call('GET', KEYS[10])
if done then
  return decode_reply(done)
end
local c = redis.call('HMGET', KEYS[1], 'offsetSec', 'offsetNsec', 'frozen', 'frozenSec', 'frozenNsec')
local s, n
if c[3] == '1' then
  s, n = tonumber(c[4]), tonumber(c[5])
elseif c[1] or c[2] then
  s, n = add(tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(c[1] or '0'), tonumber(c[2] or '0'))
else
  s, n = tonumber(ARGV[1]), tonumber(ARGV[2])
end
local ao = redis.call('HMGET', KEYS[11], 'offsetSec', 'offsetNsec')
if ao[1] then
  s, n = add(s, n, tonumber(ao[1]), tonumber(ao[2]))
end
local allowed, count, free, added = decide(KEYS[2], s, n, tonumber(ARGV[3]), tonumber(ARGV[4]),
  tonumber(ARGV[13]), tonumber(ARGV[14]), ARGV[11], tonumber(ARGV[5]), ARGV[12], ARGV[6])
local reply = {allowed, count, free, s, n, '', 0}
if added and count == 1 then
  redis.call('SADD', KEYS[3], KEYS[2])
end
if allowed == 1 then
  local f = take_fault(4, ARGV[7], ARGV[8], ARGV[9])
  if f ~= nil then
    reply[6], reply[7] = f[1] or '', f[2]
  end
end
if added then
  redis.call('SET', KEYS[10], string.format('%d %d %d %d %d %s %s', allowed, count, s, n, reply[7], free, reply[6]), 'PX', ARGV[10])
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
	g.once.Do(g.fix)
	f := &g.fixed
	keys := make([]string, 0, 11)
	keys = append(keys, f.clock, db.acctKey("rate", a.AccountID), f.rateKeys)
	keys = append(keys, f.faults...)
	keys = append(keys, db.replyKey(id), db.accountClockKey(a.AccountID))
	mode, refused := policyArgs(a.Policy)
	res, err := admitScript.Run(ctx, db.client, keys,
		a.Real.Unix(), a.Real.Nanosecond(), f.cutSec, f.cutNsec, f.limit, id,
		a.Operation, a.AccountID, formatFloat(a.Draw), f.ttl,
		mode, refused, f.winSec, f.winNsec,
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

// fix fills g.fixed (see Gate).
func (g *Gate) fix() {
	db, f := g.db, &g.fixed
	f.clock, f.rateKeys, f.faults = db.key("clock"), db.key("rate-keys"), faultKeys(db)
	cutSec, cutNsec := splitDuration(-g.window + time.Nanosecond)
	winSec, winNsec := splitDuration(g.window)
	f.cutSec, f.cutNsec, f.winSec, f.winNsec = cutSec, cutNsec, winSec, winNsec
	f.limit, f.ttl = g.limit, db.replyTTL.Milliseconds()
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
