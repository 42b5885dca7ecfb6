package steps

// Rules list-envelope, list-walk, list-fields, list-limit-max and
// list-page-min of the matrix: an account's campaign list walked at every
// limit of matrix.WalkLimits, every envelope field checked on every page, every
// campaign's fields on every kind of campaign.
//
// Nothing here assumes that Campaign List lists every campaign: filtering
// is open (§4.2 "filteredRecords: count of records after filtering"), so
// the pages follow filteredRecords, and totalRecords is only held to be at
// least that and the same everywhere.

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/cucumber/godog"

	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/answer"
	"github.com/partner-v3/conformance-kit/steps/matrix"
	"github.com/partner-v3/conformance-kit/steps/session"
)

// maxWalkPages bounds the pages one walk reads before it jumps to the last
// page: a walk at limit 1 of a large account would spend the budget.
const maxWalkPages = 20

// walkPage is one page a walk read.
type walkPage struct {
	page int64
	x    *session.Exchange
	view *session.PageView // nil when the answer is not a valid page
}

// walk is an account's campaign list read at one limit.
type walk struct {
	limit int64
	pages []walkPage
	// whole reports that every page up to the last was read.
	whole bool
	// total and filtered are the values most pages report.
	total, filtered int64
}

func (s *scenario) registerWalk(sc *godog.ScenarioContext) {
	sc.Step(`^the (primary|second) account walks its campaign list at limits `+matrix.Limits(matrix.WalkLimits)+`$`, s.walksList)
	sc.Step(`^every page of every walk should carry the envelope of §4\.2$`, s.walkEnvelopes)
	sc.Step(`^each walk should hold every campaign once, as many as filteredRecords, the same campaigns at every limit$`, s.walkHoldsEachOnce)
	sc.Step(`^every campaign of every kind should carry the fields of §2\.2 in their formats:$`, s.walkFields)
	sc.Step(fmt.Sprintf(`^each account calls Campaign List for page 1 with limits %s$`, matrix.Limits(matrix.LimitsAboveMax)), s.listsAboveMax)
	sc.Step(fmt.Sprintf(`^each account calls Campaign List with limit 10 for pages %s$`, matrix.Limits(matrix.PagesBelowMin)), s.listsBelowOne)
	sc.Step(fmt.Sprintf(`^every answer should be a client error, or a success whose "pageSize" is at most %[1]d with at most %[1]d campaigns$`, spec.MaxPageSize), s.everyCapped)
	sc.Step(fmt.Sprintf(`^every answer should be a client error, or a success whose "pageNo" is at least %d$`, spec.MinPage), s.everyPageAtLeastOne)
}

func (s *scenario) walksList(ctx context.Context, role string) error {
	if _, ok := s.Account(role); !ok {
		return session.Skipf("no second account is configured")
	}
	s.walkRole = role
	s.walks = s.walks[:0]
	for _, l := range matrix.WalkLimits {
		w, err := s.walkAt(ctx, role, int64(l))
		if err != nil {
			return err
		}
		s.walks = append(s.walks, w)
	}
	return nil
}

// walkAt reads page 1 at limit, then the pages filteredRecords makes (at
// most maxWalkPages, then the last), then the page past the last.
func (s *scenario) walkAt(ctx context.Context, role string, limit int64) (*walk, error) {
	w := &walk{limit: limit}
	read := func(p int64) error {
		x, err := s.SendAs(ctx, role, spec.OpCampaignList, fmt.Appendf(nil, `{"limit": %d, "page": %d}`, limit, p))
		if err != nil {
			return err
		}
		s.Last = x
		wp := walkPage{page: p, x: x}
		if x.Status == http.StatusOK {
			wp.view, _ = session.ReadPage(x)
		}
		w.pages = append(w.pages, wp)
		return nil
	}
	if err := read(1); err != nil {
		return nil, err
	}
	first := w.pages[0].view
	if first == nil {
		return w, nil // the envelope check reports it
	}
	pages := ceilDiv(max(first.FilteredRecords, 0), limit)
	for p := int64(2); p <= min(pages, maxWalkPages); p++ {
		if err := read(p); err != nil {
			return nil, err
		}
	}
	if pages > maxWalkPages {
		if err := read(pages); err != nil {
			return nil, err
		}
	}
	w.whole = pages <= maxWalkPages
	if pages >= 1 {
		if err := read(pages + 1); err != nil {
			return nil, err
		}
	}
	var totals, filtereds []int64
	for _, p := range w.pages {
		if p.view != nil {
			totals = append(totals, p.view.TotalRecords)
			filtereds = append(filtereds, p.view.FilteredRecords)
		}
	}
	w.total, w.filtered = mode(totals), mode(filtereds)
	return w, nil
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// mode is the value most often seen (the first of a tie); 0 for none.
func mode(vs []int64) int64 {
	count := map[int64]int{}
	best, n := int64(0), 0
	for _, v := range vs {
		count[v]++
		if count[v] > n {
			best, n = v, count[v]
		}
	}
	return best
}

// servedAs reports, for a page past the last that was answered as another
// page (ok), whether it is that page exactly (as): pageNo names a page
// that exists and the walk read, with the same campaigns in the same
// order.
func servedAs(w *walk, wp walkPage, last int64) (as, ok bool) {
	if wp.page <= last || wp.view == nil || wp.view.PageNo == wp.page {
		return false, false
	}
	if wp.view.PageNo < 1 || wp.view.PageNo > last {
		return false, true
	}
	for _, other := range w.pages {
		if other.page == wp.view.PageNo && other.view != nil {
			return slices.EqualFunc(other.view.Campaigns, wp.view.Campaigns, func(a, b any) bool {
				ia, _ := answer.IntOf(session.IDOf(a))
				ib, _ := answer.IntOf(session.IDOf(b))
				return ia == ib
			}), true
		}
	}
	return false, true
}

// kindsOf names the kinds of page p of a walk whose last page is last.
func kindsOf(p, last int64) []string {
	switch {
	case p > last:
		return []string{matrix.PageKinds[3]}
	case p == 1 && last == 1:
		return []string{matrix.PageKinds[0], matrix.PageKinds[2]}
	case p == 1:
		return []string{matrix.PageKinds[0]}
	case p == last:
		return []string{matrix.PageKinds[2]}
	}
	return []string{matrix.PageKinds[1]}
}

func (s *scenario) walkEnvelopes() error {
	c := s.Cells("list-envelope")
	role := s.walkRole
	var ref *walk
	for _, w := range s.walks {
		last := ceilDiv(max(w.filtered, 0), w.limit)
		seen := map[string]bool{}
		for _, wp := range w.pages {
			kinds := kindsOf(wp.page, last)
			failAll := func(field, format string, args ...any) {
				for _, k := range kinds {
					c.Fail(session.CellOf("list-envelope", spec.OpCampaignList, role, matrix.WalkCondition(int(w.limit), k, field)), wp.x, format, args...)
				}
			}
			for _, k := range kinds {
				seen[k] = true
			}
			x := wp.x
			if x.Err != nil {
				failAll("campaigns", "page %d at limit %d got no answer", wp.page, w.limit)
				continue
			}
			if wp.page > last && x.Status/100 == 4 && x.Status != http.StatusTooManyRequests {
				s.Warn(c.Sections, x, "a page past the last one was refused with %d; spec §4.2 lists no error for a valid limit and page, so a client may expect an empty page", x.Status)
				continue
			}
			if x.Status != http.StatusOK {
				failAll("campaigns", "page %d at limit %d: status %d, want 200 (spec §4.2)", wp.page, w.limit, x.Status)
				continue
			}
			p, problem := session.ReadPage(x)
			if p == nil {
				failAll("campaigns", "page %d at limit %d: %s (spec §4.2)", wp.page, w.limit, problem)
				continue
			}
			check := func(field string, ok bool, format string, args ...any) {
				if !ok {
					failAll(field, "page %d at limit %d: "+format, append([]any{wp.page, w.limit}, args...)...)
				}
			}
			// A page past the last answered as a page that exists: §4.2's
			// pageNo is the "page number returned", and what a page past
			// the last returns is not shown. It passes, with a warning,
			// when it is that page exactly; the rest of the envelope is
			// then checked for that page.
			if as, ok := servedAs(w, wp, last); ok {
				if !as {
					failAll("pageNo", "page %d at limit %d: pageNo is %d, neither the page asked for nor a page of the walk served with that page's campaigns (spec §4.2: pageNo is the page number returned)", wp.page, w.limit, p.PageNo)
					continue
				}
				s.Warn(c.Sections, x, "page %d at limit %d, past the last, was answered with page %d (pageNo %d); spec §4.2 does not say what a page past the last returns, so a client may expect an empty page", wp.page, w.limit, p.PageNo, p.PageNo)
				wp.page = p.PageNo
			}
			check("pageNo", p.PageNo == wp.page, "pageNo is %d, want the page asked for", p.PageNo)
			check("pageSize", p.PageSize == w.limit, "pageSize is %d, want the limit asked for (the page size used)", p.PageSize)
			check("totalPages", p.TotalPages == last, "totalPages is %d; %d records after filtering at %d per page make %d pages", p.TotalPages, w.filtered, w.limit, last)
			check("filteredRecords", p.FilteredRecords == w.filtered && p.FilteredRecords >= 0,
				"filteredRecords is %d, but the walk's other pages say %d", p.FilteredRecords, w.filtered)
			check("totalRecords", p.TotalRecords == w.total && p.TotalRecords >= p.FilteredRecords,
				"totalRecords is %d (the walk's other pages say %d, filteredRecords %d): the total of the account's campaigns is at least the count after filtering, and the same on every page", p.TotalRecords, w.total, p.FilteredRecords)
			want := min(max(w.filtered-(wp.page-1)*w.limit, 0), w.limit)
			check("campaigns", int64(len(p.Campaigns)) == want, "the page holds %d campaigns; with %d records after filtering it should hold %d", len(p.Campaigns), w.filtered, want)
		}
		for _, k := range matrix.PageKinds {
			if !seen[k] {
				for _, f := range spec.ListFields() {
					c.Missing(session.CellOf("list-envelope", spec.OpCampaignList, role, matrix.WalkCondition(int(w.limit), k, f)), "the account's campaigns make no such page")
				}
			}
		}
		// Every limit reads the same list.
		if ref == nil {
			ref = w
		} else if w.total != ref.total || w.filtered != ref.filtered {
			for _, f := range []string{"totalRecords", "filteredRecords"} {
				c.Fail(session.CellOf("list-envelope", spec.OpCampaignList, role, matrix.WalkCondition(int(w.limit), matrix.PageKinds[0], f)), w.pages[0].x,
					"at limit %d the pages say %d records, %d after filtering; at limit %d %d and %d", w.limit, w.total, w.filtered, ref.limit, ref.total, ref.filtered)
			}
		}
	}
	return c.Err()
}

func (s *scenario) walkHoldsEachOnce() error {
	c := s.Cells("list-walk")
	role := s.walkRole
	var refIDs map[int64]bool
	var refLimit int64
	for _, w := range s.walks {
		cell := session.CellOf("list-walk", spec.OpCampaignList, role, matrix.LimitCondition(int(w.limit)))
		seen := map[int64]int64{}
		var n int64
		last := ceilDiv(max(w.filtered, 0), w.limit)
		for _, wp := range w.pages {
			if wp.view == nil {
				continue
			}
			if as, ok := servedAs(w, wp, last); ok && as {
				continue // a page read twice: walkEnvelopes warns of it
			}
			for _, cm := range wp.view.Campaigns {
				o, _ := cm.(map[string]any)
				id, ok := answer.IntOf(o["Id"])
				if !ok {
					c.Fail(cell, wp.x, "a campaign on page %d has no integer Id", wp.page)
					continue
				}
				if prev, dup := seen[id]; dup {
					c.Fail(cell, wp.x, "campaign %d appears on page %d and again on page %d: an Id identifies one campaign, and pages do not overlap", id, prev, wp.page)
				}
				seen[id] = wp.page
				n++
			}
		}
		if !w.whole {
			continue
		}
		if n != w.filtered {
			c.Fail(cell, w.pages[len(w.pages)-1].x, "the walk at limit %d yields %d campaigns; filteredRecords is %d", w.limit, n, w.filtered)
		}
		ids := map[int64]bool{}
		for id := range seen {
			ids[id] = true
		}
		if refIDs == nil {
			refIDs, refLimit = ids, w.limit
		} else if !maps.Equal(ids, refIDs) {
			c.Fail(cell, w.pages[0].x, "the walk at limit %d yields other campaigns than the walk at limit %d", w.limit, refLimit)
		}
	}
	return c.Err()
}

// campaignKinds names the kinds of §2.2 a campaign is of, by its own
// fields (a field of the wrong value names no kind).
func campaignKinds(o map[string]any) []string {
	var out []string
	switch o["campaignChannel"] {
	case "email":
		out = append(out, matrix.KindEmail)
	case "sms":
		out = append(out, matrix.KindSMS)
	}
	switch t, _ := answer.IntOf(o["campaignType"]); {
	case o["campaignType"] == nil:
	case t == 0:
		out = append(out, matrix.KindStatic)
	case t == 1:
		out = append(out, matrix.KindDynamic)
	}
	switch a, ok := answer.IntOf(o["active"]); {
	case ok && a == 0:
		out = append(out, matrix.KindDeleted)
	case ok && a == 1:
		out = append(out, matrix.KindActive)
	}
	return out
}

// walkFields checks every campaign the walks read against the table (the
// scenario's, which TestShapesMatchTheScenarios holds equal to
// answer.CampaignShape), once per kind of campaign it is of.
func (s *scenario) walkFields(t *godog.Table) error {
	rows, err := tableRows(t)
	if err != nil {
		return err
	}
	c := s.Cells("list-fields")
	role := s.walkRole
	seenKinds := map[string]bool{}
	var extra []string
	var extraX *session.Exchange
	for _, w := range s.walks {
		for _, wp := range w.pages {
			if wp.view == nil {
				continue
			}
			for i, cm := range wp.view.Campaigns {
				o, ok := cm.(map[string]any)
				if !ok {
					c.Fail(session.CellOf("list-fields", spec.OpCampaignList, role, matrix.FieldCondition("Id", matrix.KindActive)), wp.x, "campaign %d of page %d at limit %d is %s, not an object", i+1, wp.page, w.limit, answer.KindOf(cm))
					continue
				}
				kinds := campaignKinds(o)
				for _, k := range kinds {
					seenKinds[k] = true
				}
				_, ext := answer.CheckObject(o, rows)
				for _, e := range ext {
					if !slices.Contains(extra, e) {
						extra, extraX = append(extra, e), wp.x
					}
				}
				for _, row := range rows {
					p := answer.FieldProblem(o, row)
					if p == "" {
						continue
					}
					for _, k := range kinds {
						c.Fail(session.CellOf("list-fields", spec.OpCampaignList, role, matrix.FieldCondition(row.Field, k)), wp.x,
							"campaign %s on page %d at limit %d: %s", answer.JSONText(o["Id"]), wp.page, w.limit, p)
					}
				}
			}
		}
	}
	if len(extra) > 0 {
		slices.Sort(extra)
		s.Warn([]string{"2.2"}, extraX, "campaigns carry fields the spec does not list (§2.2): %s", answer.Quoted(extra))
	}
	for _, k := range matrix.CampaignKinds {
		if !seenKinds[k] {
			for _, f := range spec.CampaignFields() {
				c.Missing(session.CellOf("list-fields", spec.OpCampaignList, role, matrix.FieldCondition(f, k)), "the account lists no "+k)
			}
		}
	}
	return c.Err()
}

func (s *scenario) listsAboveMax(ctx context.Context) error {
	return s.SendCells(ctx, "list-limit-max", func(cell matrix.Cell) ([]byte, error) {
		return fmt.Appendf(nil, `{"limit": %s, "page": 1}`, strings.TrimPrefix(cell.Condition, "limit ")), nil
	})
}

func (s *scenario) listsBelowOne(ctx context.Context) error {
	return s.SendCells(ctx, "list-page-min", func(cell matrix.Cell) ([]byte, error) {
		return fmt.Appendf(nil, `{"limit": 10, "page": %s}`, strings.TrimPrefix(cell.Condition, "page ")), nil
	})
}

// checkEdges checks every cell's answer: a client error (not 429), or a
// page that ok accepts.
func (s *scenario) checkEdges(ok func(p *session.PageView) string) error {
	return s.EachCell(func(c *session.CellCheck, ce session.CellExchange) {
		x := ce.X
		switch {
		case x.Status/100 == 4 && x.Status != http.StatusTooManyRequests:
		case x.Status != http.StatusOK:
			c.Fail(ce.Cell, x, "status %d, want a client error or 200", x.Status)
		default:
			p, problem := session.ReadPage(x)
			if p == nil {
				c.Fail(ce.Cell, x, "%s (spec §4.2)", problem)
			} else if why := ok(p); why != "" {
				c.Fail(ce.Cell, x, "%s", why)
			}
		}
	})
}

func (s *scenario) everyCapped() error {
	return s.checkEdges(func(p *session.PageView) string {
		if p.PageSize > spec.MaxPageSize || len(p.Campaigns) > spec.MaxPageSize {
			return fmt.Sprintf("the page reports pageSize %d and holds %d campaigns; the maximum page size is %d (spec §4.2, §8)", p.PageSize, len(p.Campaigns), spec.MaxPageSize)
		}
		return ""
	})
}

func (s *scenario) everyPageAtLeastOne() error {
	return s.checkEdges(func(p *session.PageView) string {
		if p.PageNo < spec.MinPage {
			return fmt.Sprintf("the answer reports pageNo %d; page numbers start at %d (spec §4.2, §8)", p.PageNo, spec.MinPage)
		}
		return ""
	})
}
