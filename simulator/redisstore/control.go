package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/partner-v3/conformance-kit/simulator"
)

var _ simulator.ControlStore = (*ControlStore)(nil)

// ControlStore keeps the control API's clock and faults in Redis, so that a
// clock set or a fault injected through one replica applies to all.
type ControlStore struct {
	db *DB
}

// NewControlStore returns a ControlStore on db.
func NewControlStore(db *DB) *ControlStore {
	return &ControlStore{db: db}
}

// The fault scripts take the six fault keys first (faultKeys): the list of
// ids oldest first, then hashes from id to the Fault's JSON, its operation,
// its remaining occurrences, its account ("" for all) and its probability.
// The operation, account and probability are copies of the JSON's, so the
// scripts match without decoding JSON.

// The scripts that change faults keep their reply under the call's reply
// key (KEYS[7]) and a re-sent call returns it (see DB.Open): a retried add
// does not restore occurrences taken since, or move the fault behind
// younger ones; a retried take does not take a second occurrence; a
// retried delete answers the fault it deleted, not "No fault".

// addFaultScript appends a fault (replacing one with the same id).
//
// KEYS: the fault keys, the call's reply key. ARGV: id, JSON, operation,
// remaining, account, probability, the reply key's lifetime in ms.
var addFaultScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[7]) == 1 then
  return 1
end
redis.call('LREM', KEYS[1], 0, ARGV[1])
redis.call('RPUSH', KEYS[1], ARGV[1])
for i = 2, 6 do
  redis.call('HSET', KEYS[i], ARGV[1], ARGV[i])
end
redis.call('SET', KEYS[7], 1, 'PX', ARGV[7])
return 1
`)

// luaTakeFault is the Lua of ControlStore.TakeFault, shared by its script
// and the Gate's: it walks the faults oldest first and takes one
// occurrence of the first that applies to op and acct and hits, carrying
// the draw u from one fault to the next exactly as simulator.Fault.Hits
// does (the same IEEE double arithmetic). k is the first fault key's index
// in KEYS; u may be the draw's string, read only when a fault is pending
// (issue 21: a strtod a request saved). Returns {JSON, remaining after
// this one}, or nil.
const luaTakeFault = `
local function take_fault(k, op, acct, u)
  for _, id in ipairs(redis.call('LRANGE', KEYS[k], '0', '-1')) do
    u = tonumber(u)
    local fop = redis.call('HGET', KEYS[k+2], id)
    local facct = redis.call('HGET', KEYS[k+4], id) or ''
    if (fop == op or fop == '*') and (facct == '' or facct == acct) then
      local p = tonumber(redis.call('HGET', KEYS[k+5], id) or '') or 0
      if p <= 0 or p >= 1 or u < p then
        local left = redis.call('HINCRBY', KEYS[k+3], id, '-1')
        local data = redis.call('HGET', KEYS[k+1], id)
        if left <= 0 then
          redis.call('LREM', KEYS[k], '0', id)
          for i = 1, 5 do
            redis.call('HDEL', KEYS[k+i], id)
          end
        end
        return {data, left}
      end
      u = (u - p) / (1 - p)
    end
  end
  return nil
end
`

// takeFaultScript consumes one occurrence of a fault, atomically, so
// concurrent requests on several replicas consume each occurrence once.
//
// KEYS: the fault keys, the call's reply key. ARGV: operation, account,
// draw, the reply key's lifetime in ms.
// Returns {JSON, remaining after this one}, or nil when none applies.
var takeFaultScript = redis.NewScript(luaTakeFault + `
local done = redis.call('GET', KEYS[7])
if done then
  return cjson.decode(done)
end
local taken = take_fault(1, ARGV[1], ARGV[2], tonumber(ARGV[3]))
if taken == nil then
  return false
end
redis.call('SET', KEYS[7], cjson.encode(taken), 'PX', ARGV[4])
return taken
`)

// deleteFaultScript removes one fault. KEYS: the fault keys, the call's
// reply key. ARGV: id, the reply key's lifetime in ms.
// Returns {JSON, remaining}, or nil when there is no such fault.
var deleteFaultScript = redis.NewScript(`
local done = redis.call('GET', KEYS[7])
if done then
  return cjson.decode(done)
end
if redis.call('LREM', KEYS[1], 0, ARGV[1]) == 0 then
  return false
end
local out = {redis.call('HGET', KEYS[2], ARGV[1]), tonumber(redis.call('HGET', KEYS[4], ARGV[1]))}
for i = 2, 6 do
  redis.call('HDEL', KEYS[i], ARGV[1])
end
redis.call('SET', KEYS[7], cjson.encode(out), 'PX', ARGV[2])
return out
`)

// faultsScript lists the faults oldest first. KEYS: the fault keys.
// Returns {JSON, remaining, JSON, remaining, ...}.
var faultsScript = redis.NewScript(`
local out = {}
for _, id in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
  table.insert(out, redis.call('HGET', KEYS[2], id))
  table.insert(out, tonumber(redis.call('HGET', KEYS[4], id)))
end
return out
`)

func faultKeys(db *DB) []string {
	return []string{db.key("faults"), db.key("fault-data"), db.key("fault-op"), db.key("fault-remaining"),
		db.key("fault-account"), db.key("fault-probability")}
}

func (s *ControlStore) faultKeys() []string { return faultKeys(s.db) }

// callKeys is the fault keys followed by the reply key of a call with the
// unique id.
func (s *ControlStore) callKeys(id string) []string { return append(s.faultKeys(), s.db.replyKey(id)) }

// The clock is a hash Lua can compute with: Redis's Lua has only doubles,
// exact to 2^53, and nanoseconds since 1970 pass that, so each instant and
// the offset are kept as whole seconds and nanoseconds in [0, 1e9), both
// exact. Fields: offsetSec, offsetNsec, frozen ("1" or "0"), frozenSec,
// frozenNsec. An absent hash is real time.
var clockFields = []string{"offsetSec", "offsetNsec", "frozen", "frozenSec", "frozenNsec"}

// splitDuration returns d as whole seconds and nanoseconds in [0, 1e9).
func splitDuration(d time.Duration) (sec, nsec int64) {
	sec, nsec = int64(d)/1e9, int64(d)%1e9
	if nsec < 0 {
		sec, nsec = sec-1, nsec+1e9
	}
	return sec, nsec
}

// Clock implements simulator.ControlStore.
func (s *ControlStore) Clock(ctx context.Context) (simulator.Clock, error) {
	vals, err := s.db.client.HMGet(ctx, s.db.key("clock"), clockFields...).Result()
	if err != nil {
		return simulator.Clock{}, fmt.Errorf("get clock: %w", err)
	}
	c, err := decodeClock(vals)
	if err != nil {
		return simulator.Clock{}, fmt.Errorf("get clock: %w", err)
	}
	return c, nil
}

// decodeClock reads the clock fields, in clockFields order; absent ones
// (nil) are zero, and all absent is the zero Clock.
func decodeClock(vals []any) (simulator.Clock, error) {
	var n [5]int64
	if len(vals) != len(n) {
		return simulator.Clock{}, fmt.Errorf("unexpected clock %v", vals)
	}
	if vals[0] == nil {
		return simulator.Clock{}, nil
	}
	for i, v := range vals {
		var err error
		switch v := v.(type) {
		case nil:
		case string:
			n[i], err = strconv.ParseInt(v, 10, 64)
		case int64:
			n[i] = v
		default:
			err = fmt.Errorf("clock field %s is %T", clockFields[i], v)
		}
		if err != nil {
			return simulator.Clock{}, err
		}
	}
	c := simulator.Clock{Offset: time.Duration(n[0]*1e9 + n[1]), Frozen: n[2] == 1}
	if n[3] != 0 || n[4] != 0 || c.Frozen {
		c.FrozenAt = time.Unix(n[3], n[4]).UTC()
	}
	return c, nil
}

// SetClock implements simulator.ControlStore.
func (s *ControlStore) SetClock(ctx context.Context, c simulator.Clock) error {
	osec, onsec := splitDuration(c.Offset)
	frozen := 0
	if c.Frozen {
		frozen = 1
	}
	// The zero FrozenAt is kept as zeros, so it reads back as the zero time.
	var fsec, fnsec int64
	if !c.FrozenAt.IsZero() {
		fsec, fnsec = c.FrozenAt.Unix(), int64(c.FrozenAt.Nanosecond())
	}
	if err := s.db.client.HSet(ctx, s.db.key("clock"),
		"offsetSec", osec, "offsetNsec", onsec, "frozen", frozen, "frozenSec", fsec, "frozenNsec", fnsec).Err(); err != nil {
		return fmt.Errorf("set clock: %w", err)
	}
	// On a sharded cluster every Gate reads the clock from its mirror.
	if err := s.db.publishGate(ctx); err != nil {
		return fmt.Errorf("set clock: %w", err)
	}
	return nil
}

// AddFault implements simulator.ControlStore.
func (s *ControlStore) AddFault(ctx context.Context, f simulator.Fault) error {
	return s.addFault(ctx, f, s.db.uniqueMember())
}

// addFault, takeFault and deleteFault are the methods with the call's
// unique id given, so that a test can re-send a call as go-redis's retry
// does.
func (s *ControlStore) addFault(ctx context.Context, f simulator.Fault, id string) error {
	b, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("add fault: %w", err)
	}
	if err := addFaultScript.Run(ctx, s.db.client, s.callKeys(id), f.ID, b, f.Operation, f.Remaining,
		f.AccountID, formatFloat(f.Probability), s.db.replyTTL.Milliseconds()).Err(); err != nil {
		return fmt.Errorf("add fault: %w", err)
	}
	// The mirrors' flag, so that the next request takes it.
	if err := s.db.publishGate(ctx); err != nil {
		return fmt.Errorf("add fault: %w", err)
	}
	return nil
}

// formatFloat writes f so that Lua's tonumber reads the same double back.
func formatFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// TakeFault implements simulator.ControlStore.
func (s *ControlStore) TakeFault(ctx context.Context, q simulator.FaultQuery) (*simulator.Fault, error) {
	return s.takeFault(ctx, q, s.db.uniqueMember())
}

func (s *ControlStore) takeFault(ctx context.Context, q simulator.FaultQuery, id string) (*simulator.Fault, error) {
	res, err := takeFaultScript.Run(ctx, s.db.client, s.callKeys(id), q.Operation, q.AccountID, formatFloat(q.Draw),
		s.db.replyTTL.Milliseconds()).Slice()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("take fault: %w", err)
	}
	if len(res) != 2 {
		return nil, fmt.Errorf("take fault: unexpected reply %v", res)
	}
	f, err := decodeFault(res)
	if err != nil {
		return nil, fmt.Errorf("take fault: %w", err)
	}
	return &f, nil
}

// DeleteFault implements simulator.ControlStore.
func (s *ControlStore) DeleteFault(ctx context.Context, id string) (*simulator.Fault, error) {
	return s.deleteFault(ctx, id, s.db.uniqueMember())
}

func (s *ControlStore) deleteFault(ctx context.Context, id, call string) (*simulator.Fault, error) {
	res, err := deleteFaultScript.Run(ctx, s.db.client, s.callKeys(call), id, s.db.replyTTL.Milliseconds()).Slice()
	if errors.Is(err, redis.Nil) {
		return nil, simulator.Errorf(simulator.ENOTFOUND, "No fault %s", id)
	} else if err != nil {
		return nil, fmt.Errorf("delete fault: %w", err)
	}
	if len(res) != 2 {
		return nil, fmt.Errorf("delete fault: unexpected reply %v", res)
	}
	f, err := decodeFault(res)
	if err != nil {
		return nil, fmt.Errorf("delete fault: %w", err)
	}
	if err := s.db.publishGate(ctx); err != nil {
		return nil, fmt.Errorf("delete fault: %w", err)
	}
	return &f, nil
}

// Faults implements simulator.ControlStore.
func (s *ControlStore) Faults(ctx context.Context) ([]simulator.Fault, error) {
	res, err := faultsScript.Run(ctx, s.db.client, s.faultKeys()).Slice()
	if err != nil {
		return nil, fmt.Errorf("list faults: %w", err)
	}
	faults := []simulator.Fault{}
	for i := 0; i+1 < len(res); i += 2 {
		f, err := decodeFault(res[i : i+2])
		if err != nil {
			return nil, fmt.Errorf("list faults: %w", err)
		}
		faults = append(faults, f)
	}
	return faults, nil
}

// ClearFaults implements simulator.ControlStore.
func (s *ControlStore) ClearFaults(ctx context.Context) error {
	if err := s.db.client.Del(ctx, s.faultKeys()...).Err(); err != nil {
		return fmt.Errorf("clear faults: %w", err)
	}
	if err := s.db.publishGate(ctx); err != nil {
		return fmt.Errorf("clear faults: %w", err)
	}
	return nil
}

// ResetControl implements simulator.ControlStore.
func (s *ControlStore) ResetControl(ctx context.Context) error {
	keys := append(s.faultKeys(), s.db.key("clock"))
	if err := s.db.client.Del(ctx, keys...).Err(); err != nil {
		return fmt.Errorf("reset control: %w", err)
	}
	if err := s.db.publishGate(ctx); err != nil {
		return fmt.Errorf("reset control: %w", err)
	}
	// The account clocks, as ResetAll forgets the rate keys.
	if s.db.sharded {
		if err := s.db.deleteAccountKeys(ctx, "clock:account"); err != nil {
			return fmt.Errorf("reset account clocks: %w", err)
		}
		return nil
	}
	if err := resetAllScript.Run(ctx, s.db.client, []string{s.db.key("clock-keys")}).Err(); err != nil {
		return fmt.Errorf("reset account clocks: %w", err)
	}
	return nil
}

// accountClockKey holds one account's offset as offsetSec and offsetNsec
// (the clock hash's first two fields), which the gate's script adds to the
// clock it read.
func (db *DB) accountClockKey(accountID string) string { return db.acctKey("clock:account", accountID) }

// AccountOffset implements simulator.ControlStore.
func (s *ControlStore) AccountOffset(ctx context.Context, accountID string) (time.Duration, error) {
	vals, err := s.db.client.HMGet(ctx, s.db.accountClockKey(accountID), clockFields[:2]...).Result()
	if err != nil {
		return 0, fmt.Errorf("get account clock: %w", err)
	}
	var n [2]int64
	for i, v := range vals {
		str, ok := v.(string)
		if !ok {
			return 0, nil // absent: no offset
		}
		if n[i], err = strconv.ParseInt(str, 10, 64); err != nil {
			return 0, fmt.Errorf("get account clock: %w", err)
		}
	}
	return time.Duration(n[0]*1e9 + n[1]), nil
}

// SetAccountOffset implements simulator.ControlStore.
func (s *ControlStore) SetAccountOffset(ctx context.Context, accountID string, d time.Duration) error {
	db := s.db
	k := db.accountClockKey(accountID)
	sec, nsec := splitDuration(d)
	if db.sharded {
		// ResetControl finds the account clocks by their names.
		var err error
		if d == 0 {
			err = db.client.Del(ctx, k).Err()
		} else {
			err = db.client.HSet(ctx, k, "offsetSec", sec, "offsetNsec", nsec).Err()
		}
		if err != nil {
			return fmt.Errorf("set account clock: %w", err)
		}
		return nil
	}
	if _, err := db.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		if d == 0 {
			p.Del(ctx, k)
			p.SRem(ctx, db.key("clock-keys"), k)
			return nil
		}
		p.HSet(ctx, k, "offsetSec", sec, "offsetNsec", nsec)
		p.SAdd(ctx, db.key("clock-keys"), k)
		return nil
	}); err != nil {
		return fmt.Errorf("set account clock: %w", err)
	}
	return nil
}

// decodeFault reads a {JSON, remaining} pair of the scripts' replies.
func decodeFault(pair []any) (simulator.Fault, error) {
	var f simulator.Fault
	data, ok := pair[0].(string)
	if !ok {
		return f, fmt.Errorf("unexpected fault record %T", pair[0])
	}
	if err := json.Unmarshal([]byte(data), &f); err != nil {
		return f, fmt.Errorf("decode fault: %w", err)
	}
	switch n := pair[1].(type) {
	case int64:
		f.Remaining = int(n)
	case string:
		v, err := strconv.Atoi(n)
		if err != nil {
			return f, fmt.Errorf("decode fault: %w", err)
		}
		f.Remaining = v
	default:
		return f, fmt.Errorf("unexpected remaining count %T", pair[1])
	}
	return f, nil
}
