package steps

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cucumber/godog"
	"github.com/gavv/httpexpect/v2"
)

// Operation paths of spec §4, by the names the spec and the scenarios use.
var operations = map[string]string{
	"Add Contact":    "contact/add",
	"Campaign List":  "campaign/list",
	"Campaign Stats": "campaign/stats",
}

// Spec messages the steps themselves need (the scenarios carry the others).
const (
	msgRateLimit = "Rate limit exceeded. Try again later."
)

// suiteState is shared by every scenario of one Run.
type suiteState struct {
	cfg     Config
	client  *http.Client // partner requests, paced
	pacer   *pacer
	admin   *adminClient // nil without a control API
	results *collector
	runID   string

	mu        sync.Mutex
	campaigns map[string]*campaignInfo // by account id
}

// campaignInfo is what the suite learnt of an account's campaign list, read
// once with the account's own credentials.
type campaignInfo struct {
	total     int64
	firstPage []map[string]any // page 1 with limit 50
	lastID    int64            // Id of the last campaign of the last page
}

// scenarioState is one scenario's state, kept in its context (never in
// package variables), so scenarios cannot leak into each other.
type scenarioState struct {
	suite    *suiteState
	result   *ScenarioResult
	tags     map[string]bool
	reporter *collectReporter

	e       *httpexpect.Expect // the scenario's client, with its headers
	primary *httpexpect.Expect // clean primary credentials
	second  *httpexpect.Expect // clean second credentials; nil without one

	base      Account            // whose credentials e sends
	overrides map[string]*string // header -> value, nil value = omitted

	email, phone string

	last        *exchange
	ownLast     *exchange // last exchange with the scenario's own credentials
	secondLast  *exchange
	burst       []*exchange
	exhaustedAt time.Time
	contactIDs  []string
	pages       []*exchange
	// invented is set when a Campaign Stats request had to use a made-up
	// campaignId because the account has no campaign.
	invented bool
}

type stateKey struct{}

// prepKey marks requests that prepare a scenario (reading the campaign list)
// rather than exercise it: they are paced even in a @rate-limit scenario.
type prepKey struct{}

func stateFrom(ctx context.Context) *scenarioState {
	s, _ := ctx.Value(stateKey{}).(*scenarioState)
	return s
}

// collectReporter turns httpexpect's failures (a request that got no answer)
// into step errors instead of test failures.
type collectReporter struct {
	mu   sync.Mutex
	msgs []string
}

// Errorf implements httpexpect.Reporter.
func (r *collectReporter) Errorf(message string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, fmt.Sprintf(message, args...))
}

func (r *collectReporter) take() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := strings.Join(r.msgs, "\n")
	r.msgs = nil
	return s
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b)
}

// newScenarioState builds the scenario's clients: one httpexpect.Expect per
// credential set, each adding the §5 headers through its Builder.
func (st *suiteState) newScenarioState(sc *godog.Scenario, res *ScenarioResult) *scenarioState {
	s := &scenarioState{
		suite:     st,
		result:    res,
		tags:      make(map[string]bool),
		reporter:  &collectReporter{},
		base:      st.cfg.Primary,
		overrides: make(map[string]*string),
	}
	for _, t := range sc.Tags {
		s.tags[t.Name] = true
	}
	s.email = "conformance-" + st.runID + "-" + randomHex(5) + "@" + st.cfg.EmailDomain
	// A North American number in the 555 exchange, which is kept for
	// fiction, random per scenario.
	var b [2]byte
	_, _ = rand.Read(b[:])
	s.phone = fmt.Sprintf("+1202555%04d", (int(b[0])<<8|int(b[1]))%10000)
	s.e = s.expect(func() http.Header { return s.headers() })
	s.primary = s.expect(func() http.Header { return credentialHeaders(st.cfg.Primary) })
	if st.cfg.Second.complete() {
		s.second = s.expect(func() http.Header { return credentialHeaders(st.cfg.Second) })
	}
	return s
}

func (s *scenarioState) expect(headers func() http.Header) *httpexpect.Expect {
	e := httpexpect.WithConfig(httpexpect.Config{
		BaseURL:  strings.TrimSuffix(s.suite.cfg.BaseURL, "/"),
		Client:   s.suite.client,
		Reporter: s.reporter,
	})
	return e.Builder(func(r *httpexpect.Request) {
		for k, vs := range headers() {
			for _, v := range vs {
				r.WithHeader(k, v)
			}
		}
	})
}

func credentialHeaders(a Account) http.Header {
	h := http.Header{}
	h.Set("x-api-key", a.APIKey)
	h.Set("x-api-secret", a.APISecret)
	h.Set("x-account-id", a.AccountID)
	return h
}

// headers are the scenario's credentials after its Given steps changed them.
func (s *scenarioState) headers() http.Header {
	h := credentialHeaders(s.base)
	for k, v := range s.overrides {
		if v == nil {
			h.Del(k)
		} else {
			h.Set(k, *v)
		}
	}
	return h
}

// sections lists the spec sections the scenario is tagged with.
func (s *scenarioState) sections() []string {
	var out []string
	for t := range s.tags {
		if id, ok := strings.CutPrefix(t, "@spec-"); ok {
			out = append(out, id)
		}
	}
	slices.SortFunc(out, compareSections)
	return out
}

// failf builds a step failure that names the scenario's spec sections and
// shows the last exchange.
func (s *scenarioState) failf(format string, args ...any) error {
	return s.failOn(s.last, format, args...)
}

func (s *scenarioState) failOn(x *exchange, format string, args ...any) error {
	secs := s.sections()
	for i := range secs {
		secs[i] = "§" + secs[i]
	}
	return fmt.Errorf("%s\n(spec %s)\n%s", fmt.Sprintf(format, args...), strings.Join(secs, ", "), x.dump())
}

// skipf ends the scenario as skipped, with the reason kept for the report.
func skipf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", godog.ErrSkip, fmt.Sprintf(format, args...))
}

// send sends one request through e and records it as the last exchange.
// contentType "" sends no Content-Type header; body nil sends no body.
func (s *scenarioState) send(ctx context.Context, e *httpexpect.Expect, method, path, contentType string, body []byte) *exchange {
	if s.tags["@rate-limit"] && ctx.Value(prepKey{}) == nil {
		ctx = withDeliberate(ctx)
	}
	x := &exchange{method: method, url: strings.TrimSuffix(s.suite.cfg.BaseURL, "/") + "/" + path, body: body}
	req := e.Request(method, "/"+path).WithContext(ctx)
	if contentType != "" {
		req = req.WithHeader("Content-Type", contentType)
	}
	if body != nil {
		req = req.WithBytes(body)
	}
	x.sent = time.Now()
	resp := req.Expect()
	x.recv = time.Now()
	raw := resp.Raw()
	if raw == nil {
		msg := s.reporter.take()
		if msg == "" {
			msg = "no response"
		}
		x.err = errors.New(msg)
		x.header = s.headersOf(e)
		return x
	}
	s.reporter.take()
	if raw.Request != nil {
		x.header = raw.Request.Header.Clone()
	} else {
		x.header = s.headersOf(e)
	}
	x.status = raw.StatusCode
	x.rheader = raw.Header.Clone()
	x.rbody = []byte(resp.Body().Raw())
	x.tls = raw.TLS != nil
	s.reporter.take()
	return x
}

// headersOf reconstructs the credential headers e would send, for a dump of
// a request that got no answer.
func (s *scenarioState) headersOf(e *httpexpect.Expect) http.Header {
	switch e {
	case s.primary:
		return credentialHeaders(s.suite.cfg.Primary)
	case s.second:
		return credentialHeaders(s.suite.cfg.Second)
	}
	return s.headers()
}

// call sends a JSON POST to an operation with the scenario's credentials and
// makes it the last exchange. A request that got no answer fails the step.
func (s *scenarioState) call(ctx context.Context, op string, body []byte) error {
	path, ok := operations[op]
	if !ok {
		return fmt.Errorf("unknown operation %q (want Add Contact, Campaign List or Campaign Stats)", op)
	}
	s.last = s.send(ctx, s.e, http.MethodPost, path, "application/json", body)
	s.ownLast = s.last
	if s.last.err != nil {
		return s.failf("%s got no answer", op)
	}
	s.noteContact(op)
	return nil
}

// noteContact remembers the contactId of a successful Add Contact.
func (s *scenarioState) noteContact(op string) {
	if op != "Add Contact" || s.last.status != http.StatusOK {
		return
	}
	if m, err := s.last.object(); err == nil {
		if id, ok := m["contactId"].(string); ok {
			s.contactIDs = append(s.contactIDs, id)
		}
	}
}

// expand fills the placeholders of a request body.
func (s *scenarioState) expand(body string) string {
	return strings.NewReplacer(
		"{{email}}", s.email,
		"{{EMAIL}}", strings.ToUpper(s.email),
		"{{phone}}", s.phone,
	).Replace(body)
}

// campaigns returns what the suite knows of an account's campaign list,
// reading it once with the account's own credentials.
func (s *scenarioState) campaigns(ctx context.Context, acct Account) (*campaignInfo, error) {
	st := s.suite
	st.mu.Lock()
	info := st.campaigns[acct.AccountID]
	st.mu.Unlock()
	if info != nil {
		return info, nil
	}
	e := s.primary
	if acct == st.cfg.Second {
		e = s.second
	}
	// Reading the list is preparation, never part of a @rate-limit burst.
	ctx = context.WithValue(ctx, prepKey{}, true)
	page := func(n int64) (map[string]any, *exchange, error) {
		x := s.sendPlain(ctx, e, fmt.Sprintf(`{"limit": 50, "page": %d}`, n))
		if x.err != nil || x.status != http.StatusOK {
			return nil, x, s.failOn(x, "reading the account's campaign list (spec §4.2) did not succeed")
		}
		m, err := x.object()
		if err != nil {
			return nil, x, s.failOn(x, "campaign list: %v", err)
		}
		return m, x, nil
	}
	m, _, err := page(1)
	if err != nil {
		return nil, err
	}
	info = &campaignInfo{}
	info.total, _ = intOf(m["totalRecords"])
	for _, c := range asArray(m["campaigns"]) {
		if o, ok := c.(map[string]any); ok {
			info.firstPage = append(info.firstPage, o)
		}
	}
	if n := len(info.firstPage); n > 0 {
		info.lastID, _ = intOf(info.firstPage[n-1]["Id"])
	}
	if pages, ok := intOf(m["totalPages"]); ok && pages > 1 {
		lm, _, err := page(pages)
		if err != nil {
			return nil, err
		}
		if cs := asArray(lm["campaigns"]); len(cs) > 0 {
			if o, ok := cs[len(cs)-1].(map[string]any); ok {
				info.lastID, _ = intOf(o["Id"])
			}
		}
	}
	st.mu.Lock()
	st.campaigns[acct.AccountID] = info
	st.mu.Unlock()
	return info, nil
}

// sendPlain posts a Campaign List body with e, outside the scenario's
// exchanges.
func (s *scenarioState) sendPlain(ctx context.Context, e *httpexpect.Expect, body string) *exchange {
	return s.send(ctx, e, http.MethodPost, operations["Campaign List"], "application/json", []byte(body))
}

// firstCampaignID returns the Id of the account's first listed campaign, or
// skips the scenario when the account has none.
func (s *scenarioState) firstCampaignID(ctx context.Context, acct Account) (int64, error) {
	info, err := s.campaigns(ctx, acct)
	if err != nil {
		return 0, err
	}
	if len(info.firstPage) == 0 {
		return 0, skipf("the account has no campaigns, so no campaignId to ask for")
	}
	id, ok := intOf(info.firstPage[0]["Id"])
	if !ok {
		return 0, s.failf("the first listed campaign has no integer Id (spec §2.2)")
	}
	return id, nil
}

func asArray(v any) []any {
	a, _ := v.([]any)
	return a
}

// baseURL parses the configured base URL (validated by Run).
func (s *scenarioState) baseURL() *url.URL {
	u, _ := url.Parse(s.suite.cfg.BaseURL)
	return u
}

// campaignsOf returns the cached campaign list of an account; campaigns must
// have read it before.
func (st *suiteState) campaignsOf(acct Account) *campaignInfo {
	st.mu.Lock()
	defer st.mu.Unlock()
	if info := st.campaigns[acct.AccountID]; info != nil {
		return info
	}
	return &campaignInfo{}
}

func errorsIsSkip(err error) bool { return errors.Is(err, godog.ErrSkip) }
