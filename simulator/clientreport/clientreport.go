// Package clientreport judges what each account's client did against the
// spec: the client report of GET /accounts/{accountId}/report (see
// docs/client-report.md). It sees the partner requests only through
// simulator.RequestObserver: the server hands it one simulator.RequestRecord
// per answered request, and Reports counts it in the state of the account it
// is attributed to. The state is independent of the journal's ring, bounded
// per account, kept only for accounts that sent requests, and per process
// (replicas sharing Redis each judge the requests they served, as each keeps
// its own journal).
package clientreport

import (
	"cmp"
	"fmt"
	"hash/maphash"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

var _ simulator.ClientReporter = (*Reports)(nil)

// Bounds of one account's report state.
const (
	// maxContactHashes bounds the salted contact hashes kept per account
	// for the duplicate-contact rule: 10,000 (some 300 KB at most). Past
	// it, contacts added later are not remembered, so a re-send of one of
	// them is not reported.
	maxContactHashes = 10_000
)

// Reports is the report state of every account that sent a request.
type Reports struct {
	limit  int
	window time.Duration
	now    func() time.Time
	// pace: the simulator runs another limit than the spec's, so each
	// account's pace is measured against the spec's (SpecPace).
	pace bool

	mu      sync.Mutex
	seed    maphash.Seed // the contact hashes' salt, new at every reset
	since   time.Time
	clients map[string]*clientState
}

// New returns empty reports for a simulator that runs limit requests per
// window (zero means the spec's, §8) on real time now (nil means
// time.Now). Their since is now.
func New(limit int, window time.Duration, now func() time.Time) *Reports {
	if limit <= 0 {
		limit = spec.RateLimit
	}
	if window <= 0 {
		window = spec.RateWindow
	}
	if now == nil {
		now = time.Now
	}
	r := &Reports{limit: limit, window: window, now: now, pace: limit != spec.RateLimit || window != spec.RateWindow}
	r.Reset()
	return r
}

// clientState is one account's report state.
type clientState struct {
	since    time.Time
	requests int
	findings map[findingKey]*tally
	// last429 is the simulator time of the latest 429 and deadline the
	// latest instant a Retry-After told the client to wait until.
	last429, deadline time.Time
	// limited is the latest limiter 429 not yet judged: whether the
	// client's next request waited its Retry-After out.
	limited struct {
		id       string
		at, till time.Time
	}
	// pace is kept only when the simulator runs another limit than the
	// spec's.
	pace *specPace
	// contacts holds salted hashes of the emails and phone numbers the
	// account added; true while the contact's adding was delayed by an
	// injected fault (the client may have timed out: one re-send is a
	// retry, not a duplicate).
	contacts map[uint64]bool
}

// specPace measures an account's requests against spec §8's limit.
type specPace struct {
	// times is a ring of the simulator times (Unix ns) of the latest
	// spec.RateLimit requests the spec's limiter would have counted.
	times        [spec.RateLimit]int64
	nTimes, next int
	refused      int
	// recent holds the times of the requests of the last spec.RateWindow, oldest
	// first, from head on; busiest is the most it ever held.
	recent  []int64
	head    int
	busiest int
}

type findingKey struct{ kind, detail string }

type tally struct {
	count   int
	example string // the latest such request's id: the likeliest still in the journal
}

// Reset implements simulator.ClientReporter: every report starts again
// now, with a new salt for the contact hashes.
func (c *Reports) Reset() {
	now := c.now().UTC()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clients, c.since, c.seed = nil, now, maphash.MakeSeed()
}

// state returns the account's state, made when missing. c.mu is held.
func (c *Reports) state(accountID string) *clientState {
	st := c.clients[accountID]
	if st == nil {
		if c.clients == nil {
			c.clients = map[string]*clientState{}
		}
		st = &clientState{since: c.since, findings: map[findingKey]*tally{}}
		if c.pace {
			st.pace = &specPace{}
		}
		c.clients[accountID] = st
	}
	return st
}

// ForgetAccount implements simulator.ClientReporter: DELETE /accounts calls
// it for a throwaway account it removes.
func (c *Reports) ForgetAccount(accountID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.clients, accountID)
}

// StartAccount implements simulator.ClientReporter: POST /accounts calls it
// for a throwaway account it makes, so that the report's since is the
// account's creation.
func (c *Reports) StartAccount(accountID string) {
	now := c.now().UTC()
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.clients, accountID)
	c.state(accountID).since = now
}

// ObserveRequest implements simulator.RequestObserver: it counts an
// answered request in the report of the account it is attributed to
// (RequestRecord.Account). A request naming none is in no report.
func (c *Reports) ObserveRequest(rec *simulator.RequestRecord) {
	account := rec.Account()
	if account == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state(account).observe(rec, c.seed)
}

func (st *clientState) add(kind, detail, requestID string) {
	k := findingKey{kind, detail}
	t := st.findings[k]
	if t == nil {
		t = &tally{}
		st.findings[k] = t
	}
	t.count++
	t.example = requestID
}

func (st *clientState) observe(rec *simulator.RequestRecord, seed maphash.Seed) {
	e, now := &rec.Entry, rec.Now
	st.requests++
	id := e.RequestID
	// A limiter's 429 is judged by what the client did next, against the
	// limit the simulator runs (the one it announced): waited out, it is
	// no finding; another request of the account before its Retry-After
	// (and not sent alongside it) makes it the client's.
	if l := &st.limited; l.id != "" && !now.IsZero() && !now.Before(l.at) {
		if now.Before(l.till) {
			st.add(simulator.FindingRateLimited, "", l.id)
		}
		l.id = ""
	}
	if rec.Limited {
		st.limited.id, st.limited.at, st.limited.till = id, now, now.Add(rec.RetryAfter)
	}
	// Spec §7/§8: any request of the account before the Retry-After of an
	// earlier 429 has passed, on the simulator's clock. A request decided
	// before that 429 (sent alongside it) is no retry.
	if !now.IsZero() && now.Before(st.deadline) && !now.Before(st.last429) {
		st.add(simulator.FindingRetryTooSoon, "", id)
		if rec.Limited {
			st.add(simulator.FindingHammering, "", id)
		}
	}
	if rec.RetryAfter > 0 {
		st.last429 = now
		if d := now.Add(rec.RetryAfter); d.After(st.deadline) {
			st.deadline = d
		}
	}
	if st.pace != nil && !now.IsZero() {
		st.pace.observe(now)
	}
	if rec.ContactAdded {
		st.addContact(rec, e.Fault == simulator.FaultDelay, seed, id)
	}
	kind, detail := rec.Finding, rec.FindingDetail
	if kind == "" {
		kind, detail = classify(e)
	}
	if kind != "" {
		st.add(kind, detail, id)
	}
}

// observe counts a request that reached the rate decision at now: the
// spec's limiter would have refused it when the 100th request it counted
// before is less than 60 s older (it counts only what it allows, exactly
// as the simulator's limiter decides); recent keeps the busiest 60 s.
func (p *specPace) observe(now time.Time) {
	t := now.UnixNano()
	if p.nTimes == spec.RateLimit && t-p.times[p.next] < int64(spec.RateWindow) {
		p.refused++
	} else {
		p.times[p.next] = t
		p.next = (p.next + 1) % spec.RateLimit
		p.nTimes = min(p.nTimes+1, spec.RateLimit)
	}
	for p.head < len(p.recent) && t-p.recent[p.head] >= int64(spec.RateWindow) {
		p.head++
	}
	if p.head > len(p.recent)/2 {
		// Keep the live part at the front: the slice never grows past
		// twice the busiest window.
		p.recent = append(p.recent[:0], p.recent[p.head:]...)
		p.head = 0
	}
	if len(p.recent)-p.head < MaxPaceCount {
		p.recent = append(p.recent, t)
	}
	p.busiest = max(p.busiest, len(p.recent)-p.head)
}

// addContact remembers an added contact by salted hashes of its email
// (case-insensitive, as the contact stores match it) and its phoneNo, and
// counts a duplicate when either was added before. A contact whose first
// adding failed (5xx, dropped, malformed answer) was never stored, so its
// re-send is not a duplicate; one whose adding was delayed by a fault may
// be re-sent once.
func (st *clientState) addContact(rec *simulator.RequestRecord, delayed bool, seed maphash.Seed, id string) {
	var keys [2]uint64
	nk := 0
	if rec.ContactEmail != "" {
		keys[nk] = contactHash(seed, 'e', strings.ToLower(rec.ContactEmail))
		nk++
	}
	if rec.ContactPhone != "" {
		keys[nk] = contactHash(seed, 'p', rec.ContactPhone)
		nk++
	}
	dup := false
	for _, k := range keys[:nk] {
		pending, seen := st.contacts[k]
		switch {
		case !seen:
			if len(st.contacts) < maxContactHashes {
				if st.contacts == nil {
					st.contacts = map[uint64]bool{}
				}
				st.contacts[k] = delayed
			}
		case pending:
			st.contacts[k] = delayed // the retry of a delayed add
		default:
			dup = true
		}
	}
	if dup {
		st.add(simulator.FindingDuplicateContact, "", id)
	}
}

func contactHash(seed maphash.Seed, kind byte, v string) uint64 {
	var h maphash.Hash
	h.SetSeed(seed)
	h.WriteByte(kind)
	h.WriteString(v)
	return h.Sum64()
}

// classify names the finding of a refusal the server noted none for: an
// unknown path (404 before any operation), a method other than POST, and
// any other 4xx but 429 (the limiter's is judged by what follows it; a
// fault's is the test's own).
func classify(e *simulator.JournalEntry) (kind, detail string) {
	switch {
	case e.FaultID != "":
		return "", ""
	case e.Status == http.StatusNotFound && e.Operation == "":
		return simulator.FindingUnknownOperation, ""
	case e.Status == http.StatusMethodNotAllowed:
		return simulator.FindingWrongMethod, ""
	case e.Status >= 400 && e.Status < 500 && e.Status != http.StatusTooManyRequests:
		return simulator.FindingRefused, strconv.Itoa(e.Status)
	}
	return "", ""
}

// Report implements simulator.ClientReporter.
func (c *Reports) Report(accountID string) simulator.ClientReport {
	out := simulator.ClientReport{AccountID: accountID, RateLimit: c.limit, RateWindow: c.window.String(),
		Findings: []simulator.Finding{}}
	if c.pace {
		out.SpecPace = &simulator.SpecPace{Limit: spec.RateLimit, Window: spec.RateWindow.String()}
	}
	c.mu.Lock()
	out.Since = c.since
	if st := c.clients[accountID]; st != nil {
		out.Since, out.Requests = st.since, st.requests
		if st.pace != nil {
			out.SpecPace.BusiestMinute, out.SpecPace.WouldBeRefused = st.pace.busiest, st.pace.refused
		}
		for k, t := range st.findings {
			info := FindingCatalogue[k.kind]
			if sec, ok := FieldSections[k.detail]; ok && k.kind == simulator.FindingInvalidField {
				info.Section = sec
			}
			out.Findings = append(out.Findings, simulator.Finding{
				Kind: k.kind, Section: info.Section, Severity: info.Severity, Title: info.Title,
				Count: t.count, ExampleRequestID: t.example, Detail: k.detail, Advice: info.Advice,
			})
		}
	}
	c.mu.Unlock()
	slices.SortFunc(out.Findings, func(a, b simulator.Finding) int {
		return cmp.Or(compareSections(a.Section, b.Section), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Detail, b.Detail))
	})
	out.Clean = len(out.Findings) == 0
	if out.SpecPace != nil {
		out.SpecPace.Note = paceNote(c.limit, c.window, out.SpecPace)
	}
	return out
}

// compareSections orders "§2.1" before "§4.2" before "§10".
func compareSections(a, b string) int {
	pa := strings.Split(strings.TrimPrefix(a, "§"), ".")
	pb := strings.Split(strings.TrimPrefix(b, "§"), ".")
	for i := 0; i < len(pa) && i < len(pb); i++ {
		x, _ := strconv.Atoi(pa[i])
		y, _ := strconv.Atoi(pb[i])
		if c := cmp.Compare(x, y); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(pa), len(pb))
}

// paceNote is SpecPace's sentence: how the simulator's limit differs from
// the spec's, over the simulator's window and over the spec's minute (a
// limit can be stricter over one and looser over the other: 30 per 5 s lets
// 360 through in a minute), then what the spec's limit would have done with
// the client's requests.
func paceNote(limit int, window time.Duration, p *simulator.SpecPace) string {
	// The most each limit lets through within the other's window: a sliding
	// window of w lets its limit through in every w, so ceil(d/w) times
	// within d.
	within := func(limit int, w, d time.Duration) int { return limit * int((d+w-1)/w) }
	inWindow, specInWindow := limit, within(spec.RateLimit, spec.RateWindow, window)
	inMinute := within(limit, window, spec.RateWindow)
	var how string
	a, b := cmp.Compare(inWindow, specInWindow), cmp.Compare(inMinute, spec.RateLimit)
	switch {
	case window == spec.RateWindow && a > 0:
		how = fmt.Sprintf("raised: %d per minute where the spec lets %d through", limit, spec.RateLimit)
	case window == spec.RateWindow:
		how = fmt.Sprintf("lowered: %d per minute where the spec lets %d through", limit, spec.RateLimit)
	case a <= 0 && b <= 0:
		how = fmt.Sprintf("lowered: at most %d in any %s (the spec: %d) and %d in any 60 s (the spec: %d)",
			inWindow, window, specInWindow, inMinute, spec.RateLimit)
	case a >= 0 && b >= 0:
		how = fmt.Sprintf("raised: at most %d in any %s (the spec: %d) and %d in any 60 s (the spec: %d)",
			inWindow, window, specInWindow, inMinute, spec.RateLimit)
	default:
		// Stricter over its window, looser over a minute (a window below
		// 60 s): the other mix cannot be, as a limit above the spec's within
		// a window lets at least as many through in a minute.
		how = fmt.Sprintf("stricter over %s (%d where the spec lets %d through), looser over a minute (%d in any 60 s where the spec lets %d)",
			window, inWindow, specInWindow, inMinute, spec.RateLimit)
	}
	busiest := strconv.Itoa(p.BusiestMinute)
	if p.BusiestMinute >= MaxPaceCount {
		busiest = "at least " + busiest
	}
	return fmt.Sprintf("the simulator runs %d requests per %s, not the spec's %d per minute (§8): %s. "+
		"Busiest 60 s of this client: %s requests; at the spec's limit it would have been refused %d of them.",
		limit, window, spec.RateLimit, how, busiest, p.WouldBeRefused)
}
