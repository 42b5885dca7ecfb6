package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
)

// The client report (GET /accounts/{accountId}/report) judges what each
// account's client did against the spec: see docs/client-report.md. Every
// request leaves a note (below) on its way through the middleware and the
// handlers; record hands it to observe once the request is answered, and
// observe counts it in the state of the account it is attributed to. The
// state is independent of the journal's ring, bounded per account, kept only
// for accounts the simulator knows, and per process (replicas sharing Redis
// each judge the requests they served, as each keeps its own journal).

// Bounds of one account's report state.
const (
	// maxContactHashes bounds the salted contact hashes kept per account
	// for the duplicate-contact rule: 10,000 (some 300 KB at most). Past
	// it, contacts added later are not remembered, so a re-send of one of
	// them is not reported.
	maxContactHashes = 10_000
	// specLimit and specWindow are spec §8's limit, against which the
	// report measures the client's pace, as information, when the
	// simulator runs another one.
	specLimit  = simulator.DefaultRateLimit
	specWindow = simulator.DefaultRateWindow
)

// note is what one request tells the client report, filled on its way.
type note struct {
	// kind and detail are the finding noted while refusing the request.
	kind, detail string
	// account is the account a request refused with 403 authenticated as.
	account string
	// now is the simulator time of the rate decision; zero when the
	// request did not reach it.
	now time.Time
	// limited: the limiter refused the request.
	limited bool
	// retryAfter is the Retry-After of the 429 the request was answered
	// with (limiter or injected fault); zero for none.
	retryAfter time.Duration
	// added: Add Contact stored a contact with this email and phoneNo.
	added        bool
	email, phone string
}

// noteFinding notes the finding a request is refused (or warned) for.
func noteFinding(r *http.Request, kind, detail string) {
	n := noteFrom(r)
	n.kind, n.detail = kind, detail
}

// findingError is a client error that the report counts as a finding: its
// message and code are the wrapped *simulator.Error's.
type findingError struct {
	kind, detail string
	err          *simulator.Error
}

func (e *findingError) Error() string { return e.err.Error() }
func (e *findingError) Unwrap() error { return e.err }

// withFinding makes err count as kind (detail) in the client report.
func withFinding(kind, detail string, err *simulator.Error) error {
	return &findingError{kind: kind, detail: detail, err: err}
}

// invalidField is a 400 naming field: the report counts it by field.
// field is always one of the operations' own field names, never the
// client's text, so the findings of an account stay a bounded set.
func invalidField(field, format string, args ...any) error {
	return withFinding(simulator.FindingInvalidField, field, simulator.Errorf(simulator.EINVALID, format, args...))
}

// fail answers err and notes its finding, if it carries one.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	var fe *findingError
	if errors.As(err, &fe) {
		noteFinding(r, fe.kind, fe.detail)
	}
	s.Error(w, r, err)
}

// clientReports is the report state of every known account that sent a
// request. Its zero value is ready for use.
type clientReports struct {
	mu      sync.Mutex
	seed    maphash.Seed // the contact hashes' salt, new at every reset
	since   time.Time
	clients map[string]*clientState
	// pace: the simulator runs another limit than the spec's, so each
	// account's pace is measured against the spec's (SpecPace).
	pace bool
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
	// specLimit requests the spec's limiter would have counted.
	times        [specLimit]int64
	nTimes, next int
	refused      int
	// recent holds the times of the requests of the last specWindow, oldest
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

func (c *clientReports) reset(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clients, c.since, c.seed = nil, now, maphash.MakeSeed()
}

// state returns the account's state, made when missing. c.mu is held.
func (c *clientReports) state(accountID string) *clientState {
	st := c.clients[accountID]
	if st == nil {
		if c.clients == nil {
			c.clients = map[string]*clientState{}
			if c.seed == (maphash.Seed{}) {
				c.seed = maphash.MakeSeed()
			}
		}
		st = &clientState{since: c.since, findings: map[findingKey]*tally{}}
		if c.pace {
			st.pace = &specPace{}
		}
		c.clients[accountID] = st
	}
	return st
}

// forgetClient drops an account's report state: DELETE /accounts calls it
// for a throwaway account it removes.
func (s *Server) forgetClient(accountID string) {
	s.reports.mu.Lock()
	defer s.reports.mu.Unlock()
	delete(s.reports.clients, accountID)
}

// startClient starts an account's report afresh, observed from now: POST
// /accounts calls it for a throwaway account it makes, so that the report's
// since is the account's creation.
func (s *Server) startClient(accountID string) {
	s.reports.mu.Lock()
	defer s.reports.mu.Unlock()
	delete(s.reports.clients, accountID)
	s.reports.state(accountID).since = s.now()().UTC()
}

// observe counts an answered request in the report of the account it is
// attributed to: the account it authenticated as, or, for a request refused
// before, the account its x-api-key or x-account-id names when that is a
// known account. A request naming none is in no report.
func (s *Server) observe(r *http.Request, rec *requestRecord) {
	e, n := &rec.entry, &rec.note
	account := e.AccountID
	if account == "" {
		// The refusal path only: the hot path has authenticated.
		if account = n.account; account == "" {
			account = s.attribute(r)
		}
		if e.AttributedTo = account; account == "" {
			return
		}
	}
	s.reports.mu.Lock()
	defer s.reports.mu.Unlock()
	s.reports.state(account).observe(e, n, s.reports.seed)
}

// attribute names the known account whose key (first) or account
// identifier a request carried, or "".
func (s *Server) attribute(r *http.Request) string {
	keys, ids := r.Header.Values(headerAPIKey), r.Header.Values(headerAccountID)
	if len(keys) == 0 && len(ids) == 0 {
		return ""
	}
	accounts, err := s.Accounts.Accounts(context.WithoutCancel(r.Context()))
	if err != nil {
		return "" // unattributed rather than a failed answer
	}
	for _, a := range accounts {
		if slices.Contains(keys, a.APIKey) {
			return a.AccountID
		}
	}
	for _, a := range accounts {
		if slices.Contains(ids, a.AccountID) {
			return a.AccountID
		}
	}
	return ""
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

func (st *clientState) observe(e *simulator.JournalEntry, n *note, seed maphash.Seed) {
	st.requests++
	id := e.RequestID
	// A limiter's 429 is judged by what the client did next, against the
	// limit the simulator runs (the one it announced): waited out, it is
	// no finding; another request of the account before its Retry-After
	// (and not sent alongside it) makes it the client's.
	if l := &st.limited; l.id != "" && !n.now.IsZero() && !n.now.Before(l.at) {
		if n.now.Before(l.till) {
			st.add(simulator.FindingRateLimited, "", l.id)
		}
		l.id = ""
	}
	if n.limited {
		st.limited.id, st.limited.at, st.limited.till = id, n.now, n.now.Add(n.retryAfter)
	}
	// Spec §7/§8: any request of the account before the Retry-After of an
	// earlier 429 has passed, on the simulator's clock. A request decided
	// before that 429 (sent alongside it) is no retry.
	if !n.now.IsZero() && n.now.Before(st.deadline) && !n.now.Before(st.last429) {
		st.add(simulator.FindingRetryTooSoon, "", id)
		if n.limited {
			st.add(simulator.FindingHammering, "", id)
		}
	}
	if n.retryAfter > 0 {
		st.last429 = n.now
		if d := n.now.Add(n.retryAfter); d.After(st.deadline) {
			st.deadline = d
		}
	}
	if st.pace != nil && !n.now.IsZero() {
		st.pace.observe(n.now)
	}
	if n.added {
		st.addContact(n, e.Fault == simulator.FaultDelay, seed, id)
	}
	kind, detail := n.kind, n.detail
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
	if p.nTimes == specLimit && t-p.times[p.next] < int64(specWindow) {
		p.refused++
	} else {
		p.times[p.next] = t
		p.next = (p.next + 1) % specLimit
		p.nTimes = min(p.nTimes+1, specLimit)
	}
	for p.head < len(p.recent) && t-p.recent[p.head] >= int64(specWindow) {
		p.head++
	}
	if p.head > len(p.recent)/2 {
		// Keep the live part at the front: the slice never grows past
		// twice the busiest window.
		p.recent = append(p.recent[:0], p.recent[p.head:]...)
		p.head = 0
	}
	if len(p.recent)-p.head < simulator.MaxPaceCount {
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
func (st *clientState) addContact(n *note, delayed bool, seed maphash.Seed, id string) {
	var keys [2]uint64
	nk := 0
	if n.email != "" {
		keys[nk] = contactHash(seed, 'e', strings.ToLower(n.email))
		nk++
	}
	if n.phone != "" {
		keys[nk] = contactHash(seed, 'p', n.phone)
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

// classify names the finding of a refusal that no middleware or handler
// noted: an unknown path (404 before any operation), a method other than
// POST, and any other 4xx but 429 (the limiter's is noted; a fault's is
// the test's own).
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

// clientReport is the report of one account.
func (s *Server) clientReport(accountID string) simulator.ClientReport {
	limit, window := s.rateLimit()
	out := simulator.ClientReport{AccountID: accountID, RateLimit: limit, RateWindow: window.String(),
		Findings: []simulator.Finding{}}
	s.reports.mu.Lock()
	out.Since = s.reports.since
	if s.reports.pace {
		out.SpecPace = &simulator.SpecPace{Limit: specLimit, Window: specWindow.String()}
	}
	if st := s.reports.clients[accountID]; st != nil {
		out.Since, out.Requests = st.since, st.requests
		if st.pace != nil {
			out.SpecPace.BusiestMinute, out.SpecPace.WouldBeRefused = st.pace.busiest, st.pace.refused
		}
		for k, t := range st.findings {
			info := simulator.FindingCatalogue[k.kind]
			if sec, ok := simulator.FieldSections[k.detail]; ok && k.kind == simulator.FindingInvalidField {
				info.Section = sec
			}
			out.Findings = append(out.Findings, simulator.Finding{
				Kind: k.kind, Section: info.Section, Severity: info.Severity, Title: info.Title,
				Count: t.count, ExampleRequestID: t.example, Detail: k.detail, Advice: info.Advice,
			})
		}
	}
	s.reports.mu.Unlock()
	slices.SortFunc(out.Findings, func(a, b simulator.Finding) int {
		return cmp.Or(compareSections(a.Section, b.Section), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Detail, b.Detail))
	})
	out.Clean = len(out.Findings) == 0
	if out.SpecPace != nil {
		out.SpecPace.Note = paceNote(limit, window, out.SpecPace)
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

// handleAdminReport is GET /accounts/{accountId}/report: JSON, or Markdown
// when the Accept header asks for text/markdown.
func (s *Server) handleAdminReport(w http.ResponseWriter, r *http.Request) {
	_, a := s.findAccount(w, r)
	if a == nil {
		return
	}
	rep := s.clientReport(a.AccountID)
	if wantsMarkdown(r) {
		body := []byte(markdownReport(rep))
		h := w.Header()
		h.Set("Content-Type", "text/markdown; charset=utf-8")
		h.Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body)
		return
	}
	writeJSON(w, http.StatusOK, rep)
}

// wantsMarkdown reports whether Accept names text/markdown with a
// non-zero quality.
func wantsMarkdown(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		for _, part := range strings.Split(v, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err == nil && mt == "text/markdown" && params["q"] != "0" {
				return true
			}
		}
	}
	return false
}

// markdownReport renders a client report as Markdown: a summary, a table of
// the findings and each kind's advice.
func markdownReport(rep simulator.ClientReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Client report: %s\n\n", rep.AccountID)
	fmt.Fprintf(&b, "%d requests since %s. The simulator's rate limit: %d per %s; the rate rules (§8) judge the client against it.\n\n",
		rep.Requests, rep.Since.UTC().Format(time.RFC3339), rep.RateLimit, rep.RateWindow)
	if rep.SpecPace != nil {
		fmt.Fprintf(&b, "Information, not a finding: %s\n\n", rep.SpecPace.Note)
	}
	if rep.Clean {
		b.WriteString("**Clean**: the client broke no rule the simulator checks.\n")
		return b.String()
	}
	fmt.Fprintf(&b, "%d findings.\n\n", len(rep.Findings))
	b.WriteString("| Section | Severity | Finding | Detail | Count | Example request |\n|---|---|---|---|---|---|\n")
	for _, f := range rep.Findings {
		fmt.Fprintf(&b, "| %s | %s | %s (`%s`) | %s | %d | `%s` |\n",
			f.Section, f.Severity, f.Title, f.Kind, f.Detail, f.Count, f.ExampleRequestID)
	}
	b.WriteString("\n## Advice\n")
	var seen []string
	for _, f := range rep.Findings {
		if slices.Contains(seen, f.Kind) {
			continue
		}
		seen = append(seen, f.Kind)
		fmt.Fprintf(&b, "\n- **%s** (`%s`, %s): %s\n", f.Title, f.Kind, f.Section, f.Advice)
	}
	return b.String()
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
	inWindow, specInWindow := limit, within(specLimit, specWindow, window)
	inMinute := within(limit, window, specWindow)
	var how string
	a, b := cmp.Compare(inWindow, specInWindow), cmp.Compare(inMinute, specLimit)
	switch {
	case window == specWindow && a > 0:
		how = fmt.Sprintf("raised: %d per minute where the spec lets %d through", limit, specLimit)
	case window == specWindow:
		how = fmt.Sprintf("lowered: %d per minute where the spec lets %d through", limit, specLimit)
	case a <= 0 && b <= 0:
		how = fmt.Sprintf("lowered: at most %d in any %s (the spec: %d) and %d in any 60 s (the spec: %d)",
			inWindow, window, specInWindow, inMinute, specLimit)
	case a >= 0 && b >= 0:
		how = fmt.Sprintf("raised: at most %d in any %s (the spec: %d) and %d in any 60 s (the spec: %d)",
			inWindow, window, specInWindow, inMinute, specLimit)
	default:
		// Stricter over its window, looser over a minute (a window below
		// 60 s): the other mix cannot be, as a limit above the spec's within
		// a window lets at least as many through in a minute.
		how = fmt.Sprintf("stricter over %s (%d where the spec lets %d through), looser over a minute (%d in any 60 s where the spec lets %d)",
			window, inWindow, specInWindow, inMinute, specLimit)
	}
	busiest := strconv.Itoa(p.BusiestMinute)
	if p.BusiestMinute >= simulator.MaxPaceCount {
		busiest = "at least " + busiest
	}
	return fmt.Sprintf("the simulator runs %d requests per %s, not the spec's %d per minute (§8): %s. "+
		"Busiest 60 s of this client: %s requests; at the spec's limit it would have been refused %d of them.",
		limit, window, specLimit, how, busiest, p.WouldBeRefused)
}
