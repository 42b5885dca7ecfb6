// Package inmem is the in-memory backend of the simulator's state: the
// default, for one process. Every store is safe for concurrent use.
package inmem

import (
	"context"
	"sort"
	"sync"

	"github.com/partner-v3/conformance-kit/simulator"
)

var (
	_ simulator.AccountStore    = (*AccountStore)(nil)
	_ simulator.AccountRegistry = (*AccountStore)(nil)
	_ simulator.ContactStore    = (*ContactStore)(nil)
	_ simulator.CampaignStore   = (*CampaignStore)(nil)
)

// CampaignStore keeps campaigns in memory. Campaigns are read-only once
// seeded, so callers share the stored values.
//
// An account with no seeded campaigns (a throwaway account, issue 12) gets
// those Generate makes, cached for the CacheSize accounts used last.
type CampaignStore struct {
	// Generate returns the campaigns of an account that has none seeded,
	// or nil. May be nil: then such an account has none. It is called
	// without the store's lock held, and its result must not change for
	// an account: two replicas generate the same.
	Generate func(ctx context.Context, accountID string) ([]*simulator.Campaign, error)
	// CacheSize bounds how many accounts' generated campaigns are kept.
	// Zero means DefaultCampaignCacheSize.
	CacheSize int

	mu        sync.RWMutex
	version   string
	byAccount map[string][]*simulator.Campaign // sorted by ID

	cache generatedCache
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
func (s *CampaignStore) FindCampaigns(ctx context.Context, f simulator.CampaignFilter) ([]*simulator.Campaign, int, error) {
	all, err := s.campaigns(ctx, f.AccountID)
	if err != nil {
		return nil, 0, err
	}
	return window(all, f.Offset, f.Limit), len(all), nil
}

// FindCampaignByID implements simulator.CampaignStore.
func (s *CampaignStore) FindCampaignByID(ctx context.Context, accountID string, id int64) (*simulator.Campaign, error) {
	cs, err := s.campaigns(ctx, accountID)
	if err != nil {
		return nil, err
	}
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
