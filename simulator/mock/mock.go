// Package mock has stores whose behaviour a test sets per method, for the
// failure paths a real backend will not produce on demand.
package mock

import (
	"context"

	"github.com/partner-v3/conformance-kit/simulator"
)

var (
	_ simulator.ContactStore  = (*ContactStore)(nil)
	_ simulator.CampaignStore = (*CampaignStore)(nil)
)

// ContactStore calls the Fn field of each method.
type ContactStore struct {
	UpsertContactFn  func(ctx context.Context, c *simulator.Contact) (*simulator.Contact, bool, error)
	AddContactFn     func(ctx context.Context, c *simulator.Contact, rule simulator.DuplicateRule) (*simulator.Contact, bool, error)
	FindContactsFn   func(ctx context.Context, f simulator.ContactFilter) ([]*simulator.Contact, int, error)
	DeleteContactsFn func(ctx context.Context, accountID string) error
}

// UpsertContact calls UpsertContactFn.
func (s *ContactStore) UpsertContact(ctx context.Context, c *simulator.Contact) (*simulator.Contact, bool, error) {
	return s.UpsertContactFn(ctx, c)
}

// AddContact calls AddContactFn.
func (s *ContactStore) AddContact(ctx context.Context, c *simulator.Contact, rule simulator.DuplicateRule) (*simulator.Contact, bool, error) {
	return s.AddContactFn(ctx, c, rule)
}

// FindContacts calls FindContactsFn.
func (s *ContactStore) FindContacts(ctx context.Context, f simulator.ContactFilter) ([]*simulator.Contact, int, error) {
	return s.FindContactsFn(ctx, f)
}

// DeleteContacts calls DeleteContactsFn.
func (s *ContactStore) DeleteContacts(ctx context.Context, accountID string) error {
	return s.DeleteContactsFn(ctx, accountID)
}

// CampaignStore calls the Fn field of each method.
type CampaignStore struct {
	FindCampaignsFn    func(ctx context.Context, f simulator.CampaignFilter) ([]*simulator.Campaign, int, error)
	FindCampaignByIDFn func(ctx context.Context, accountID string, id int64) (*simulator.Campaign, error)
	SeedCampaignsFn    func(ctx context.Context, version string, cs []*simulator.Campaign) (bool, error)
	ForgetCampaignsFn  func(accountID string)
}

// FindCampaigns calls FindCampaignsFn.
func (s *CampaignStore) FindCampaigns(ctx context.Context, f simulator.CampaignFilter) ([]*simulator.Campaign, int, error) {
	return s.FindCampaignsFn(ctx, f)
}

// FindCampaignByID calls FindCampaignByIDFn.
func (s *CampaignStore) FindCampaignByID(ctx context.Context, accountID string, id int64) (*simulator.Campaign, error) {
	return s.FindCampaignByIDFn(ctx, accountID, id)
}

// ForgetCampaigns calls ForgetCampaignsFn when it is set: most tests make
// no throwaway account, so a nil one does nothing.
func (s *CampaignStore) ForgetCampaigns(accountID string) {
	if s.ForgetCampaignsFn != nil {
		s.ForgetCampaignsFn(accountID)
	}
}

// SeedCampaigns calls SeedCampaignsFn.
func (s *CampaignStore) SeedCampaigns(ctx context.Context, version string, cs []*simulator.Campaign) (bool, error) {
	return s.SeedCampaignsFn(ctx, version, cs)
}

var _ simulator.Gate = (*Gate)(nil)

// Gate calls AdmitFn.
type Gate struct {
	AdmitFn func(ctx context.Context, a simulator.Arrival) (simulator.Admission, error)
}

// Admit calls AdmitFn.
func (g *Gate) Admit(ctx context.Context, a simulator.Arrival) (simulator.Admission, error) {
	return g.AdmitFn(ctx, a)
}
