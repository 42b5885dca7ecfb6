package inmem

import (
	"container/list"
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/partner-v3/conformance-kit/simulator"
)

// DefaultCampaignCacheSize is how many throwaway accounts' generated
// campaigns a CampaignStore keeps by default: a long-lived simulator that
// made 10,000 throwaway accounts keeps the campaigns of the last 256 used
// (some 120 campaigns of about 600 bytes each), and generates again, the
// same, for an older one.
const DefaultCampaignCacheSize = 256

// campaigns returns the account's campaigns, sorted by ID: the seeded
// ones, or else the generated ones.
func (s *CampaignStore) campaigns(ctx context.Context, accountID string) ([]*simulator.Campaign, error) {
	s.mu.RLock()
	cs, seeded := s.byAccount[accountID]
	s.mu.RUnlock()
	if seeded || s.Generate == nil {
		return cs, nil
	}
	if cs, ok := s.cache.get(accountID); ok {
		return cs, nil
	}
	cs, err := s.Generate(ctx, accountID)
	if err != nil {
		return nil, fmt.Errorf("generate campaigns: %w", err)
	}
	for _, c := range cs {
		// Encoded once here, as seeded campaigns are.
		if err := c.Encode(); err != nil {
			return nil, err
		}
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].ID < cs[j].ID })
	if cs == nil {
		// An account Generate knows nothing of (deleted meanwhile, or
		// never made) is not cached: nothing to keep.
		return nil, nil
	}
	return s.cache.put(accountID, cs, s.CacheSize), nil
}

// ForgetCampaigns implements simulator.CampaignStore: a deleted
// throwaway account's campaigns leave the cache at once.
func (s *CampaignStore) ForgetCampaigns(accountID string) { s.cache.remove(accountID) }

// generatedCache is a least-recently-used cache of generated campaigns by
// account. The zero value is empty and ready.
type generatedCache struct {
	mu    sync.Mutex
	order *list.List // of *generatedEntry, most recently used first
	byID  map[string]*list.Element
}

type generatedEntry struct {
	accountID string
	campaigns []*simulator.Campaign
}

func (c *generatedCache) get(accountID string) ([]*simulator.Campaign, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byID[accountID]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*generatedEntry).campaigns, true
}

// put keeps cs for accountID unless another call put some first (then it
// returns those, so every caller serves one generation), evicting the
// least recently used account beyond size.
func (c *generatedCache) put(accountID string, cs []*simulator.Campaign, size int) []*simulator.Campaign {
	if size <= 0 {
		size = DefaultCampaignCacheSize
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byID == nil {
		c.order, c.byID = list.New(), make(map[string]*list.Element)
	}
	if e, ok := c.byID[accountID]; ok {
		c.order.MoveToFront(e)
		return e.Value.(*generatedEntry).campaigns
	}
	c.byID[accountID] = c.order.PushFront(&generatedEntry{accountID: accountID, campaigns: cs})
	for c.order.Len() > size {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.byID, last.Value.(*generatedEntry).accountID)
	}
	return cs
}

func (c *generatedCache) remove(accountID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byID[accountID]; ok {
		c.order.Remove(e)
		delete(c.byID, accountID)
	}
}
