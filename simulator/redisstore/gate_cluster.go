package redisstore

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/partner-v3/conformance-kit/simulator"
)

// The Gate on a sharded cluster (issue 21). The clock and the faults are
// global keys (slot {P}) while an account's counter is in its own slot
// ({a:<account>}), so no one script may read them all. To keep the common
// request at one round trip, as on one Redis, each account's slot holds a
// MIRROR of what the Gate needs of the global state, P{a:<account>}global
// (a hash): the version v, the clock's fields (as the global clock hash,
// "0" for an absent one) and faults ("1" when faults may be pending). The
// Gate then decides on the account's slot alone and goes to the global
// slot only to take a fault the mirror says may be pending.
//
// The mirror is kept by write-through with versions:
//
//   - P{P}gate-version, V, is bumped by every change of what a mirror
//     holds (SetClock, AddFault, DeleteFault, ClearFaults, ResetControl):
//     V = max(V+1, Redis TIME in µs), so it never goes back even when the
//     global master comes back empty.
//   - P{P}mirrored is the set of accounts that have a mirror. After each
//     change, publishScript (atomic in the global slot) bumps V, reads the
//     clock and whether faults are pending and returns them with the
//     set's members; Go writes each member's mirror (pipelined) with
//     luaMirrorSet, which writes only a version newer than the mirror's.
//     The change returns only after that, so the next request on any
//     replica sees it.
//   - An account without a mirror (its first request, a mirror expired or
//     lost with its master) takes fillScript in the global slot, which
//     reads the same state and V AND adds the account to P{P}mirrored in
//     one script, then the account's script writes the mirror (if newer)
//     and decides in the same call.
//
// The races, argued:
//
//   - A fill that read V_old writes its mirror after a change pushed
//     V_new: the write is "if newer", so V_new stays.
//   - A change's publishScript and a fill's script are each atomic in the
//     global slot, so one runs first. Publish first: the fill reads the
//     changed state (and V_new). Fill first: the account is in
//     P{P}mirrored when publish reads it, so the change is pushed to it.
//   - Two changes: each publish reads the state as it is at its own V, so
//     the greatest V carries the latest state whichever push lands last.
//   - The flag faults is cleared only by clearFlagScript, "faults=0 only
//     if the mirror's v is still the V the take saw when it found no fault
//     pending": a fault added after that take bumped V (and pushes
//     faults=1), so a stale clear never hides it.
//
// A change is its own command (as on one Redis) followed by publishScript:
// a replica that stops between the two leaves the mirrors behind until the
// next change or until they expire (mirrorTTL), as a replica that stopped
// between publishing and pushing would.

// mirrorTTL is how long a mirror lives after its last write. It bounds
// how long a mirror may show a state that the global slot no longer holds
// when nothing pushes to it: when the global master came back empty (the
// set of mirrored accounts lost with it), a clock set or fault added then
// reaches an account with an old mirror only once that mirror expires and
// the account fills it again. It costs an active account two extra round
// trips (the fill) per mirrorTTL.
const mirrorTTL = time.Minute

// mirrorKey is the account's mirror of the global state the Gate needs.
func (db *DB) mirrorKey(account string) string { return db.acctKey("global", account) }

// luaGlobalState reads the state a mirror holds, in mirrorFields order
// after v: the clock's fields ("0" when absent: real time) and "1" when
// faults are pending. bump makes a new V first. KEYS: V, clock, faults.
const luaGlobalState = `
local function global_state(bump)
  local v = redis.call('GET', KEYS[1]) or '0'
  if bump then
    local t = redis.call('TIME')
    local nv = math.max(tonumber(v) + 1, tonumber(t[1]) * 1000000 + tonumber(t[2]))
    v = string.format('%.0f', nv)
    redis.call('SET', KEYS[1], v)
  end
  local out = {v}
  local c = redis.call('HMGET', KEYS[2], 'offsetSec', 'offsetNsec', 'frozen', 'frozenSec', 'frozenNsec')
  for i = 1, 5 do
    out[i + 1] = c[i] or '0'
  end
  out[7] = '0'
  if redis.call('LLEN', KEYS[3]) > 0 then
    out[7] = '1'
  end
  return out
end
`

// mirrorFields are the mirror's fields, in the order the scripts pass and
// return them.
var mirrorFields = append(append([]string{"v"}, clockFields...), "faults")

// publishScript bumps V and returns the state with every mirrored
// account. KEYS: V, clock, faults, the set of mirrored accounts.
// Returns {v, the clock's five fields, faults flag, account...}.
var publishScript = redis.NewScript(luaGlobalState + `
local out = global_state(true)
for _, a in ipairs(redis.call('SMEMBERS', KEYS[4])) do
  table.insert(out, a)
end
return out
`)

// fillScript adds the account to the mirrored ones and returns the state
// (atomically: any later change pushes to it). KEYS: V, clock, faults,
// the set of mirrored accounts. ARGV: the account.
// Returns {v, the clock's five fields, faults flag}.
var fillScript = redis.NewScript(luaGlobalState + `
redis.call('SADD', KEYS[4], ARGV[1])
return global_state(false)
`)

// luaMirrorSet writes the mirror at key k from m (mirrorFields order) if
// m's version is newer than the mirror's, and then (re)sets its lifetime
// to ttl ms. Returns 1 if it wrote.
const luaMirrorSet = `
local function mirror_set(k, m, ttl)
  local cur = redis.call('HGET', k, 'v')
  if cur and tonumber(cur) >= tonumber(m[1]) then
    return 0
  end
  redis.call('HSET', k, 'v', m[1], 'offsetSec', m[2], 'offsetNsec', m[3], 'frozen', m[4],
    'frozenSec', m[5], 'frozenNsec', m[6], 'faults', m[7])
  redis.call('PEXPIRE', k, ttl)
  return 1
end
`

// mirrorSetScript is luaMirrorSet for a push. KEYS: the mirror. ARGV:
// mirrorFields, the lifetime in ms.
var mirrorSetScript = redis.NewScript(luaMirrorSet + `
return mirror_set(KEYS[1], ARGV, ARGV[8])
`)

// clusterAdmitScript decides a request on the account's slot alone, from
// its mirror: the clock as admitScript computes it (luaAdmit, from the
// mirror's copy of the global clock hash), then luaRate exactly as
// takeScript (same reply key idempotence: a call that counted its request
// keeps its whole reply, the mirror's faults flag and v included).
//
// KEYS and ARGV: luaAdmit's layout (KEYS[4] the account's mirror), then
// ARGV[10] the mirror's lifetime in ms and (after a fill) ARGV[11..17] the
// mirror's fields to write if newer.
// Returns 0 when there is no mirror (nothing decided), else {allowed,
// count, free-at or "", now sec, now nsec, faults flag, v}.
var clusterAdmitScript = redis.NewScript(luaRate + luaAdmit + luaMirrorSet + `
local done = redis.call('GET', KEYS[2])
if done then
  return cjson.decode(done)
end
if #ARGV >= 17 then
  mirror_set(KEYS[4], {ARGV[11], ARGV[12], ARGV[13], ARGV[14], ARGV[15], ARGV[16], ARGV[17]}, ARGV[10])
end
local c = admit_clock('v', 'faults')
if not c[6] then
  return 0
end
local s, n = admit_now(c)
local allowed, count, free, added = rate_decide(s, n)
local reply = {allowed, count, free, s, n, c[7], c[6]}
if added then
  redis.call('SET', KEYS[2], cjson.encode(reply), 'PX', ARGV[9])
end
return reply
`)

// gateTakeFaultScript is takeFaultScript for the Gate: it also returns V
// and the number of faults left pending, so that the Gate can clear its
// mirror's flag when none is. KEYS: the fault keys, the call's reply key,
// V. ARGV: operation, account, draw, the reply key's lifetime in ms.
// Returns {JSON or "", remaining, V, faults pending}.
var gateTakeFaultScript = redis.NewScript(luaTakeFault + `
local done = redis.call('GET', KEYS[7])
if done then
  return cjson.decode(done)
end
local reply = {'', 0, redis.call('GET', KEYS[8]) or '0', 0}
local taken = take_fault(1, ARGV[1], ARGV[2], tonumber(ARGV[3]))
reply[4] = redis.call('LLEN', KEYS[1])
if taken ~= nil then
  reply[1], reply[2] = taken[1], taken[2]
  redis.call('SET', KEYS[7], cjson.encode(reply), 'PX', ARGV[4])
end
return reply
`)

// clearFlagScript sets the mirror's faults to "0" only if its version is
// still v, the V a take saw with no fault pending. KEYS: the mirror.
// ARGV: v.
var clearFlagScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'v') == ARGV[1] then
  redis.call('HSET', KEYS[1], 'faults', '0')
  return 1
end
return 0
`)

// globalStateKeys are the KEYS of publishScript and fillScript.
func (db *DB) globalStateKeys() []string {
	return []string{db.key("gate-version"), db.key("clock"), db.key("faults"), db.key("mirrored")}
}

// admitSteps is Admit on a sharded cluster, where the clock and faults
// (global keys) and the account's counter live in two slots:
//
//  1. clusterAdmitScript on the account's slot decides the request from
//     the account's mirror of the global state (one round trip: the
//     common case);
//  2. only without a mirror: fillScript on the global slot, then step 1
//     again with the state to write;
//  3. only if the request was allowed and the mirror says faults may be
//     pending, take one (gateTakeFaultScript, as ControlStore.TakeFault:
//     a refused request takes none) and, if none is left pending, clear
//     the mirror's flag (clearFlagScript).
//
// Steps 1 and 3 keep their replies under reply keys of their own slots
// (the call's id plus a suffix), so a re-sent step applies once. A clock
// set or fault added through any replica has reached every mirror when
// the change returns (see publishScript), so the next request sees it.
// Round trips: one; three for an account's first request; two for an
// allowed request while a fault is pending (three when it takes the last).
func (g *Gate) admitSteps(ctx context.Context, a simulator.Arrival, id string) (simulator.Admission, error) {
	res, err := g.admitMirrored(ctx, a, id, nil)
	if err != nil {
		return simulator.Admission{}, fmt.Errorf("admit: %w", err)
	}
	if res == nil {
		fill, err := fillScript.Run(ctx, g.db.client, g.db.globalStateKeys(), a.AccountID).StringSlice()
		if err != nil {
			return simulator.Admission{}, fmt.Errorf("admit: fill mirror: %w", err)
		}
		if len(fill) != len(mirrorFields) {
			return simulator.Admission{}, fmt.Errorf("admit: fill mirror: unexpected reply %v", fill)
		}
		if res, err = g.admitMirrored(ctx, a, id, fill); err != nil {
			return simulator.Admission{}, fmt.Errorf("admit: %w", err)
		}
		if res == nil {
			return simulator.Admission{}, fmt.Errorf("admit: no mirror after filling it")
		}
	}
	ad, err := g.decode(a, append(res[:5:5], "", int64(0)))
	if err != nil {
		return simulator.Admission{}, fmt.Errorf("admit: %w", err)
	}
	if flag, _ := res[5].(string); !ad.Rate.Allowed || flag != "1" {
		return ad, nil
	}
	if ad.Fault, err = g.takeFault(ctx, a, id+"f"); err != nil {
		return simulator.Admission{}, fmt.Errorf("admit: %w", err)
	}
	return ad, nil
}

// admitMirrored runs clusterAdmitScript, with the mirror's fields to
// write first when fill is not nil. It returns nil when the account has no
// mirror.
func (g *Gate) admitMirrored(ctx context.Context, a simulator.Arrival, id string, fill []string) ([]any, error) {
	db := g.db
	keys := []string{db.acctKey("rate", a.AccountID), db.acctReplyKey(a.AccountID, id+"r"), db.accountClockKey(a.AccountID),
		db.mirrorKey(a.AccountID)}
	args := append(g.args.argv(a.Real, a.Policy, id, 1+len(fill)), mirrorTTL.Milliseconds())
	for _, f := range fill {
		args = append(args, f)
	}
	v, err := clusterAdmitScript.Run(ctx, db.client, keys, args...).Result()
	if err != nil {
		return nil, err
	}
	switch v := v.(type) {
	case int64:
		return nil, nil // no mirror
	case []any:
		if len(v) != 7 {
			return nil, fmt.Errorf("unexpected reply %v", v)
		}
		return v, nil
	}
	return nil, fmt.Errorf("unexpected reply %v", v)
}

// takeFault takes the pending fault that applies to the request and, when
// no fault at all is left pending, clears the flag of the account's
// mirror if no change came meanwhile (clearFlagScript).
func (g *Gate) takeFault(ctx context.Context, a simulator.Arrival, id string) (*simulator.Fault, error) {
	db := g.db
	res, err := gateTakeFaultScript.Run(ctx, db.client, append(faultKeys(db), db.replyKey(id), db.key("gate-version")),
		a.Operation, a.AccountID, formatFloat(a.Draw), db.replyTTL.Milliseconds()).Slice()
	if err != nil {
		return nil, fmt.Errorf("take fault: %w", err)
	}
	if len(res) != 4 {
		return nil, fmt.Errorf("take fault: unexpected reply %v", res)
	}
	var f *simulator.Fault
	if data, _ := res[0].(string); data != "" {
		taken, err := decodeFault(res[:2])
		if err != nil {
			return nil, fmt.Errorf("take fault: %w", err)
		}
		f = &taken
	}
	if pending, ok := asInt(res[3]); ok && pending == 0 {
		v, _ := res[2].(string)
		if err := clearFlagScript.Run(ctx, db.client, []string{db.mirrorKey(a.AccountID)}, v).Err(); err != nil {
			return nil, fmt.Errorf("clear faults flag: %w", err)
		}
	}
	return f, nil
}

// publishGate pushes the global state the Gate mirrors to every mirrored
// account after a change of it, on a sharded cluster (see publishScript);
// elsewhere it does nothing: the Gate reads the global keys itself.
func (db *DB) publishGate(ctx context.Context) error {
	if !db.sharded {
		return nil
	}
	res, err := publishScript.Run(ctx, db.client, db.globalStateKeys()).StringSlice()
	if err != nil {
		return fmt.Errorf("publish gate state: %w", err)
	}
	if len(res) < len(mirrorFields) {
		return fmt.Errorf("publish gate state: unexpected reply %v", res)
	}
	args := make([]any, 0, len(mirrorFields)+1)
	for _, f := range res[:len(mirrorFields)] {
		args = append(args, f)
	}
	args = append(args, mirrorTTL.Milliseconds())
	// Batches bound a pipeline's memory when many accounts are mirrored.
	accounts := res[len(mirrorFields):]
	for len(accounts) > 0 {
		n := min(len(accounts), 1000)
		if err := db.pushMirrors(ctx, accounts[:n], args); err != nil {
			return fmt.Errorf("publish gate state: %w", err)
		}
		accounts = accounts[n:]
	}
	return nil
}

// pushMirrors writes args to the accounts' mirrors in one pipeline. A
// pipelined EVALSHA cannot fall back to EVAL as Script.Run does, so a
// master that lacks the script gets it sent again, one by one.
func (db *DB) pushMirrors(ctx context.Context, accounts []string, args []any) error {
	cmds := make([]*redis.Cmd, len(accounts))
	_, err := db.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, acct := range accounts {
			cmds[i] = mirrorSetScript.EvalSha(ctx, p, []string{db.mirrorKey(acct)}, args...)
		}
		return nil
	})
	if err == nil {
		return nil
	}
	for i, cmd := range cmds {
		if err := cmd.Err(); err == nil {
			continue
		} else if !redis.HasErrorPrefix(err, "NOSCRIPT") {
			return err
		}
		if err := mirrorSetScript.Run(ctx, db.client, []string{db.mirrorKey(accounts[i])}, args...).Err(); err != nil {
			return err
		}
	}
	return nil
}
