package steps

// Spec §4.2 (Campaign List: the page envelope, limit and page), §2.2 (the
// campaign record), §3 (status, active and broadcast) and §8 (limit at most
// 50, page at least 1).

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"time"

	"github.com/cucumber/godog"

	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/answer"
	"github.com/partner-v3/conformance-kit/steps/session"
)

func (s *scenario) registerCampaignList(sc *godog.ScenarioContext) {
	sc.Step(`^the client calls Campaign List for page (-?\d+) with limit (-?\d+)$`, s.clientCallsListPage)
	sc.Step(`^the second account calls Campaign List for page (\d+) with limit (\d+)$`, s.secondCallsListPage)
	sc.Step(`^the client calls Campaign List for the page after the last one with limit (\d+)$`, s.clientCallsPageAfterLast)
	sc.Step(`^the client reads every page of its campaign list with a page size that gives at least two pages$`, s.clientReadsEveryPage)
	sc.Step(`^the page should hold (\d+) campaigns$`, s.pageHoldsExactly)
	sc.Step(`^the campaign Ids should be in ascending order across the pages$`, s.idsAscending)
	sc.Step(`^at least one campaign across the pages should be deleted$`, s.someDeleted)
	sc.Step(`^every campaign's "([^"]+)" should match "([^"]*)"$`, s.everyCampaignMatches)
	sc.Step(`^every campaign's "createdAt" should not be after its "updatedAt"$`, s.createdNotAfterUpdated)
	sc.Step(`^the two accounts' pages should share no campaign Id$`, s.accountsShareNoID)
}

func (s *scenario) clientCallsListPage(ctx context.Context, page, limit int64) error {
	return s.Call(ctx, spec.OpCampaignList, fmt.Appendf(nil, `{"limit": %d, "page": %d}`, limit, page))
}

func (s *scenario) secondCallsListPage(ctx context.Context, page, limit int64) error {
	if s.SecondClient == nil {
		return session.Skipf("no second account is configured")
	}
	x := s.Send(ctx, s.SecondClient, http.MethodPost, session.Operations[spec.OpCampaignList], spec.ContentType, fmt.Appendf(nil, `{"limit": %d, "page": %d}`, limit, page))
	s.secondLast = x
	return s.Took(x, "Campaign List of the second account")
}

func (s *scenario) clientCallsPageAfterLast(ctx context.Context, limit int64) error {
	info, err := s.Campaigns(ctx, s.Target.Primary)
	if err != nil {
		return err
	}
	page := int64(math.Ceil(float64(info.Total)/float64(limit))) + 1
	return s.clientCallsListPage(ctx, page, limit)
}

// maxPages bounds the pages one scenario reads, so a target with thousands
// of campaigns does not spend the whole budget on one check.
const maxPages = 20

func (s *scenario) clientReadsEveryPage(ctx context.Context) error {
	info, err := s.Campaigns(ctx, s.Target.Primary)
	if err != nil {
		return err
	}
	if info.Total < 2 {
		return session.Skipf("the account has %d campaigns: one page only, nothing to paginate", info.Total)
	}
	// About three pages, the last one partial when possible, so that a
	// totalPages rounded down shows.
	limit := min(max((info.Total+2)/3, 1), spec.MaxPageSize)
	if info.Total%limit == 0 && limit > 2 {
		limit--
	}
	return s.readPages(ctx, info.Total, limit)
}

// readPages reads pages 1 to the last (at most maxPages) with limit, and
// keeps them for the checks across pages.
func (s *scenario) readPages(ctx context.Context, total, limit int64) error {
	pages := min((total+limit-1)/limit, maxPages)
	for p := int64(1); p <= pages; p++ {
		if err := s.clientCallsListPage(ctx, p, limit); err != nil {
			return err
		}
		if s.Last.Status != http.StatusOK {
			return s.Failf("page %d of %d with limit %d: status %d, want 200 (spec §4.2)", p, pages, limit, s.Last.Status)
		}
		s.pages = append(s.pages, s.Last)
	}
	return nil
}

// pageOf reads a 200 answer's envelope and fails on any field of §4.2 that
// is missing or not of its type.
func (s *scenario) pageOf(x *session.Exchange) (*session.PageView, error) {
	if x.Status != http.StatusOK {
		return nil, s.FailOn(x, "status %d, want 200", x.Status)
	}
	p, problem := session.ReadPage(x)
	if p == nil {
		return nil, s.FailOn(x, "%s (spec §4.2)", problem)
	}
	return p, nil
}

func (s *scenario) pageHoldsExactly(n int) error {
	p, err := s.pageOf(s.Last)
	if err != nil {
		return err
	}
	if len(p.Campaigns) != n {
		return s.Failf("the page holds %d campaigns, want %d", len(p.Campaigns), n)
	}
	return nil
}

func (s *scenario) pageViews() ([]*session.PageView, error) {
	var out []*session.PageView
	for _, x := range s.pages {
		p, err := s.pageOf(x)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

func (s *scenario) idsAscending() error {
	ps, err := s.pageViews()
	if err != nil {
		return err
	}
	prev := int64(math.MinInt64)
	for i, p := range ps {
		for _, c := range p.Campaigns {
			o, _ := c.(map[string]any)
			id, _ := answer.IntOf(o["Id"])
			if id <= prev {
				return s.FailOn(s.pages[i], "campaign %d follows campaign %d: not in ascending Id order", id, prev)
			}
			prev = id
		}
	}
	return nil
}

func (s *scenario) someDeleted() error {
	ps, err := s.pageViews()
	if err != nil {
		return err
	}
	for _, p := range ps {
		for _, c := range p.Campaigns {
			o, _ := c.(map[string]any)
			if a, ok := answer.IntOf(o["active"]); ok && a == 0 {
				return nil
			}
		}
	}
	return s.Failf("no listed campaign has active 0: deleted campaigns are not listed")
}

func (s *scenario) everyCampaignMatches(field, pattern string) error {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return fmt.Errorf("scenario pattern %q: %w", pattern, err)
	}
	p, err := s.pageOf(s.Last)
	if err != nil {
		return err
	}
	for _, c := range p.Campaigns {
		o, _ := c.(map[string]any)
		if v, _ := o[field].(string); !re.MatchString(v) {
			return s.Failf("campaign %v: %s %q does not match %s", answer.JSONText(o["Id"]), field, v, pattern)
		}
	}
	return nil
}

func (s *scenario) createdNotAfterUpdated() error {
	p, err := s.pageOf(s.Last)
	if err != nil {
		return err
	}
	for _, c := range p.Campaigns {
		o, _ := c.(map[string]any)
		cs, _ := o["createdAt"].(string)
		us, _ := o["updatedAt"].(string)
		ct, err1 := time.Parse(time.RFC3339Nano, cs)
		ut, err2 := time.Parse(time.RFC3339Nano, us)
		if err1 != nil || err2 != nil || ct.After(ut) {
			return s.Failf("campaign %v: createdAt %q, updatedAt %q", answer.JSONText(o["Id"]), cs, us)
		}
	}
	return nil
}

func (s *scenario) accountsShareNoID() error {
	mine := s.OwnLast
	if mine == nil || s.secondLast == nil {
		return s.Failf("the scenario needs both accounts' pages")
	}
	a, err := s.pageOf(mine)
	if err != nil {
		return err
	}
	b, err := s.pageOf(s.secondLast)
	if err != nil {
		return err
	}
	ids := make(map[int64]bool)
	for _, c := range a.Campaigns {
		o, _ := c.(map[string]any)
		id, _ := answer.IntOf(o["Id"])
		ids[id] = true
	}
	for _, c := range b.Campaigns {
		o, _ := c.(map[string]any)
		if id, _ := answer.IntOf(o["Id"]); ids[id] {
			return s.FailOn(s.secondLast, "campaign %d is listed for both accounts", id)
		}
	}
	return nil
}
