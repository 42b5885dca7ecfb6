// Package inmem is the in-memory backend of the simulator's state: the
// default, for one process. Every store is safe for concurrent use.
package inmem

import (
	"context"
	"crypto/subtle"
	"sort"
	"sync"

	"github.com/partner-v3/conformance-kit/simulator"
)

var (
	_ simulator.AccountStore  = (*AccountStore)(nil)
	_ simulator.ContactStore  = (*ContactStore)(nil)
	_ simulator.CampaignStore = (*CampaignStore)(nil)
)

// AccountStore holds a fixed list of accounts.
type AccountStore struct {
	accounts []*simulator.Account
}

// NewAccountStore returns a store of the given accounts, kept in order.
func NewAccountStore(accounts []*simulator.Account) *AccountStore {
	return &AccountStore{accounts: accounts}
}

// Authenticate implements simulator.AccountStore. It compares key and secret
// with every account in constant time, so the answer's timing tells nothing
// about which part was wrong or how much of it matched.
func (s *AccountStore) Authenticate(_ context.Context, apiKey, apiSecret string) (*simulator.Account, error) {
	var found *simulator.Account
	for _, a := range s.accounts {
		k := subtle.ConstantTimeCompare([]byte(a.APIKey), []byte(apiKey))
		p := subtle.ConstantTimeCompare([]byte(a.APISecret), []byte(apiSecret))
		if k&p == 1 && found == nil {
			found = a
		}
	}
	if found == nil {
		return nil, &simulator.Error{Code: simulator.EUNAUTHORIZED, Message: simulator.MsgInvalidCredentials}
	}
	return found, nil
}

// Accounts implements simulator.AccountStore.
func (s *AccountStore) Accounts(context.Context) ([]*simulator.Account, error) {
	return s.accounts, nil
}

// CampaignStore keeps campaigns in memory. Campaigns are read-only once
// seeded, so callers share the stored values.
type CampaignStore struct {
	mu        sync.RWMutex
	version   string
	byAccount map[string][]*simulator.Campaign // sorted by ID
}

// NewCampaignStore returns an empty store.
func NewCampaignStore() *CampaignStore { return &CampaignStore{} }

// SeedCampaigns implements simulator.CampaignStore.
func (s *CampaignStore) SeedCampaigns(_ context.Context, version string, campaigns []*simulator.Campaign) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byAccount != nil && s.version == version {
		return false, nil
	}
	by := make(map[string][]*simulator.Campaign)
	for _, c := range campaigns {
		// Encoded once here: answers are built from these bytes.
		if err := c.Encode(); err != nil {
			return false, err
		}
		by[c.AccountID] = append(by[c.AccountID], c)
	}
	for _, cs := range by {
		sort.Slice(cs, func(i, j int) bool { return cs[i].ID < cs[j].ID })
	}
	s.version, s.byAccount = version, by
	return true, nil
}

// FindCampaigns implements simulator.CampaignStore.
func (s *CampaignStore) FindCampaigns(_ context.Context, f simulator.CampaignFilter) ([]*simulator.Campaign, int, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	all := s.byAccount[f.AccountID]
	return window(all, f.Offset, f.Limit), len(all), nil
}

// FindCampaignByID implements simulator.CampaignStore.
func (s *CampaignStore) FindCampaignByID(_ context.Context, accountID string, id int64) (*simulator.Campaign, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	cs := s.byAccount[accountID]
	i := sort.Search(len(cs), func(i int) bool { return cs[i].ID >= id })
	if i == len(cs) || cs[i].ID != id {
		return nil, &simulator.Error{Code: simulator.ENOTFOUND, Message: simulator.MsgCampaignNotFound}
	}
	return cs[i], nil
}

// window returns the part of all that offset and limit select.
func window[T any](all []T, offset, limit int) []T {
	offset = max(offset, 0)
	if offset >= len(all) {
		return nil
	}
	all = all[offset:]
	if limit > 0 && limit < len(all) {
		all = all[:limit]
	}
	return all
}
