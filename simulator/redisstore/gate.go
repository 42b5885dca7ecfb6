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
	db   *DB
	args rateArgs

	// fixed holds the keys every standalone admission sends alike, built
	// at the first (after DB.Open has fixed the key prefix): the clock,
	// the set of rate keys and the six fault keys. Built once rather
	// than per request: eight key concatenations a request less (issue
	// 21); rateArgs does the same for the window's ARGV.
	once  sync.Once
	fixed struct {
		clock, rateKeys string
		faults          []string
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
	return &Gate{db: db, args: rateArgs{db: db, limit: limit, window: window}}
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

// luaAdmit is what the two admit scripts share (admitScript on one Redis,
// clusterAdmitScript on a sharded cluster), composed after luaRate: one
// argument layout and one way from the clock to the decision.
//
// The layout is luaRate's (ARGV[1], ARGV[2] the real time) with two keys
// more: KEYS[3] the account's clock offset and KEYS[4] the clock hash the
// script applies (the global clock on one Redis, the account's mirror of
// it on a sharded cluster). Each script's own KEYS and ARGV follow.
//
// admit_clock(...) reads KEYS[4]'s clock fields (clockFields order) and
// then the named fields; admit_now(c) is the request's simulator time:
// the real time under that clock (frozen, or moved by its offset; absent,
// or "0" fields in a mirror, is real time), plus the account's offset.
const luaAdmit = `
local function admit_clock(...)
  return redis.call('HMGET', KEYS[4], 'offsetSec', 'offsetNsec', 'frozen', 'frozenSec', 'frozenNsec', ...)
end
local function admit_now(c)
  local s, n
  if c[3] == '1' then
    s, n = tonumber(c[4]), tonumber(c[5])
  elseif c[1] or c[2] then
    s, n = add(tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(c[1] or '0'), tonumber(c[2] or '0'))
  else
    s, n = tonumber(ARGV[1]), tonumber(ARGV[2])
  end
  local ao = redis.call('HMGET', KEYS[3], 'offsetSec', 'offsetNsec')
  if ao[1] then
    s, n = add(s, n, tonumber(ao[1]), tonumber(ao[2]))
  end
  return s, n
end
`

// admitScript: the clock, the rate decision (luaRate, under the
// request's policy) and the fault, in one script. Times are whole seconds
// and nanoseconds in [0, 1e9) (see clockFields and luaRate).
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
// KEYS and ARGV: luaAdmit's layout (KEYS[4] the global clock), then KEYS[5]
// the set of rate keys, KEYS[6..11] the six fault keys; ARGV[10]
// operation, ARGV[11] account, ARGV[12] draw.
// Returns {allowed, count, free-at or "", now sec, now nsec, fault JSON or
// "", fault remaining}.
var admitScript = redis.NewScript(luaTakeFault + luaRate + luaAdmit + luaAdmitReply + `
local done = redis.call('GET', KEYS[2])
if done then
  return decode_reply(done)
end
local s, n = admit_now(admit_clock())
local allowed, count, free, added = rate_decide(s, n)
local reply = {allowed, count, free, s, n, '', 0}
if added and count == 1 then
  redis.call('SADD', KEYS[5], KEYS[1])
end
if allowed == 1 then
  local f = take_fault(6, ARGV[10], ARGV[11], ARGV[12])
  if f ~= nil then
    reply[6], reply[7] = f[1] or '', f[2]
  end
end
if added then
  redis.call('SET', KEYS[2], string.format('%d %d %d %d %d %s %s', allowed, count, s, n, reply[7], free, reply[6]), 'PX', ARGV[9])
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
	if err := checkWindow(a.Policy, g.args.window); err != nil {
		return simulator.Admission{}, fmt.Errorf("admit: %w", err)
	}
	db := g.db
	if db.sharded {
		return g.admitSteps(ctx, a, id)
	}
	g.once.Do(g.fix)
	f := &g.fixed
	keys := make([]string, 0, 11)
	keys = append(keys, db.acctKey("rate", a.AccountID), db.replyKey(id), db.accountClockKey(a.AccountID), f.clock, f.rateKeys)
	keys = append(keys, f.faults...)
	args := append(g.args.argv(a.Real, a.Policy, id, 3), a.Operation, a.AccountID, formatFloat(a.Draw))
	res, err := admitScript.Run(ctx, db.client, keys, args...).Slice()
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
