package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/partner-v3/conformance-kit/simulator"
)

var _ simulator.CampaignStore = (*CampaignStore)(nil)

// CampaignStore keeps the seeded campaigns and their statistics in Redis.
//
// It remembers the last campaigns it was asked to seed: when Redis comes
// back empty (restarted without persistence, or flushed), the next read
// finds no version and seeds them again, so the simulator recovers its
// campaigns without a restart.
type CampaignStore struct {
	db *DB

	mu       sync.Mutex
	seedArgs []any // the arguments of the last seedCampaignsScript call
}

// NewCampaignStore returns a CampaignStore on db.
func NewCampaignStore(db *DB) *CampaignStore {
	return &CampaignStore{db: db}
}

// seedCampaignsScript replaces every campaign unless the stored version is
// the given one, atomically: of replicas started alike against one Redis,
// exactly one stores and the others see its campaigns.
//
// KEYS: version, accounts set. ARGV: prefix, version, then (account, padded
// id, JSON) triples. Returns 1 when it stored, 0 when the version matched.
var seedCampaignsScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[2] then
  return 0
end
local p = ARGV[1]
for _, acct in ipairs(redis.call('SMEMBERS', KEYS[2])) do
  redis.call('DEL', p .. 'campaign-order:' .. acct, p .. 'campaign-data:' .. acct)
end
redis.call('DEL', KEYS[2])
for i = 3, #ARGV, 3 do
  local acct, id = ARGV[i], ARGV[i + 1]
  redis.call('ZADD', p .. 'campaign-order:' .. acct, 0, id)
  redis.call('HSET', p .. 'campaign-data:' .. acct, id, ARGV[i + 2])
  redis.call('SADD', KEYS[2], acct)
end
redis.call('SET', KEYS[1], ARGV[2])
return 1
`)

// campaignID is the member and field name of a campaign id: zero-padded, so
// that the lexical order of a sorted set with equal scores is the numeric
// order FindCampaigns promises, exact for every positive int64 (a score
// would round ids above 2^53).
func campaignID(id int64) string {
	return fmt.Sprintf("%020d", id)
}

// SeedCampaigns implements simulator.CampaignStore.
func (s *CampaignStore) SeedCampaigns(ctx context.Context, version string, campaigns []*simulator.Campaign) (bool, error) {
	db := s.db
	args := make([]any, 0, 2+3*len(campaigns))
	args = append(args, db.Prefix, version)
	for _, c := range campaigns {
		if c.ID <= 0 {
			return false, fmt.Errorf("seed campaigns: campaign Id %d is not positive", c.ID)
		}
		b, err := json.Marshal(c)
		if err != nil {
			return false, fmt.Errorf("seed campaigns: %w", err)
		}
		args = append(args, c.AccountID, campaignID(c.ID), b)
	}
	s.mu.Lock()
	s.seedArgs = args
	s.mu.Unlock()
	stored, err := s.seed(ctx, args)
	if err != nil {
		return false, fmt.Errorf("seed campaigns: %w", err)
	}
	return stored, nil
}

// seedTimeout bounds the seeding script instead of DB.Timeout: storing
// 10,000 campaigns for each of two accounts takes about 200 ms on a local
// Redis, and more accounts take longer; a read timeout in the middle would
// fail the simulator's start (and a retry would only find it done).
const seedTimeout = 30 * time.Second

func (s *CampaignStore) seed(ctx context.Context, args []any) (bool, error) {
	keys := []string{s.db.key("campaign-version"), s.db.key("campaign-accounts")}
	stored, err := seedCampaignsScript.Run(ctx, s.db.client.WithTimeout(seedTimeout), keys, args...).Int()
	return stored == 1, err
}

// reseed stores the remembered campaigns again after Redis lost them. It
// reports false when this store never seeded (nothing to restore). Several
// replicas reseeding at once store once: the script checks the version.
func (s *CampaignStore) reseed(ctx context.Context) (bool, error) {
	s.mu.Lock()
	args := s.seedArgs
	s.mu.Unlock()
	if args == nil {
		return false, nil
	}
	if _, err := s.seed(ctx, args); err != nil {
		return false, fmt.Errorf("reseed campaigns: %w", err)
	}
	return true, nil
}

// FindCampaigns implements simulator.CampaignStore.
func (s *CampaignStore) FindCampaigns(ctx context.Context, filter simulator.CampaignFilter) ([]*simulator.Campaign, int, error) {
	db := s.db
	keys := []string{
		db.key("campaign-order", filter.AccountID), db.key("campaign-data", filter.AccountID),
		db.key("campaign-version"),
	}
	var (
		total   int
		records []string
		err     error
	)
	for attempt := 0; ; attempt++ {
		total, records, err = page(pageScript.Run(ctx, db.client, keys, max(filter.Offset, 0), max(filter.Limit, 0)))
		if err != nil {
			return nil, 0, fmt.Errorf("find campaigns: %w", err)
		}
		if total >= 0 {
			break
		}
		// No version: Redis lost the campaigns (or none were ever seeded).
		if ok, err := s.reseed(ctx); err != nil {
			return nil, 0, fmt.Errorf("find campaigns: %w", err)
		} else if !ok || attempt > 0 {
			return []*simulator.Campaign{}, 0, nil
		}
	}
	campaigns := make([]*simulator.Campaign, 0, len(records))
	for _, r := range records {
		c, err := decodeCampaign(r)
		if err != nil {
			return nil, 0, fmt.Errorf("find campaigns: %w", err)
		}
		campaigns = append(campaigns, c)
	}
	return campaigns, total, nil
}

// FindCampaignByID implements simulator.CampaignStore. Campaigns are keyed
// by account, so another account's Id is simply not found (spec §4.3: the
// answer for an unknown campaignId is not shown; ASSUMPTION: the same
// ENOTFOUND whether it exists elsewhere or not, so nothing leaks).
func (s *CampaignStore) FindCampaignByID(ctx context.Context, accountID string, id int64) (*simulator.Campaign, error) {
	notFound := simulator.Errorf(simulator.ENOTFOUND, "%s", simulator.MsgCampaignNotFound)
	if id <= 0 {
		return nil, notFound
	}
	db := s.db
	for attempt := 0; ; attempt++ {
		r, err := db.client.HGet(ctx, db.key("campaign-data", accountID), campaignID(id)).Result()
		if err == nil {
			c, err := decodeCampaign(r)
			if err != nil {
				return nil, fmt.Errorf("find campaign: %w", err)
			}
			return c, nil
		} else if !errors.Is(err, redis.Nil) {
			return nil, fmt.Errorf("find campaign: %w", err)
		}
		// A miss is a miss, unless Redis lost the campaigns.
		n, err := db.client.Exists(ctx, db.key("campaign-version")).Result()
		if err != nil {
			return nil, fmt.Errorf("find campaign: %w", err)
		}
		if n == 1 || attempt > 0 {
			return nil, notFound
		}
		if ok, err := s.reseed(ctx); err != nil {
			return nil, fmt.Errorf("find campaign: %w", err)
		} else if !ok {
			return nil, notFound
		}
	}
}

func decodeCampaign(s string) (*simulator.Campaign, error) {
	var c simulator.Campaign
	if err := json.Unmarshal([]byte(s), &c); err != nil {
		return nil, fmt.Errorf("decode campaign: %w", err)
	}
	return &c, nil
}
