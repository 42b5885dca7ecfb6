package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

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

// addFaultScript appends a fault (replacing one with the same id).
//
// KEYS: faults list, data, op, remaining. ARGV: id, JSON, operation,
// remaining.
var addFaultScript = redis.NewScript(`
redis.call('LREM', KEYS[1], 0, ARGV[1])
redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[3])
redis.call('HSET', KEYS[4], ARGV[1], ARGV[4])
return 1
`)

// takeFaultScript consumes one occurrence of the oldest fault that names
// the operation or "*", atomically, so concurrent requests on several
// replicas consume each occurrence once; it removes the fault at zero.
//
// KEYS: as addFaultScript. ARGV: operation.
// Returns {JSON, remaining after this one}, or nil when none applies.
var takeFaultScript = redis.NewScript(`
for _, id in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
  local op = redis.call('HGET', KEYS[3], id)
  if op == ARGV[1] or op == '*' then
    local left = redis.call('HINCRBY', KEYS[4], id, -1)
    local data = redis.call('HGET', KEYS[2], id)
    if left <= 0 then
      redis.call('LREM', KEYS[1], 0, id)
      redis.call('HDEL', KEYS[2], id)
      redis.call('HDEL', KEYS[3], id)
      redis.call('HDEL', KEYS[4], id)
    end
    return {data, left}
  end
end
return false
`)

// faultsScript lists the faults oldest first. KEYS: as addFaultScript.
// Returns {JSON, remaining, JSON, remaining, ...}.
var faultsScript = redis.NewScript(`
local out = {}
for _, id in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
  table.insert(out, redis.call('HGET', KEYS[2], id))
  table.insert(out, tonumber(redis.call('HGET', KEYS[4], id)))
end
return out
`)

func (s *ControlStore) faultKeys() []string {
	db := s.db
	return []string{db.key("faults"), db.key("fault-data"), db.key("fault-op"), db.key("fault-remaining")}
}

// Clock implements simulator.ControlStore.
func (s *ControlStore) Clock(ctx context.Context) (simulator.Clock, error) {
	var c simulator.Clock
	b, err := s.db.client.Get(ctx, s.db.key("clock")).Bytes()
	if errors.Is(err, redis.Nil) {
		return c, nil
	} else if err != nil {
		return c, fmt.Errorf("get clock: %w", err)
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("get clock: %w", err)
	}
	return c, nil
}

// SetClock implements simulator.ControlStore.
func (s *ControlStore) SetClock(ctx context.Context, c simulator.Clock) error {
	b, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("set clock: %w", err)
	}
	if err := s.db.client.Set(ctx, s.db.key("clock"), b, 0).Err(); err != nil {
		return fmt.Errorf("set clock: %w", err)
	}
	return nil
}

// AddFault implements simulator.ControlStore.
func (s *ControlStore) AddFault(ctx context.Context, f simulator.Fault) error {
	b, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("add fault: %w", err)
	}
	if err := addFaultScript.Run(ctx, s.db.client, s.faultKeys(), f.ID, b, f.Operation, f.Remaining).Err(); err != nil {
		return fmt.Errorf("add fault: %w", err)
	}
	return nil
}

// TakeFault implements simulator.ControlStore. The returned fault's
// Remaining is the number of occurrences left after this one.
func (s *ControlStore) TakeFault(ctx context.Context, operation string) (*simulator.Fault, error) {
	res, err := takeFaultScript.Run(ctx, s.db.client, s.faultKeys(), operation).Slice()
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
	return nil
}

// ResetControl implements simulator.ControlStore.
func (s *ControlStore) ResetControl(ctx context.Context) error {
	keys := append(s.faultKeys(), s.db.key("clock"))
	if err := s.db.client.Del(ctx, keys...).Err(); err != nil {
		return fmt.Errorf("reset control: %w", err)
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
