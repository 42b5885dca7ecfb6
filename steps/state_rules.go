package steps

// Rules list-concurrent and independence of the matrix: state. Two
// clients walking one account's pages at once each get a consistent walk
// (§4.2: the request names the page), and reading (§4.2, §4.3) or adding a
// contact (§4.1) never changes what another operation answers.

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/cucumber/godog"

	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/answer"
	"github.com/partner-v3/conformance-kit/steps/internal/wire"
	"github.com/partner-v3/conformance-kit/steps/matrix"
	"github.com/partner-v3/conformance-kit/steps/session"
)

// maxConcurrentPages bounds the pages each walk of rule list-concurrent
// reads: the first pages are enough to show a pager that keeps state.
const maxConcurrentPages = 2

func (s *scenario) registerState(sc *godog.ScenarioContext) {
	sc.Step(`^each account walks its campaign list alone, then with two clients at once$`, s.walksConcurrently)
	sc.Step(`^each of the two walks should hold every campaign once, as many as filteredRecords, the same campaigns as the walk alone$`, s.concurrentWalksConsistent)
	sc.Step(`^each account reads its campaign list and statistics around a Campaign Stats call and an Add Contact$`, s.readsAroundOperations)
	sc.Step(`^neither operation should have changed what the other operations answer$`, s.operationsIndependent)
}

// concurrentRun is one account's walks of rule list-concurrent: alone,
// then two at once.
type concurrentRun struct {
	cell  matrix.Cell
	limit int64
	whole bool
	alone []*session.Exchange
	both  [2][]*session.Exchange
	// why is set when the account's data holds no such walk.
	why string
}

// walksConcurrently walks, for each account, the first pages of its list
// alone, then with two clients at once: for each page, both clients'
// requests are sent together from goroutines of their own, and the next
// page only after both answered, so the walks interleave page by page.
func (s *scenario) walksConcurrently(ctx context.Context) error {
	c := s.Cells("list-concurrent")
	s.concurrent = s.concurrent[:0]
	for _, cell := range c.Rule.Cells() {
		acct, ok := c.AccountOf(cell)
		if !ok {
			continue
		}
		info, err := s.Campaigns(ctx, acct)
		if err != nil {
			return err
		}
		run := &concurrentRun{cell: cell}
		s.concurrent = append(s.concurrent, run)
		if info.Total < 2 {
			run.why = fmt.Sprintf("the account lists %d campaigns: no second page to walk to", info.Total)
			continue
		}
		run.limit = min(ceilDiv(info.Total, 2), spec.MaxPageSize)
		pages := ceilDiv(info.Total, run.limit)
		run.whole = pages <= maxConcurrentPages
		body := func(p int64) []byte { return fmt.Appendf(nil, `{"limit": %d, "page": %d}`, run.limit, p) }
		for p := int64(1); p <= min(pages, maxConcurrentPages); p++ {
			x, err := s.SendAs(ctx, cell.Account, spec.OpCampaignList, body(p))
			if err != nil {
				return err
			}
			s.Last = x
			run.alone = append(run.alone, x)
		}
		for p := int64(1); p <= min(pages, maxConcurrentPages); p++ {
			var wg sync.WaitGroup
			var got [2]*session.Exchange
			for i := range got {
				wg.Add(1)
				go func() {
					defer wg.Done()
					// Each client its own: send is safe in a goroutine by
					// way of SendVia (session).
					got[i], _ = s.SendVia(ctx, wire.Shared, false, session.CredentialHeaders(acct), spec.OpCampaignList, body(p))
				}()
			}
			wg.Wait()
			for i, x := range got {
				if x.Budget != "" {
					return s.FailIn([]string{"8"}, x, "%s", x.Budget)
				}
				run.both[i] = append(run.both[i], x)
			}
		}
	}
	s.Pending = c
	return nil
}

// walkIDs reads a walk's pages: the Ids in order, the filteredRecords of
// its first page, and the first problem ("" for none).
func walkIDs(xs []*session.Exchange, limit int64) (ids []int64, filtered int64, problem string, at *session.Exchange) {
	for i, x := range xs {
		if x.Err != nil {
			return nil, 0, fmt.Sprintf("page %d got no answer", i+1), x
		}
		if x.Status != http.StatusOK {
			return nil, 0, fmt.Sprintf("page %d at limit %d: status %d, want 200 (spec §4.2)", i+1, limit, x.Status), x
		}
		p, why := session.ReadPage(x)
		if p == nil {
			return nil, 0, fmt.Sprintf("page %d at limit %d: %s (spec §4.2)", i+1, limit, why), x
		}
		if i == 0 {
			filtered = p.FilteredRecords
		}
		for _, cm := range p.Campaigns {
			id, ok := answer.IntOf(session.IDOf(cm))
			if !ok {
				return nil, 0, fmt.Sprintf("a campaign on page %d has no integer Id", i+1), x
			}
			ids = append(ids, id)
		}
	}
	return ids, filtered, "", nil
}

func (s *scenario) concurrentWalksConsistent() error {
	c := s.Pending
	if c == nil || c.Rule.ID != "list-concurrent" {
		return fmt.Errorf("no concurrent walks were made before this step")
	}
	for _, run := range s.concurrent {
		if run.why != "" {
			c.Missing(run.cell, run.why)
			continue
		}
		alone, filtered, problem, at := walkIDs(run.alone, run.limit)
		if problem != "" {
			// The walk alone is rule list-walk's to judge: without it
			// there is nothing to compare with.
			c.Missing(run.cell, "the walk alone did not succeed: "+problem)
			_ = at
			continue
		}
		want := slices.Sorted(slices.Values(alone))
		for i, xs := range run.both {
			ids, _, problem, at := walkIDs(xs, run.limit)
			if problem != "" {
				c.Fail(run.cell, at, "client %d of 2: %s", i+1, problem)
				continue
			}
			seen := map[int64]bool{}
			var dups []int64
			for _, id := range ids {
				if seen[id] {
					dups = append(dups, id)
				}
				seen[id] = true
			}
			last := xs[len(xs)-1]
			switch got := slices.Sorted(maps.Keys(seen)); {
			case len(dups) > 0:
				c.Fail(run.cell, last, "client %d of 2, walking at limit %d while the other walked too, met campaigns %v twice: the pages overlapped (the request names its page, spec §4.2)", i+1, run.limit, dups)
			case run.whole && int64(len(ids)) != filtered:
				c.Fail(run.cell, last, "client %d of 2 walked %d campaigns at limit %d while the other walked too; filteredRecords is %d (spec §4.2)", i+1, len(ids), run.limit, filtered)
			case !slices.Equal(got, want):
				c.Fail(run.cell, last, "client %d of 2, walking at limit %d while the other walked too, got campaigns %s; the same pages read alone hold %s (spec §4.2: the page asked for)", i+1, run.limit, idList(got), idList(want))
			}
		}
	}
	return c.Err()
}

// idList shows a few Ids.
func idList(ids []int64) string {
	if len(ids) > 12 {
		return fmt.Sprintf("%v … (%d in all)", ids[:12], len(ids))
	}
	return fmt.Sprint(ids)
}

// listRead is page 1 of an account's list as rule independence reads it:
// the Ids in order and each campaign as canonical JSON.
type listRead struct {
	x     *session.Exchange
	order []int64
	camps map[int64]string
}

// statsRead is a campaign's statistics, every count by "emailStat.Sent".
type statsRead struct {
	x      *session.Exchange
	counts map[string]int64
}

// independenceRun is one account's reads of rule independence.
type independenceRun struct {
	role string
	// lists: before (twice), after Stats, before the contact, after it.
	l0, l1, l2, l3, l4 *listRead
	// stats: after the first call, twice more, after the contact.
	s1, s2, s3, s4 *statsRead
	campaignID     int64
	contact        *session.Exchange
	why            string // the account's data or answers hold no check
}

func (s *scenario) readList(ctx context.Context, role string) (*listRead, error) {
	x, err := s.SendAs(ctx, role, spec.OpCampaignList, fmt.Appendf(nil, `{"limit": %d, "page": 1}`, spec.MaxPageSize))
	if err != nil {
		return nil, err
	}
	s.Last = x
	r := &listRead{x: x, camps: map[int64]string{}}
	if x.Status != http.StatusOK {
		return r, nil
	}
	p, _ := session.ReadPage(x)
	if p == nil {
		return r, nil
	}
	for _, cm := range p.Campaigns {
		id, ok := answer.IntOf(session.IDOf(cm))
		if !ok {
			continue
		}
		b, _ := json.Marshal(cm) // map keys sorted: canonical
		r.order, r.camps[id] = append(r.order, id), string(b)
	}
	return r, nil
}

func (s *scenario) readStats(ctx context.Context, role string, id int64) (*statsRead, error) {
	x, err := s.SendAs(ctx, role, spec.OpCampaignStats, fmt.Appendf(nil, `{"campaignId": %d}`, id))
	if err != nil {
		return nil, err
	}
	s.Last = x
	r := &statsRead{x: x}
	m, err := x.Object()
	if x.Status != http.StatusOK || err != nil {
		return r, nil
	}
	r.counts = map[string]int64{}
	for _, obj := range []string{spec.EmailStat, spec.SMSStat} {
		o, _ := m[obj].(map[string]any)
		for k, v := range o {
			if n, ok := answer.IntOf(v); ok {
				r.counts[obj+"."+k] = n
			}
		}
	}
	return r, nil
}

// readsAroundOperations makes, for each account, the reads of rule
// independence: page 1 twice (nothing between), a Campaign Stats call of
// the page's last campaign, page 1, two more Stats calls, page 1, an Add
// Contact, page 1 and the statistics again. Ten requests per account.
func (s *scenario) readsAroundOperations(ctx context.Context) error {
	c := s.Cells("independence")
	s.independence = s.independence[:0]
	for _, role := range matrix.BothAccounts {
		if _, ok := s.Account(role); !ok {
			for _, cell := range c.Rule.Cells() {
				if cell.Account == role {
					c.Unreachable(cell, "no second account is configured")
				}
			}
			continue
		}
		run := &independenceRun{role: role}
		s.independence = append(s.independence, run)
		var err error
		if run.l0, err = s.readList(ctx, role); err != nil {
			return err
		}
		if run.l1, err = s.readList(ctx, role); err != nil {
			return err
		}
		if len(run.l1.order) == 0 {
			run.why = "the account's first page lists no campaign (or could not be read: rule list-envelope judges that)"
			continue
		}
		run.campaignID = run.l1.order[len(run.l1.order)-1]
		steps := []func() error{
			func() (err error) { run.s1, err = s.readStats(ctx, role, run.campaignID); return },
			func() (err error) { run.l2, err = s.readList(ctx, role); return },
			func() (err error) { run.s2, err = s.readStats(ctx, role, run.campaignID); return },
			func() (err error) { run.s3, err = s.readStats(ctx, role, run.campaignID); return },
			func() (err error) { run.l3, err = s.readList(ctx, role); return },
		}
		if !s.Target.ReadOnly {
			steps = append(steps,
				func() (err error) {
					b, _ := s.ValidBodyFor(ctx, role, spec.OpAddContact)
					run.contact, err = s.SendAs(ctx, role, spec.OpAddContact, b)
					return
				},
				func() (err error) { run.l4, err = s.readList(ctx, role); return },
				func() (err error) { run.s4, err = s.readStats(ctx, role, run.campaignID); return },
			)
		}
		for _, step := range steps {
			if err := step(); err != nil {
				return err
			}
		}
	}
	s.Pending = c
	return nil
}

// listChange says how page 1 changed from a to b: a field of a campaign
// (or which campaigns it holds), or only their order; "" for neither.
func listChange(a, b *listRead) (fields, order string) {
	if !maps.Equal(a.camps, b.camps) {
		var changed []string
		for id, v := range b.camps {
			if a.camps[id] != v {
				changed = append(changed, fmt.Sprint(id))
			}
		}
		for id := range a.camps {
			if _, ok := b.camps[id]; !ok {
				changed = append(changed, fmt.Sprint(id))
			}
		}
		sort.Strings(changed)
		return "campaigns " + strings.Join(changed, ", ") + " changed (or came or went)", ""
	}
	if !slices.Equal(a.order, b.order) {
		return "", fmt.Sprintf("the order %s became %s", idList(a.order), idList(b.order))
	}
	return "", ""
}

// statsDelta is b − a, count by count ("" when a read failed).
func statsDelta(a, b *statsRead) (map[string]int64, bool) {
	if a == nil || b == nil || a.counts == nil || b.counts == nil {
		return nil, false
	}
	d := map[string]int64{}
	for k, v := range b.counts {
		if v != a.counts[k] {
			d[k] = v - a.counts[k]
		}
	}
	return d, true
}

func deltaText(d map[string]int64) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(d)) {
		parts = append(parts, fmt.Sprintf("%s %+d", k, d[k]))
	}
	return strings.Join(parts, ", ")
}

func (s *scenario) operationsIndependent() error {
	c := s.Pending
	if c == nil || c.Rule.ID != "independence" {
		return fmt.Errorf("no reads of rule independence were made before this step")
	}
	for _, run := range s.independence {
		cell := func(op, cond string) matrix.Cell {
			return session.CellOf("independence", op, run.role, cond)
		}
		if run.why != "" {
			for _, cl := range c.Rule.Cells() {
				if cl.Account == run.role {
					c.Missing(cl, run.why)
				}
			}
			continue
		}
		// The list around a Stats call: judged only when the two reads
		// before it agree (a live list moves on its own).
		s.judgeList(c, run.l0, run.l1, run.l2, cell(spec.OpCampaignStats, matrix.IndepFields), cell(spec.OpCampaignStats, matrix.IndepOrder), "a Campaign Stats call of campaign "+fmt.Sprint(run.campaignID))
		// The statistics across Stats calls: every call moving them by
		// the same amount is the calls' doing.
		statsCell := cell(spec.OpCampaignStats, matrix.IndepStats)
		d1, ok1 := statsDelta(run.s1, run.s2)
		d2, ok2 := statsDelta(run.s2, run.s3)
		switch {
		case !ok1 || !ok2:
			c.Missing(statsCell, "a Campaign Stats call was not answered 200 with its counts (rule stats-keys judges that)")
		case len(d1) == 0 && len(d2) == 0:
		case maps.Equal(d1, d2):
			c.Fail(statsCell, run.s3.x, "each Campaign Stats call of campaign %d moved its statistics by the same amount (%s): reading the statistics changes them (§4.3: Campaign Stats retrieves them)", run.campaignID, deltaText(d1))
		default:
			s.Warn(c.Sections, run.s3.x, "the statistics of campaign %d moved between reads by different amounts (%s, then %s): the data moved on its own, so whether Campaign Stats changes them was not judged", run.campaignID, deltaText(d1), deltaText(d2))
			c.Missing(statsCell, "the statistics moved on their own")
		}
		if run.contact == nil {
			for _, cond := range matrix.IndependenceConditions {
				c.Unreachable(cell(spec.OpAddContact, cond), "read-only run: no contact is created")
			}
			continue
		}
		s.judgeList(c, run.l2, run.l3, run.l4, cell(spec.OpAddContact, matrix.IndepFields), cell(spec.OpAddContact, matrix.IndepOrder), "an Add Contact")
		contactStats := cell(spec.OpAddContact, matrix.IndepStats)
		before, okb := statsDelta(run.s2, run.s3)
		after, oka := statsDelta(run.s3, run.s4)
		switch {
		case !okb || !oka:
			c.Missing(contactStats, "a Campaign Stats call was not answered 200 with its counts")
		case len(before) > 0:
			c.Missing(contactStats, "the statistics moved before the contact was added")
		case len(after) > 0:
			c.Fail(contactStats, run.s4.x, "the statistics of campaign %d held still across two reads, then moved right after an Add Contact (%s): adding a contact changed a campaign (§4.1 creates a contact record)", run.campaignID, deltaText(after))
		}
	}
	return c.Err()
}

// judgeList judges page 1 around one operation: before0 and before1 read
// with nothing between, after right after the operation.
func (s *scenario) judgeList(c *session.CellCheck, before0, before1, after *listRead, fieldsCell, orderCell matrix.Cell, what string) {
	if before0 == nil || before1 == nil || after == nil || before0.x.Status != http.StatusOK || before1.x.Status != http.StatusOK || after.x.Status != http.StatusOK {
		c.Missing(fieldsCell, "a read of the list was not answered 200 (rule list-envelope judges that)")
		c.Missing(orderCell, "a read of the list was not answered 200")
		return
	}
	if f, o := listChange(before0, before1); f != "" || o != "" {
		s.Warn(c.Sections, before1.x, "page 1 of the campaign list changed between two reads with nothing sent between (%s): the data moved on its own, so whether %s changes the list was not judged", f+o, what)
		c.Missing(fieldsCell, "the list moved on its own")
		c.Missing(orderCell, "the list moved on its own")
		return
	}
	f, o := listChange(before1, after)
	if f != "" {
		c.Fail(fieldsCell, after.x, "page 1 of the campaign list held still across two reads, then right after %s %s (§4.2, §4.3: retrieving changes nothing; §4.1: a contact is not a campaign)", what, f)
	}
	if o != "" && len(before1.order) > 1 {
		c.Fail(orderCell, after.x, "page 1 of the campaign list held still across two reads, then right after %s %s (§4.2, §4.3: retrieving changes nothing; §4.1: a contact is not a campaign)", what, o)
	}
	if len(before1.order) < 2 {
		c.Missing(orderCell, "page 1 holds one campaign: no order to change")
	}
}
