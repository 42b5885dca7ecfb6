package violation

import (
	"context"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
)

// accountStore matches credentials the faithful store refuses.
type accountStore struct {
	simulator.AccountStore
	// accept reports whether key and secret reach account a under the
	// broken rule; all is every account.
	accept func(a *simulator.Account, key, secret string, all []*simulator.Account) bool
}

// Authenticate implements simulator.AccountStore: the faithful answer,
// unless the broken rule lets the credentials through.
func (s *accountStore) Authenticate(ctx context.Context, key, secret string) (*simulator.Account, error) {
	a, err := s.AccountStore.Authenticate(ctx, key, secret)
	if err == nil || simulator.ErrorCode(err) != simulator.EUNAUTHORIZED {
		return a, err
	}
	all, aerr := s.Accounts(ctx)
	if aerr != nil {
		// The store cannot list the accounts the rule would compare: an
		// internal error (spec §7's 500), never the faithful 401.
		return nil, aerr
	}
	for _, c := range all {
		if s.accept(c, key, secret, all) {
			return c, nil
		}
	}
	return nil, err
}

// acceptAccounts builds an AccountStore decorator.
func acceptAccounts(accept func(a *simulator.Account, key, secret string, all []*simulator.Account) bool) func(simulator.AccountStore) simulator.AccountStore {
	return func(next simulator.AccountStore) simulator.AccountStore {
		return &accountStore{AccountStore: next, accept: accept}
	}
}

// contactStore checks a contact before it is stored: it may refuse it
// (an *Error the server answers as such) or change it.
type contactStore struct {
	simulator.ContactStore
	check func(ctx context.Context, c *simulator.Contact) error
}

// UpsertContact implements simulator.ContactStore.
func (s *contactStore) UpsertContact(ctx context.Context, c *simulator.Contact) (*simulator.Contact, bool, error) {
	if err := s.check(ctx, c); err != nil {
		return nil, false, err
	}
	return s.ContactStore.UpsertContact(ctx, c)
}

// AddContact implements simulator.ContactStore: the same check.
func (s *contactStore) AddContact(ctx context.Context, c *simulator.Contact, rule simulator.DuplicateRule) (*simulator.Contact, bool, error) {
	if err := s.check(ctx, c); err != nil {
		return nil, false, err
	}
	return s.ContactStore.AddContact(ctx, c, rule)
}

func checkContacts(check func(ctx context.Context, c *simulator.Contact) error) func(simulator.ContactStore) simulator.ContactStore {
	return func(next simulator.ContactStore) simulator.ContactStore {
		return &contactStore{ContactStore: next, check: check}
	}
}

// refuseContact refuses, with a 400 and msg, every contact bad holds for.
func refuseContact(msg string, bad func(ctx context.Context, c *simulator.Contact) bool) func(simulator.ContactStore) simulator.ContactStore {
	return checkContacts(func(ctx context.Context, c *simulator.Contact) error {
		if bad(ctx, c) {
			return &simulator.Error{Code: simulator.EINVALID, Message: msg}
		}
		return nil
	})
}

// campaignStore finds campaigns wrongly. Nil funcs find them faithfully.
type campaignStore struct {
	simulator.CampaignStore
	find func(ctx context.Context, next simulator.CampaignStore, f simulator.CampaignFilter) ([]*simulator.Campaign, int, error)
	byID func(ctx context.Context, next simulator.CampaignStore, accountID string, id int64) (*simulator.Campaign, error)
}

// FindCampaigns implements simulator.CampaignStore.
func (s *campaignStore) FindCampaigns(ctx context.Context, f simulator.CampaignFilter) ([]*simulator.Campaign, int, error) {
	if s.find == nil {
		return s.CampaignStore.FindCampaigns(ctx, f)
	}
	return s.find(ctx, s.CampaignStore, f)
}

// FindCampaignByID implements simulator.CampaignStore.
func (s *campaignStore) FindCampaignByID(ctx context.Context, accountID string, id int64) (*simulator.Campaign, error) {
	if s.byID == nil {
		return s.CampaignStore.FindCampaignByID(ctx, accountID, id)
	}
	return s.byID(ctx, s.CampaignStore, accountID, id)
}

// filterCampaigns changes the page Campaign List asks the store for.
func filterCampaigns(change func(ctx context.Context, f *simulator.CampaignFilter)) func(simulator.CampaignStore) simulator.CampaignStore {
	return func(next simulator.CampaignStore) simulator.CampaignStore {
		return &campaignStore{CampaignStore: next, find: func(ctx context.Context, next simulator.CampaignStore, f simulator.CampaignFilter) ([]*simulator.Campaign, int, error) {
			change(ctx, &f)
			return next.FindCampaigns(ctx, f)
		}}
	}
}

// shuffleCampaigns pages through the campaigns in a new random order on
// every call.
func shuffleCampaigns(next simulator.CampaignStore) simulator.CampaignStore {
	return &campaignStore{CampaignStore: next, find: func(ctx context.Context, next simulator.CampaignStore, f simulator.CampaignFilter) ([]*simulator.Campaign, int, error) {
		all, total, err := next.FindCampaigns(ctx, simulator.CampaignFilter{AccountID: f.AccountID})
		if err != nil {
			return nil, 0, err
		}
		all = slices.Clone(all)
		rand.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
		lo := min(max(f.Offset, 0), len(all))
		hi := len(all)
		if f.Limit > 0 {
			hi = min(lo+f.Limit, hi)
		}
		return all[lo:hi], total, nil
	}}
}

// findByID changes which campaign Campaign Stats finds.
func findByID(find func(ctx context.Context, next simulator.CampaignStore, accountID string, id int64) (*simulator.Campaign, error)) func(simulator.CampaignStore) simulator.CampaignStore {
	return func(next simulator.CampaignStore) simulator.CampaignStore {
		return &campaignStore{CampaignStore: next, byID: find}
	}
}

// lastCampaign returns the account's campaign with the highest Id, or nil.
func lastCampaign(ctx context.Context, cs simulator.CampaignStore, accountID string) (*simulator.Campaign, error) {
	_, total, err := cs.FindCampaigns(ctx, simulator.CampaignFilter{AccountID: accountID, Limit: 1})
	if err != nil || total == 0 {
		return nil, err
	}
	last, _, err := cs.FindCampaigns(ctx, simulator.CampaignFilter{AccountID: accountID, Offset: total - 1, Limit: 1})
	if err != nil || len(last) == 0 {
		return nil, err
	}
	return last[0], nil
}

var errCampaignNotFound = &simulator.Error{Code: simulator.ENOTFOUND, Message: simulator.MsgCampaignNotFound}

// rateCounter counts requests under another key, or not at all.
type rateCounter struct {
	simulator.RateCounter
	// key returns the key to count a request of key under, and false for
	// a request that is not counted.
	key func(ctx context.Context, key string) (string, bool)
	// resets returns the keys that hold what key's counter holds.
	resets func(key string) []string
}

// Take implements simulator.RateCounter.
func (c *rateCounter) Take(ctx context.Context, key string, now time.Time) (simulator.RateDecision, error) {
	k, counted := c.key(ctx, key)
	if !counted {
		return simulator.RateDecision{Allowed: true}, nil
	}
	return c.RateCounter.Take(ctx, k, now)
}

// Count implements simulator.RateCounter: what the key's requests are
// counted under holds.
func (c *rateCounter) Count(ctx context.Context, key string, now time.Time) (int, error) {
	k, _ := c.key(ctx, key)
	return c.RateCounter.Count(ctx, k, now)
}

// Reset implements simulator.RateCounter: the control API's reset of one
// account clears whatever counts that account's requests.
func (c *rateCounter) Reset(ctx context.Context, key string) error {
	keys := []string{key}
	if c.resets != nil {
		keys = c.resets(key)
	}
	for _, k := range keys {
		if err := c.RateCounter.Reset(ctx, k); err != nil {
			return err
		}
	}
	return nil
}

func countBy(key func(ctx context.Context, key string) (string, bool), resets func(string) []string) func(simulator.RateCounter) simulator.RateCounter {
	return func(next simulator.RateCounter) simulator.RateCounter {
		return &rateCounter{RateCounter: next, key: key, resets: resets}
	}
}

// uncounted lets the requests of op through without counting them.
func uncounted(op string) func(simulator.RateCounter) simulator.RateCounter {
	return countBy(func(ctx context.Context, key string) (string, bool) {
		return key, noteFrom(ctx).op != op
	}, nil)
}
