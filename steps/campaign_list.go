package steps

// Spec §4.2 (Campaign List: the page envelope, limit and page), §2.2 (the
// campaign record), §3 (status, active and broadcast) and §8 (limit at most
// 50, page at least 1).

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/cucumber/godog"
)

func (s *scenario) registerCampaignList(sc *godog.ScenarioContext) {
	sc.Step(`^the account has at least (\d+) campaigns$`, s.accountHasAtLeast)
	sc.Step(`^the client calls Campaign List for page (-?\d+) with limit (-?\d+)$`, s.clientCallsListPage)
	sc.Step(`^the second account calls Campaign List for page (\d+) with limit (\d+)$`, s.secondCallsListPage)
	sc.Step(`^the client calls Campaign List for the page after the last one with limit (\d+)$`, s.clientCallsPageAfterLast)
	sc.Step(`^the client calls Campaign List for page 1 with a page size that divides the total exactly$`, s.clientCallsExactDivisor)
	sc.Step(`^the client reads every page of its campaign list with a page size that gives at least two pages$`, s.clientReadsEveryPage)
	sc.Step(`^the client reads every page of its campaign list with limit (\d+)$`, s.clientReadsEveryPageWith)
	sc.Step(`^"totalPages" should be "totalRecords" divided by the page size, rounded up$`, s.totalPagesRoundedUp)
	sc.Step(`^"filteredRecords" should not exceed "totalRecords"$`, s.filteredWithinTotal)
	sc.Step(`^the page should hold as many campaigns as the page size and the total allow$`, s.pageHoldsExpected)
	sc.Step(`^the page should hold at least 1 campaign$`, s.pageHoldsSome)
	sc.Step(`^the page should hold (\d+) campaigns$`, s.pageHoldsExactly)
	sc.Step(`^every campaign should have these fields:$`, s.everyCampaignHas)
	sc.Step(`^every page should report the same totalRecords and totalPages$`, s.pagesAgree)
	sc.Step(`^every page but the last should be full$`, s.pagesFull)
	sc.Step(`^every campaign should appear exactly once across the pages$`, s.campaignsOnce)
	sc.Step(`^the response should be a client error, or a success whose "pageSize" is at most (\d+) with at most (\d+) campaigns$`, s.clientErrorOrCapped)
	sc.Step(`^the response should be a client error, or a success whose "pageNo" is at least 1$`, s.clientErrorOrPageAtLeastOne)
	sc.Step(`^the response should be a success with the page envelope and no campaigns, or a client error$`, s.pastEndServed)
	sc.Step(`^the campaign Ids should be in ascending order across the pages$`, s.idsAscending)
	sc.Step(`^at least one campaign across the pages should be deleted$`, s.someDeleted)
	sc.Step(`^every campaign's "([^"]+)" should match "([^"]*)"$`, s.everyCampaignMatches)
	sc.Step(`^every campaign's "createdAt" should not be after its "updatedAt"$`, s.createdNotAfterUpdated)
	sc.Step(`^the two accounts' pages should share no campaign Id$`, s.accountsShareNoID)
}

func (s *scenario) accountHasAtLeast(ctx context.Context, n int64) error {
	info, err := s.campaigns(ctx, s.env.Primary)
	if err != nil {
		return err
	}
	if info.total < n {
		return skipf("the account has %d campaigns; the scenario needs at least %d", info.total, n)
	}
	return nil
}

func (s *scenario) clientCallsListPage(ctx context.Context, page, limit int64) error {
	return s.call(ctx, "Campaign List", fmt.Appendf(nil, `{"limit": %d, "page": %d}`, limit, page))
}

func (s *scenario) secondCallsListPage(ctx context.Context, page, limit int64) error {
	if s.second == nil {
		return skipf("no second account is configured")
	}
	x := s.send(ctx, s.second, http.MethodPost, operations["Campaign List"], "application/json", fmt.Appendf(nil, `{"limit": %d, "page": %d}`, limit, page))
	s.secondLast = x
	return s.took(x, "Campaign List of the second account")
}

func (s *scenario) clientCallsPageAfterLast(ctx context.Context, limit int64) error {
	info, err := s.campaigns(ctx, s.env.Primary)
	if err != nil {
		return err
	}
	page := int64(math.Ceil(float64(info.total)/float64(limit))) + 1
	return s.clientCallsListPage(ctx, page, limit)
}

// clientCallsExactDivisor asks for page 1 with the largest page size of at
// most 50 that divides the account's total and leaves at least two pages, so
// that a totalPages computed as floor(total/limit)+1 shows.
func (s *scenario) clientCallsExactDivisor(ctx context.Context) error {
	info, err := s.campaigns(ctx, s.env.Primary)
	if err != nil {
		return err
	}
	if info.total < 2 {
		return skipf("the account has %d campaigns: no page size leaves two full pages", info.total)
	}
	limit := int64(1)
	for d := min(info.total/2, 50); d >= 1; d-- {
		if info.total%d == 0 {
			limit = d
			break
		}
	}
	return s.clientCallsListPage(ctx, 1, limit)
}

// maxPages bounds the pages one scenario reads, so a target with thousands
// of campaigns does not spend the whole budget on one check.
const maxPages = 20

func (s *scenario) clientReadsEveryPage(ctx context.Context) error {
	info, err := s.campaigns(ctx, s.env.Primary)
	if err != nil {
		return err
	}
	if info.total < 2 {
		return skipf("the account has %d campaigns: one page only, nothing to paginate", info.total)
	}
	// About three pages, the last one partial when possible, so that a
	// totalPages rounded down shows.
	limit := min(max((info.total+2)/3, 1), 50)
	if info.total%limit == 0 && limit > 2 {
		limit--
	}
	return s.readPages(ctx, info.total, limit)
}

func (s *scenario) clientReadsEveryPageWith(ctx context.Context, limit int64) error {
	info, err := s.campaigns(ctx, s.env.Primary)
	if err != nil {
		return err
	}
	if info.total == 0 {
		return skipf("the account has no campaigns to check")
	}
	return s.readPages(ctx, info.total, limit)
}

// readPages reads pages 1 to the last (at most maxPages) with limit, and
// keeps them for the checks across pages.
func (s *scenario) readPages(ctx context.Context, total, limit int64) error {
	pages := min((total+limit-1)/limit, maxPages)
	for p := int64(1); p <= pages; p++ {
		if err := s.clientCallsListPage(ctx, p, limit); err != nil {
			return err
		}
		if s.last.status != http.StatusOK {
			return s.failf("page %d of %d with limit %d: status %d, want 200 (spec §4.2)", p, pages, limit, s.last.status)
		}
		s.pages = append(s.pages, s.last)
	}
	return nil
}

// pageView is an answer's envelope numbers and campaigns, checked for type.
type pageView struct {
	pageNo, pageSize, totalPages, totalRecords, filteredRecords int64
	campaigns                                                   []any
}

// pageOf reads a 200 answer's envelope and fails on any field of §4.2 that
// is missing or not of its type.
func (s *scenario) pageOf(x *exchange) (*pageView, error) {
	if x.status != http.StatusOK {
		return nil, s.failOn(x, "status %d, want 200", x.status)
	}
	m, err := x.object()
	if err != nil {
		return nil, s.failOn(x, "%v", err)
	}
	var p pageView
	for _, f := range []struct {
		name string
		dst  *int64
	}{{"pageNo", &p.pageNo}, {"pageSize", &p.pageSize}, {"totalPages", &p.totalPages}, {"totalRecords", &p.totalRecords}, {"filteredRecords", &p.filteredRecords}} {
		v, ok := intOf(m[f.name])
		if !ok {
			return nil, s.failOn(x, "%q is %s, want an integer (spec §4.2)", f.name, kindOf(m[f.name]))
		}
		*f.dst = v
	}
	cs, ok := m["campaigns"].([]any)
	if !ok {
		return nil, s.failOn(x, `"campaigns" is %s, want an array (spec §4.2)`, kindOf(m["campaigns"]))
	}
	p.campaigns = cs
	return &p, nil
}

// requested returns the limit and page a Campaign List asked for.
func (x *exchange) requested() (limit, page int64) {
	var req struct{ Limit, Page int64 }
	_ = json.Unmarshal(x.body, &req)
	return req.Limit, req.Page
}

// wantOnPage is how many campaigns a page of limit holds out of total.
func wantOnPage(total, page, limit int64) int64 {
	return min(max(total-(page-1)*limit, 0), limit)
}

func (s *scenario) totalPagesRoundedUp() error {
	p, err := s.pageOf(s.last)
	if err != nil {
		return err
	}
	limit, _ := s.last.requested()
	if want := (p.filteredRecords + limit - 1) / limit; p.totalPages != want {
		return s.failf("totalPages is %d; %d records after filtering at %d per page make %d pages", p.totalPages, p.filteredRecords, limit, want)
	}
	return nil
}

// filteredWithinTotal: filteredRecords counts the records left after
// filtering (spec §4.2), so it cannot exceed totalRecords.
func (s *scenario) filteredWithinTotal() error {
	p, err := s.pageOf(s.last)
	if err != nil {
		return err
	}
	if p.filteredRecords < 0 || p.filteredRecords > p.totalRecords {
		return s.failf("filteredRecords is %d with totalRecords %d: a count of the records after filtering lies between 0 and the total", p.filteredRecords, p.totalRecords)
	}
	return nil
}

func (s *scenario) pageHoldsExpected() error {
	p, err := s.pageOf(s.last)
	if err != nil {
		return err
	}
	limit, page := s.last.requested()
	if want := wantOnPage(p.filteredRecords, page, limit); int64(len(p.campaigns)) != want {
		return s.failf("page %d with limit %d holds %d campaigns; with %d records after filtering it should hold %d", page, limit, len(p.campaigns), p.filteredRecords, want)
	}
	return nil
}

func (s *scenario) pageHoldsSome() error {
	p, err := s.pageOf(s.last)
	if err != nil {
		return err
	}
	if len(p.campaigns) == 0 {
		if p.totalRecords == 0 {
			return skipf("the account has no campaigns to check")
		}
		return s.failf("the page is empty although totalRecords is %d", p.totalRecords)
	}
	return nil
}

func (s *scenario) pageHoldsExactly(n int) error {
	p, err := s.pageOf(s.last)
	if err != nil {
		return err
	}
	if len(p.campaigns) != n {
		return s.failf("the page holds %d campaigns, want %d", len(p.campaigns), n)
	}
	return nil
}

// everyCampaignHas checks every campaign of every page the scenario read
// (or of its last answer): each channel, deleted ones, the last page.
func (s *scenario) everyCampaignHas(t *godog.Table) error {
	rows, err := tableRows(t)
	if err != nil {
		return err
	}
	xs := s.pages
	if len(xs) == 0 {
		xs = []*exchange{s.last}
	}
	var problems, extra []string
	var first *exchange
	seenExtra := map[string]bool{}
	for n, x := range xs {
		p, err := s.pageOf(x)
		if err != nil {
			return err
		}
		for i, c := range p.campaigns {
			o, ok := c.(map[string]any)
			if !ok {
				problems = append(problems, fmt.Sprintf("page %d, campaign %d is %s, not an object", n+1, i+1, kindOf(c)))
				first = firstOf(first, x)
				continue
			}
			probs, ext := checkObject(o, rows)
			for _, pr := range probs {
				problems = append(problems, fmt.Sprintf("page %d, campaign %d (Id %v, %v): %s", n+1, i+1, jsonText(o["Id"]), jsonText(o["campaignChannel"]), pr))
				first = firstOf(first, x)
			}
			for _, k := range ext {
				if !seenExtra[k] {
					seenExtra[k] = true
					extra = append(extra, k)
				}
			}
		}
	}
	if len(extra) > 0 {
		s.warn(nil, xs[0], "campaigns carry fields the spec does not list (§2.2): %s", quoted(extra))
	}
	if len(problems) > 0 {
		if len(problems) > 20 {
			problems = append(problems[:20], fmt.Sprintf("… and %d more", len(problems)-20))
		}
		return s.failOn(first, "campaigns break the spec's record:\n  %s", strings.Join(problems, "\n  "))
	}
	return nil
}

// firstOf keeps the first exchange found.
func firstOf(first, x *exchange) *exchange {
	if first == nil {
		return x
	}
	return first
}

func (s *scenario) pageViews() ([]*pageView, error) {
	var out []*pageView
	for _, x := range s.pages {
		p, err := s.pageOf(x)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

func (s *scenario) pagesAgree() error {
	ps, err := s.pageViews()
	if err != nil {
		return err
	}
	for i, p := range ps {
		if p.totalRecords != ps[0].totalRecords || p.totalPages != ps[0].totalPages {
			return s.failOn(s.pages[i], "page %d reports %d records on %d pages; page 1 reported %d on %d", i+1, p.totalRecords, p.totalPages, ps[0].totalRecords, ps[0].totalPages)
		}
		limit, _ := s.pages[i].requested()
		if want := (p.filteredRecords + limit - 1) / limit; p.totalPages != want {
			return s.failOn(s.pages[i], "totalPages is %d; %d records after filtering at %d per page make %d pages (spec §4.2)", p.totalPages, p.filteredRecords, limit, want)
		}
		if p.pageNo != int64(i+1) {
			return s.failOn(s.pages[i], "page %d reports pageNo %d", i+1, p.pageNo)
		}
	}
	return nil
}

func (s *scenario) pagesFull() error {
	ps, err := s.pageViews()
	if err != nil {
		return err
	}
	for i, p := range ps {
		limit, page := s.pages[i].requested()
		if want := wantOnPage(p.filteredRecords, page, limit); int64(len(p.campaigns)) != want {
			return s.failOn(s.pages[i], "page %d with limit %d holds %d campaigns, want %d of %d records after filtering", page, limit, len(p.campaigns), want, p.filteredRecords)
		}
	}
	return nil
}

func (s *scenario) campaignsOnce() error {
	ps, err := s.pageViews()
	if err != nil {
		return err
	}
	seen := make(map[int64]int)
	n := 0
	for i, p := range ps {
		for _, c := range p.campaigns {
			o, _ := c.(map[string]any)
			id, ok := intOf(o["Id"])
			if !ok {
				return s.failOn(s.pages[i], "a campaign on page %d has no integer Id", i+1)
			}
			if prev, dup := seen[id]; dup {
				return s.failOn(s.pages[i], "campaign %d appears on page %d and again on page %d: an Id identifies one campaign, and pages do not overlap", id, prev, i+1)
			}
			seen[id] = i + 1
			n++
		}
	}
	if ps[0].totalPages <= maxPages && int64(n) != ps[0].filteredRecords {
		return s.failOn(s.pages[len(s.pages)-1], "the %d pages hold %d distinct campaigns; filteredRecords is %d", len(ps), n, ps[0].filteredRecords)
	}
	return nil
}

// clientError reports whether the last answer is a 4xx other than 429.
func (s *scenario) clientError() bool {
	return s.last.status/100 == 4 && s.last.status != http.StatusTooManyRequests
}

func (s *scenario) clientErrorOrCapped(maxSize, maxCampaigns int64) error {
	if s.clientError() {
		return nil
	}
	p, err := s.pageOf(s.last)
	if err != nil {
		return err
	}
	if p.pageSize > maxSize || int64(len(p.campaigns)) > maxCampaigns {
		return s.failf("the page reports pageSize %d and holds %d campaigns; the maximum page size is %d (spec §4.2, §8)", p.pageSize, len(p.campaigns), maxSize)
	}
	return nil
}

func (s *scenario) clientErrorOrPageAtLeastOne() error {
	if s.clientError() {
		return nil
	}
	p, err := s.pageOf(s.last)
	if err != nil {
		return err
	}
	if p.pageNo < 1 {
		return s.failf("the answer reports pageNo %d; page numbers start at 1 (spec §4.2, §8)", p.pageNo)
	}
	return nil
}

// pastEndServed: a page past the last is a valid request (limit and page
// keep their rules), and §4.2 lists no error for it, so it should succeed
// with the whole envelope and no campaigns. A client error is allowed with
// a warning; anything else fails.
func (s *scenario) pastEndServed() error {
	if s.clientError() {
		s.warn(nil, s.last, "a page past the last one was refused with %d; spec §4.2 lists no error for a valid limit and page, so a client may expect an empty page", s.last.status)
		return nil
	}
	p, err := s.pageOf(s.last)
	if err != nil {
		return err
	}
	limit, page := s.last.requested()
	switch {
	case len(p.campaigns) != 0:
		return s.failf("page %d, past the last of %d, holds %d campaigns", page, p.totalPages, len(p.campaigns))
	case p.pageNo != page:
		return s.failf("page %d was asked for, the answer reports pageNo %d", page, p.pageNo)
	case p.totalPages != (p.filteredRecords+limit-1)/limit:
		return s.failf("totalPages is %d; %d records after filtering at %d per page make %d pages", p.totalPages, p.filteredRecords, limit, (p.filteredRecords+limit-1)/limit)
	}
	return nil
}

func (s *scenario) idsAscending() error {
	ps, err := s.pageViews()
	if err != nil {
		return err
	}
	prev := int64(math.MinInt64)
	for i, p := range ps {
		for _, c := range p.campaigns {
			o, _ := c.(map[string]any)
			id, _ := intOf(o["Id"])
			if id <= prev {
				return s.failOn(s.pages[i], "campaign %d follows campaign %d: not in ascending Id order", id, prev)
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
		for _, c := range p.campaigns {
			o, _ := c.(map[string]any)
			if a, ok := intOf(o["active"]); ok && a == 0 {
				return nil
			}
		}
	}
	return s.failf("no listed campaign has active 0: deleted campaigns are not listed")
}

func (s *scenario) everyCampaignMatches(field, pattern string) error {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return fmt.Errorf("scenario pattern %q: %w", pattern, err)
	}
	p, err := s.pageOf(s.last)
	if err != nil {
		return err
	}
	for _, c := range p.campaigns {
		o, _ := c.(map[string]any)
		if v, _ := o[field].(string); !re.MatchString(v) {
			return s.failf("campaign %v: %s %q does not match %s", jsonText(o["Id"]), field, v, pattern)
		}
	}
	return nil
}

func (s *scenario) createdNotAfterUpdated() error {
	p, err := s.pageOf(s.last)
	if err != nil {
		return err
	}
	for _, c := range p.campaigns {
		o, _ := c.(map[string]any)
		cs, _ := o["createdAt"].(string)
		us, _ := o["updatedAt"].(string)
		ct, err1 := time.Parse(time.RFC3339Nano, cs)
		ut, err2 := time.Parse(time.RFC3339Nano, us)
		if err1 != nil || err2 != nil || ct.After(ut) {
			return s.failf("campaign %v: createdAt %q, updatedAt %q", jsonText(o["Id"]), cs, us)
		}
	}
	return nil
}

func (s *scenario) accountsShareNoID() error {
	mine := s.ownLast
	if mine == nil || s.secondLast == nil {
		return s.failf("the scenario needs both accounts' pages")
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
	for _, c := range a.campaigns {
		o, _ := c.(map[string]any)
		id, _ := intOf(o["Id"])
		ids[id] = true
	}
	for _, c := range b.campaigns {
		o, _ := c.(map[string]any)
		if id, _ := intOf(o["Id"]); ids[id] {
			return s.failOn(s.secondLast, "campaign %d is listed for both accounts", id)
		}
	}
	return nil
}
