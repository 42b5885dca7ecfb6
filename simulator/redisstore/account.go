package redisstore

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

var _ simulator.AccountRegistry = (*AccountStore)(nil)

// AccountStore keeps the configured accounts in this process's memory and
// the throwaway accounts (issue 12) in Redis, so that one made through any
// replica authenticates on every replica at once, and one deleted through
// any replica is refused on every replica at once (nothing is cached).
//
// A request with a configured account's credentials costs no round trip
// (they are compared in memory, in constant time, first); only a key no
// configured account has costs one lookup, HGET of account-by-key. Naming
// the account of a refused request (LookupAccount) costs at most one
// round trip, HMGET of both hashes, never a read of the whole registry.
//
// Keys, under DB.Prefix (P):
//
//	P account-by-key   hash    apiKey -> the CreatedAccount's JSON, secret included
//	P account-by-id    hash    accountId -> the same JSON
//	P account-order    zset    accountId by creation sequence (oldest first)
//	P account-seq      string  the creation sequence
//	P profiles         hash    digest -> a profile's canonical JSON (issue 20),
//	                           which accounts name by ProfileDigest
type AccountStore struct {
	db       *DB
	defaults simulator.AccountDefaults
	accounts []*simulator.Account // configured, in the file's order
	ids      map[string]*simulator.Account
	keyed    map[string]*simulator.Account // configured, by key
}

// NewAccountStore returns the registry on db of the given configured
// accounts, whose campaigns were generated from d (and which a throwaway
// account gets for what its spec leaves out).
func NewAccountStore(db *DB, accounts []*simulator.Account, d simulator.AccountDefaults) *AccountStore {
	ids := make(map[string]*simulator.Account, len(accounts))
	keys := make(map[string]*simulator.Account, len(accounts))
	for _, a := range accounts {
		ids[a.AccountID], keys[a.APIKey] = a, a
	}
	return &AccountStore{db: db, defaults: d, accounts: accounts, ids: ids, keyed: keys}
}

func (s *AccountStore) keys() []string {
	db := s.db
	return []string{db.key("account-by-key"), db.key("account-by-id"), db.key("account-order"), db.key("account-seq")}
}

// createAccountScript stores a throwaway account in both hashes and the
// order, unless its key or identifier is taken. A re-sent call (go-redis
// retries once when a reply is lost) is answered from its reply key, so
// it does not report its own account as a conflict.
//
// KEYS: the account keys (AccountStore.keys), the call's reply key. ARGV:
// apiKey, accountId, JSON, the reply key's lifetime in ms. Returns 1 when
// stored, 0 on a conflict.
var createAccountScript = redis.NewScript(`
local done = redis.call('GET', KEYS[5])
if done then
  return tonumber(done)
end
local ok = 0
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 and redis.call('HEXISTS', KEYS[2], ARGV[2]) == 0 then
  local n = redis.call('INCR', KEYS[4])
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
  redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
  redis.call('ZADD', KEYS[3], n, ARGV[2])
  ok = 1
end
redis.call('SET', KEYS[5], ok, 'PX', ARGV[4])
return ok
`)

// deleteAccountScript removes a throwaway account from both hashes and the
// order. KEYS: the account keys, the call's reply key. ARGV: accountId,
// apiKey, the reply key's lifetime in ms. Returns 1 when it was there, 0
// when not (a re-sent call answers as the first did).
var deleteAccountScript = redis.NewScript(`
local done = redis.call('GET', KEYS[5])
if done then
  return tonumber(done)
end
local ok = redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[1], ARGV[2])
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('SET', KEYS[5], ok, 'PX', ARGV[3])
return ok
`)

// Authenticate implements simulator.AccountStore: the configured accounts
// in constant time (simulator.MatchAccount), then one lookup of the key
// among the throwaway accounts, whose secret is compared in constant time.
//
// A configured account's key with a wrong secret is refused without that
// lookup (no throwaway account has a configured key: CreateAccount refuses
// one), so it answers 401 even while Redis is down. Any other key needs
// Redis: when it cannot answer, the error is an internal one (500), never
// EUNAUTHORIZED.
func (s *AccountStore) Authenticate(ctx context.Context, apiKey, apiSecret string) (*simulator.Account, error) {
	if a := simulator.MatchAccount(s.accounts, apiKey, apiSecret); a != nil {
		return a, nil
	}
	if s.keyed[apiKey] != nil {
		return nil, errUnauthorized
	}
	t, err := s.get(ctx, "account-by-key", apiKey)
	if err != nil {
		return nil, fmt.Errorf("authenticate: %w", err)
	}
	if t != nil && subtle.ConstantTimeCompare([]byte(t.APISecret), []byte(apiSecret)) == 1 {
		return &t.Account, nil
	}
	return nil, errUnauthorized
}

var errUnauthorized = &simulator.Error{Code: simulator.EUNAUTHORIZED, Message: spec.MsgInvalidCredentials}

// LookupAccount implements simulator.AccountStore: the configured accounts
// in memory, and the throwaway ones by HMGET of account-by-key and
// account-by-id, in one round trip, whatever the number of accounts. Only
// the keys and identifiers that could come before a configured account's
// are asked for; a configured account's first key costs no round trip.
func (s *AccountStore) LookupAccount(ctx context.Context, l simulator.AccountLookup) (*simulator.Account, error) {
	keys, byKey := unconfigured(l.APIKeys, s.keyed)
	if byKey != nil && len(keys) == 0 {
		return byKey, nil
	}
	var ids []string
	var byID *simulator.Account
	if byKey == nil {
		ids, byID = unconfigured(l.AccountIDs, s.ids)
	}
	var keyVals, idVals *redis.SliceCmd
	if len(keys) > 0 || len(ids) > 0 {
		if _, err := s.db.client.Pipelined(ctx, func(p redis.Pipeliner) error {
			if len(keys) > 0 {
				keyVals = p.HMGet(ctx, s.db.key("account-by-key"), keys...)
			}
			if len(ids) > 0 {
				idVals = p.HMGet(ctx, s.db.key("account-by-id"), ids...)
			}
			return nil
		}); err != nil {
			return nil, fmt.Errorf("look up account: %w", err)
		}
	}
	// Keys first (then a configured one after them), then identifiers.
	for _, found := range []struct {
		vals       *redis.SliceCmd
		configured *simulator.Account
	}{{keyVals, byKey}, {idVals, byID}} {
		if found.vals != nil {
			for _, v := range found.vals.Val() {
				if b, ok := v.(string); ok {
					var a simulator.CreatedAccount
					if err := json.Unmarshal([]byte(b), &a); err != nil {
						return nil, fmt.Errorf("decode account: %w", err)
					}
					return &a.Account, nil
				}
			}
		}
		if found.configured != nil {
			return found.configured, nil
		}
	}
	return nil, simulator.NoSuchAccount()
}

// unconfigured returns the values of vals that come before the first that
// names a configured account, empty ones left out, and that account (nil
// when none does).
func unconfigured(vals []string, configured map[string]*simulator.Account) ([]string, *simulator.Account) {
	var ask []string
	for _, v := range vals {
		if v == "" {
			continue
		}
		if a := configured[v]; a != nil {
			return ask, a
		}
		ask = append(ask, v)
	}
	return ask, nil
}

// get reads one throwaway account from a hash; nil when absent.
func (s *AccountStore) get(ctx context.Context, hash, field string) (*simulator.CreatedAccount, error) {
	b, err := s.db.client.HGet(ctx, s.db.key(hash), field).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var a simulator.CreatedAccount
	if err := json.Unmarshal(b, &a); err != nil {
		return nil, fmt.Errorf("decode account: %w", err)
	}
	return &a, nil
}

// throwaway returns the throwaway accounts, oldest first, in one round
// trip.
func (s *AccountStore) throwaway(ctx context.Context) ([]*simulator.CreatedAccount, error) {
	k := s.keys()
	var order *redis.ZSliceCmd
	var data *redis.MapStringStringCmd
	if _, err := s.db.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		order = p.ZRangeWithScores(ctx, k[2], 0, -1)
		data = p.HGetAll(ctx, k[1])
		return nil
	}); err != nil {
		return nil, fmt.Errorf("list accounts: %w", err)
	}
	all := data.Val()
	out := make([]*simulator.CreatedAccount, 0, len(all))
	for _, z := range order.Val() {
		id, _ := z.Member.(string)
		b, ok := all[id]
		if !ok {
			continue
		}
		var a simulator.CreatedAccount
		if err := json.Unmarshal([]byte(b), &a); err != nil {
			return nil, fmt.Errorf("decode account %s: %w", id, err)
		}
		out = append(out, &a)
	}
	return out, nil
}

// Accounts implements simulator.AccountStore: the configured accounts,
// then the throwaway ones, oldest first. It costs a round trip.
func (s *AccountStore) Accounts(ctx context.Context) ([]*simulator.Account, error) {
	ts, err := s.throwaway(ctx)
	if err != nil {
		return nil, err
	}
	if len(ts) == 0 {
		return s.accounts, nil
	}
	out := make([]*simulator.Account, 0, len(s.accounts)+len(ts))
	out = append(out, s.accounts...)
	for _, t := range ts {
		out = append(out, &t.Account)
	}
	return out, nil
}

// AccountDefaults implements simulator.AccountRegistry.
func (s *AccountStore) AccountDefaults() simulator.AccountDefaults { return s.defaults }

// CreateAccount implements simulator.AccountRegistry.
func (s *AccountStore) CreateAccount(ctx context.Context, a *simulator.CreatedAccount) error {
	if s.ids[a.AccountID] != nil || s.configuredKey(a.APIKey) {
		return errConflict
	}
	b, err := json.Marshal(a)
	if err != nil {
		return fmt.Errorf("encode account: %w", err)
	}
	db := s.db
	ok, err := createAccountScript.Run(ctx, db.client, append(s.keys(), db.replyKey(db.uniqueMember())),
		a.APIKey, a.AccountID, b, db.replyTTL.Milliseconds()).Int()
	if err != nil {
		return fmt.Errorf("create account: %w", err)
	}
	if ok != 1 {
		return errConflict
	}
	return nil
}

var errConflict = simulator.Errorf(simulator.ECONFLICT, "Control API: the new account's key or identifier is already used")

func (s *AccountStore) configuredKey(key string) bool { return s.keyed[key] != nil }

// FindAccount implements simulator.AccountRegistry.
func (s *AccountStore) FindAccount(ctx context.Context, accountID string) (*simulator.AccountInfo, error) {
	if a := s.ids[accountID]; a != nil {
		return simulator.ConfiguredInfo(a, s.defaults), nil
	}
	t, err := s.get(ctx, "account-by-id", accountID)
	if err != nil {
		return nil, fmt.Errorf("find account: %w", err)
	}
	if t == nil {
		return nil, simulator.NotFoundAccount(accountID)
	}
	return t.Info(), nil
}

// ListAccounts implements simulator.AccountRegistry.
func (s *AccountStore) ListAccounts(ctx context.Context) ([]*simulator.AccountInfo, error) {
	ts, err := s.throwaway(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*simulator.AccountInfo, 0, len(s.accounts)+len(ts))
	for _, a := range s.accounts {
		out = append(out, simulator.ConfiguredInfo(a, s.defaults))
	}
	for _, t := range ts {
		out = append(out, t.Info())
	}
	return out, nil
}

// CountThrowawayAccounts implements simulator.AccountRegistry: one HLEN
// of account-by-id, which holds the throwaway accounts only.
func (s *AccountStore) CountThrowawayAccounts(ctx context.Context) (int, error) {
	n, err := s.db.client.HLen(ctx, s.db.key("account-by-id")).Result()
	if err != nil {
		return 0, fmt.Errorf("count throwaway accounts: %w", err)
	}
	return int(n), nil
}

// DeleteAccount implements simulator.AccountRegistry.
func (s *AccountStore) DeleteAccount(ctx context.Context, accountID string) error {
	if s.ids[accountID] != nil {
		return simulator.ConfiguredAccount(accountID)
	}
	t, err := s.get(ctx, "account-by-id", accountID)
	if err != nil {
		return fmt.Errorf("delete account: %w", err)
	}
	if t == nil {
		return simulator.NotFoundAccount(accountID)
	}
	db := s.db
	ok, err := deleteAccountScript.Run(ctx, db.client, append(s.keys(), db.replyKey(db.uniqueMember())),
		accountID, t.APIKey, db.replyTTL.Milliseconds()).Int()
	if err != nil {
		return fmt.Errorf("delete account: %w", err)
	}
	if ok != 1 {
		// Deleted by another call between the read and the script.
		return simulator.NotFoundAccount(accountID)
	}
	return nil
}

// StoreProfile implements simulator.AccountRegistry: HSETNX, so a profile
// is stored once whatever the number of accounts or replicas playing it.
func (s *AccountStore) StoreProfile(ctx context.Context, digest string, data []byte) error {
	if err := s.db.client.HSetNX(ctx, s.db.key("profiles"), digest, data).Err(); err != nil {
		return fmt.Errorf("store profile: %w", err)
	}
	return nil
}

// FindProfile implements simulator.AccountRegistry: one HGET.
func (s *AccountStore) FindProfile(ctx context.Context, digest string) ([]byte, error) {
	b, err := s.db.client.HGet(ctx, s.db.key("profiles"), digest).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, simulator.Errorf(simulator.ENOTFOUND, "No profile %s", digest)
	} else if err != nil {
		return nil, fmt.Errorf("find profile: %w", err)
	}
	return b, nil
}
