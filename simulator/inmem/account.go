package inmem

import (
	"context"
	"crypto/subtle"
	"slices"
	"sync"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// AccountStore holds the configured accounts, a fixed list, and the
// throwaway accounts the control API makes (issue 12), in a map guarded by
// a mutex.
type AccountStore struct {
	// Defaults are what the configured accounts' campaigns come from, and
	// what a throwaway account gets for what its spec leaves out. Set it
	// before use; the zero value means seed 0 and no campaigns.
	Defaults simulator.AccountDefaults

	accounts []*simulator.Account // configured, in the file's order
	ids      map[string]*simulator.Account
	keys     map[string]*simulator.Account

	mu        sync.RWMutex
	byKey     map[string]*simulator.CreatedAccount
	byID      map[string]*simulator.CreatedAccount
	throwaway []*simulator.CreatedAccount // oldest first
	profiles  map[string][]byte           // by digest (issue 20)
}

// NewAccountStore returns a store of the given configured accounts, kept in
// order, and no throwaway account.
func NewAccountStore(accounts []*simulator.Account) *AccountStore {
	ids := make(map[string]*simulator.Account, len(accounts))
	keys := make(map[string]*simulator.Account, len(accounts))
	for _, a := range accounts {
		ids[a.AccountID], keys[a.APIKey] = a, a
	}
	return &AccountStore{accounts: accounts, ids: ids, keys: keys,
		byKey: make(map[string]*simulator.CreatedAccount), byID: make(map[string]*simulator.CreatedAccount)}
}

// Authenticate implements simulator.AccountStore. It never fails: in
// memory the store always has the answer, so its only error is
// EUNAUTHORIZED, for credentials no account has. The configured accounts
// are compared in constant time, key and secret (simulator.MatchAccount);
// only then is the key looked up among the throwaway accounts, whose
// secret is compared in constant time. A lookup by key tells by its timing
// at most whether a throwaway key exists: keys are 96 random bits.
func (s *AccountStore) Authenticate(_ context.Context, apiKey, apiSecret string) (*simulator.Account, error) {
	if a := simulator.MatchAccount(s.accounts, apiKey, apiSecret); a != nil {
		return a, nil
	}
	s.mu.RLock()
	t := s.byKey[apiKey]
	s.mu.RUnlock()
	if t != nil && subtle.ConstantTimeCompare([]byte(t.APISecret), []byte(apiSecret)) == 1 {
		return &t.Account, nil
	}
	return nil, &simulator.Error{Code: simulator.EUNAUTHORIZED, Message: spec.MsgInvalidCredentials}
}

// LookupAccount implements simulator.AccountStore: a map lookup per key
// and identifier given. Its only error is ENOTFOUND.
func (s *AccountStore) LookupAccount(_ context.Context, l simulator.AccountLookup) (*simulator.Account, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, k := range l.APIKeys {
		if k == "" {
			continue
		}
		if a := s.keys[k]; a != nil {
			return a, nil
		}
		if t := s.byKey[k]; t != nil {
			return &t.Account, nil
		}
	}
	for _, id := range l.AccountIDs {
		if id == "" {
			continue
		}
		if a := s.ids[id]; a != nil {
			return a, nil
		}
		if t := s.byID[id]; t != nil {
			return &t.Account, nil
		}
	}
	return nil, simulator.NoSuchAccount()
}

// Accounts implements simulator.AccountStore: the configured accounts,
// then the throwaway ones, oldest first.
func (s *AccountStore) Accounts(context.Context) ([]*simulator.Account, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if len(s.throwaway) == 0 {
		return s.accounts, nil
	}
	out := make([]*simulator.Account, 0, len(s.accounts)+len(s.throwaway))
	out = append(out, s.accounts...)
	for _, t := range s.throwaway {
		out = append(out, &t.Account)
	}
	return out, nil
}

// AccountDefaults implements simulator.AccountRegistry.
func (s *AccountStore) AccountDefaults() simulator.AccountDefaults { return s.Defaults }

// CreateAccount implements simulator.AccountRegistry.
func (s *AccountStore) CreateAccount(_ context.Context, a *simulator.CreatedAccount) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.keyUsed(a.APIKey) || s.ids[a.AccountID] != nil || s.byID[a.AccountID] != nil {
		return simulator.Errorf(simulator.ECONFLICT, "Control API: the new account's key or identifier is already used")
	}
	c := *a
	s.byKey[c.APIKey], s.byID[c.AccountID] = &c, &c
	s.throwaway = append(s.throwaway, &c)
	return nil
}

// keyUsed reports whether an account already has key. Called with s.mu held.
func (s *AccountStore) keyUsed(key string) bool {
	return s.byKey[key] != nil || s.keys[key] != nil
}

// FindAccount implements simulator.AccountRegistry.
func (s *AccountStore) FindAccount(_ context.Context, accountID string) (*simulator.AccountInfo, error) {
	if a := s.ids[accountID]; a != nil {
		return simulator.ConfiguredInfo(a, s.Defaults), nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if t := s.byID[accountID]; t != nil {
		return t.Info(), nil
	}
	return nil, simulator.NotFoundAccount(accountID)
}

// ListAccounts implements simulator.AccountRegistry.
func (s *AccountStore) ListAccounts(context.Context) ([]*simulator.AccountInfo, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]*simulator.AccountInfo, 0, len(s.accounts)+len(s.throwaway))
	for _, a := range s.accounts {
		out = append(out, simulator.ConfiguredInfo(a, s.Defaults))
	}
	for _, t := range s.throwaway {
		out = append(out, t.Info())
	}
	return out, nil
}

// CountThrowawayAccounts implements simulator.AccountRegistry.
func (s *AccountStore) CountThrowawayAccounts(context.Context) (int, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.throwaway), nil
}

// DeleteAccount implements simulator.AccountRegistry.
func (s *AccountStore) DeleteAccount(_ context.Context, accountID string) error {
	if s.ids[accountID] != nil {
		return simulator.ConfiguredAccount(accountID)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.byID[accountID]
	if t == nil {
		return simulator.NotFoundAccount(accountID)
	}
	delete(s.byID, accountID)
	delete(s.byKey, t.APIKey)
	s.throwaway = slices.DeleteFunc(s.throwaway, func(c *simulator.CreatedAccount) bool { return c == t })
	return nil
}

// StoreProfile implements simulator.AccountRegistry.
func (s *AccountStore) StoreProfile(_ context.Context, digest string, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.profiles == nil {
		s.profiles = make(map[string][]byte)
	}
	if _, ok := s.profiles[digest]; !ok {
		s.profiles[digest] = slices.Clone(data)
	}
	return nil
}

// FindProfile implements simulator.AccountRegistry.
func (s *AccountStore) FindProfile(_ context.Context, digest string) ([]byte, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	data, ok := s.profiles[digest]
	if !ok {
		return nil, simulator.Errorf(simulator.ENOTFOUND, "No profile %s", digest)
	}
	return slices.Clone(data), nil
}
