package steps

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/partner-v3/conformance-kit/steps/answer"

	"github.com/partner-v3/conformance-kit/steps/result"

	"github.com/cucumber/godog"
	"github.com/gavv/httpexpect/v2"

	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/internal/pace"
	"github.com/partner-v3/conformance-kit/steps/internal/record"
)

// Operation paths of spec §4, by the names the spec and the scenarios use.
var Operations = func() map[string]string {
	m := map[string]string{}
	for _, o := range spec.Operations() {
		m[o.Name] = o.Path
	}
	return m
}()

// opRE matches the three operation names of spec §4.
var opRE = oneOf(spec.Names())

// oneOf is a regular expression group matching exactly one of ss.
func oneOf(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = regexp.QuoteMeta(s)
	}
	return "(" + strings.Join(q, "|") + ")"
}

// scenario is one scenario's state; every step is a method on it. godog
// builds one per scenario, so scenarios cannot leak into each other.
type scenario struct {
	lib     *Library
	env     *Env
	Result  *result.ScenarioResult
	started time.Time
	tags    map[string]bool

	reporter      collectReporter
	Client        *httpexpect.Expect // the scenario's client, with its headers
	PrimaryClient *httpexpect.Expect // clean primary credentials
	SecondClient  *httpexpect.Expect // clean second credentials; nil without one

	Base      control.Credentials // whose credentials e sends
	Overrides map[string]*string  // header -> value, nil value = omitted

	// email and phone are unique to the scenario; email2 and phone2 are a
	// second contact's.
	Email, phone, email2, phone2 string

	Last       *Exchange
	OwnLast    *Exchange // last exchange with the scenario's own credentials
	secondLast *Exchange
	// proof is the last try of the rate-limit bursts; inconclusive says
	// why it could not decide after every try.
	proof        *rateProof
	inconclusive string
	exhaustedAt  time.Time
	ContactIDs   []string
	// contactCalls counts the scenario's Add Contact requests.
	contactCalls int
	pages        []*Exchange
	// cellXs are the exchanges of the cells a step sent, for the Then
	// step that checks them; pending is that rule's check.
	CellXs  []CellExchange
	Pending *CellCheck
	// walks are an account's campaign list read at every limit of the
	// matrix, by walkRole.
	walks    []*walk
	walkRole string
	// invented is set when a Campaign Stats request had to use a made-up
	// campaignId because the account has no campaign.
	Invented bool
	// concurrent and independence are the reads of rules list-concurrent
	// and independence (state_rules.go), for their Then steps.
	concurrent   []*concurrentRun
	independence []*independenceRun
}

// prepKey marks requests that prepare a scenario (reading the campaign list)
// rather than exercise it: they are paced, and retried after an unexpected
// 429, even in a @rate-limit scenario.
type prepKey struct{}

func WithPrep(ctx context.Context) context.Context { return context.WithValue(ctx, prepKey{}, true) }

// collectReporter turns httpexpect's failures (a request that got no answer)
// into step errors instead of test failures.
type collectReporter struct{ msgs []string }

// Errorf implements httpexpect.Reporter.
func (r *collectReporter) Errorf(message string, args ...any) {
	r.msgs = append(r.msgs, fmt.Sprintf(message, args...))
}

func (r *collectReporter) take() string {
	s := strings.Join(r.msgs, "\n")
	r.msgs = nil
	return s
}

func RandomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b)
}

// randomPhone is a North American number in the 555 exchange, which is
// kept for fiction, random per scenario.
func RandomPhone() string {
	var b [2]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("+1202555%04d", (int(b[0])<<8|int(b[1]))%10000)
}

// expect builds one httpexpect client whose Builder adds headers() to every
// request.
func (s *scenario) Expect(headers func() http.Header) *httpexpect.Expect {
	e := httpexpect.WithConfig(httpexpect.Config{
		BaseURL:  strings.TrimSuffix(s.env.BaseURL.String(), "/"),
		Client:   s.env.Client,
		Reporter: &s.reporter,
	})
	return e.Builder(func(r *httpexpect.Request) {
		for k, vs := range headers() {
			for _, v := range vs {
				r.WithHeader(k, v)
			}
		}
	})
}

func CredentialHeaders(a control.Credentials) http.Header {
	h := http.Header{}
	h.Set(spec.HeaderAPIKey, a.APIKey)
	h.Set(spec.HeaderAPISecret, a.APISecret)
	h.Set(spec.HeaderAccountID, a.AccountID)
	return h
}

// headers are the scenario's credentials after its Given steps changed them.
func (s *scenario) headers() http.Header {
	h := CredentialHeaders(s.Base)
	for k, v := range s.Overrides {
		if v == nil {
			h.Del(k)
		} else {
			h.Set(k, *v)
		}
	}
	return h
}

// failure is a step error that carries its result.Finding. Its text is what
// godog's formatters print (pretty, progress, cucumber.json): built from
// the result.Finding, whose message and exchange hide the run's secrets.
type Failure struct{ result.Finding }

func (f *Failure) Error() string { return f.Detail() }

// failf fails the step on the last exchange, in the scenario's sections.
func (s *scenario) Failf(format string, args ...any) error {
	return s.FailOn(s.Last, format, args...)
}

// failOn fails the step on exchange x, in the scenario's sections.
func (s *scenario) FailOn(x *Exchange, format string, args ...any) error {
	return s.FailIn(s.Result.Sections, x, format, args...)
}

// failIn fails the step on exchange x, in the given spec sections.
func (s *scenario) FailIn(sections []string, x *Exchange, format string, args ...any) error {
	x.markJudged()
	return &Failure{result.Finding{Level: result.LevelFailure, Sections: sections, Message: s.env.Secrets.String(fmt.Sprintf(format, args...)), Exchange: x.report(s.env.Secrets)}}
}

// warn records a warning in the given sections (the scenario's when nil),
// once per message however often it is seen.
func (s *scenario) Warn(sections []string, x *Exchange, format string, args ...any) {
	if sections == nil {
		sections = s.Result.Sections
	}
	msg := s.env.Secrets.String(fmt.Sprintf(format, args...))
	s.lib.mu.Lock()
	defer s.lib.mu.Unlock()
	for i := range s.Result.Warnings {
		if w := &s.Result.Warnings[i]; w.Message == msg {
			w.Count++
			return
		}
	}
	s.Result.Warnings = append(s.Result.Warnings, result.Finding{Level: result.LevelWarning, Sections: sections, Message: msg, Count: 1, Exchange: x.report(s.env.Secrets)})
}

// skipf ends the scenario as skipped, with the reason kept for the report.
func Skipf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", godog.ErrSkip, fmt.Sprintf(format, args...))
}

// send sends one request through e and records it as an exchange.
// contentType "" sends no Content-Type header; body nil sends no body.
func (s *scenario) Send(ctx context.Context, e *httpexpect.Expect, method, path, contentType string, body []byte) *Exchange {
	if s.tags["@rate-limit"] && ctx.Value(prepKey{}) == nil {
		ctx = pace.Deliberate(ctx)
	}
	ctx = record.WithScenario(ctx, s.Result.Title())
	ctx, note := pace.WithNote(ctx)
	x := &Exchange{Method: method, URL: strings.TrimSuffix(s.env.BaseURL.String(), "/") + "/" + path, Body: body}
	ctx = answer.WithSender(ctx, s.Result, &x.judged) // the observer's findings name it (answer.Observer)
	req := e.Request(method, "/"+path).WithContext(ctx)
	if contentType != "" {
		req = req.WithHeader("Content-Type", contentType)
	}
	if body != nil {
		req = req.WithBytes(body)
	}
	x.Sent = time.Now()
	resp := req.Expect()
	x.Received = time.Now()
	s.noteSent(note)
	x.Budget = note.Finding
	raw := resp.Raw()
	if raw == nil {
		msg := s.reporter.take()
		if msg == "" {
			msg = "no response"
		}
		x.Err = errors.New(msg)
		x.Header = s.headersOf(e)
		return x
	}
	s.reporter.take()
	if raw.Request != nil {
		x.Header = raw.Request.Header.Clone()
	} else {
		x.Header = s.headersOf(e)
	}
	x.Status = raw.StatusCode
	x.ResponseHeader = raw.Header.Clone()
	x.ResponseBody = []byte(resp.Body().Raw())
	x.TLS = raw.TLS != nil
	s.reporter.take()
	s.inspect(x)
	return x
}

// noteSent adds what the transport did for one request to the result.
func (s *scenario) noteSent(n *pace.Note) {
	s.lib.mu.Lock()
	defer s.lib.mu.Unlock()
	s.Result.Requests += n.Attempts
	s.Result.BudgetWaits = append(s.Result.BudgetWaits, n.Waits...)
}

// headersOf reconstructs the credential headers e would send, for a dump of
// a request that got no answer.
func (s *scenario) headersOf(e *httpexpect.Expect) http.Header {
	switch e {
	case s.PrimaryClient:
		return CredentialHeaders(s.env.Primary)
	case s.SecondClient:
		return CredentialHeaders(s.env.Second)
	}
	return s.headers()
}

// call sends a JSON POST to an operation with the scenario's credentials and
// makes it the last exchange. A request that got no answer fails the step,
// and so does a 429 the target sent after a full quiet window (spec §8).
func (s *scenario) Call(ctx context.Context, op string, body []byte) error {
	path, ok := Operations[op]
	if !ok {
		return fmt.Errorf("unknown operation %q (want one of %s)", op, strings.Join(spec.Names(), ", "))
	}
	if err := s.Took(s.Send(ctx, s.Client, http.MethodPost, path, spec.ContentType, body), op); err != nil {
		return err
	}
	s.OwnLast = s.Last
	s.noteContact(op)
	return nil
}

// took makes x the last exchange and fails the step when it got no answer
// or a budget finding.
func (s *scenario) Took(x *Exchange, what string) error {
	s.Last = x
	if x.Err != nil {
		return s.Failf("%s got no answer", what)
	}
	if x.Budget != "" {
		return s.FailIn([]string{"8"}, x, "%s", x.Budget)
	}
	if secs, p := ShapeProblems(x); p != "" {
		return s.FailIn(secs, x, "%s", p)
	}
	return nil
}

// expand fills the placeholders of a request body.
func (s *scenario) Expand(body string) string {
	return strings.NewReplacer(
		"{{email}}", s.Email,
		"{{EMAIL}}", strings.ToUpper(s.Email),
		"{{phone}}", s.phone,
		"{{email2}}", s.email2,
		"{{phone2}}", s.phone2,
	).Replace(body)
}

// campaignInfo is what the suite learnt of an account's campaign list, read
// once with the account's own credentials.
type CampaignInfo struct {
	Total     int64            // filteredRecords: what the pages hold
	FirstPage []map[string]any // page 1 with limit spec.MaxPageSize
	Listed    []map[string]any // pages 1 to 3 and the last, with limit spec.MaxPageSize
	LastID    int64            // Id of the last campaign of the last page
}

// campaigns returns what the suite knows of an account's campaign list,
// reading it once with the account's own credentials.
func (s *scenario) Campaigns(ctx context.Context, acct control.Credentials) (*CampaignInfo, error) {
	l := s.lib
	l.mu.Lock()
	info := l.campaigns[acct.AccountID]
	l.mu.Unlock()
	if info != nil {
		return info, nil
	}
	e := s.PrimaryClient
	if acct == s.env.Second {
		e = s.SecondClient
	}
	// Reading the list is preparation, never part of a @rate-limit burst.
	ctx = WithPrep(ctx)
	page := func(n int64) (map[string]any, error) {
		x := s.Send(ctx, e, http.MethodPost, Operations[spec.OpCampaignList], spec.ContentType, fmt.Appendf(nil, `{"limit": %d, "page": %d}`, spec.MaxPageSize, n))
		if x.Budget != "" {
			return nil, s.FailIn([]string{"8"}, x, "%s", x.Budget)
		}
		if x.Err != nil || x.Status != http.StatusOK {
			return nil, s.FailOn(x, "reading the account's campaign list (spec §4.2) did not succeed")
		}
		m, err := x.Object()
		if err != nil {
			return nil, s.FailOn(x, "campaign list: %v", err)
		}
		return m, nil
	}
	m, err := page(1)
	if err != nil {
		return nil, err
	}
	info = &CampaignInfo{}
	// The pages follow the records after filtering (§4.2), which may be
	// fewer than totalRecords.
	info.Total, _ = answer.IntOf(m["filteredRecords"])
	add := func(m map[string]any) {
		for _, c := range answer.AsArray(m["campaigns"]) {
			if o, ok := c.(map[string]any); ok {
				info.Listed = append(info.Listed, o)
			}
		}
	}
	add(m)
	info.FirstPage = slices.Clone(info.Listed)
	if n := len(info.FirstPage); n > 0 {
		info.LastID, _ = answer.IntOf(info.FirstPage[n-1]["Id"])
	}
	// A few more pages, for campaigns of every kind (§2.3 checks each
	// channel and type), then the last page, for its last Id.
	pages, _ := answer.IntOf(m["totalPages"])
	for p := int64(2); p <= min(pages, 3); p++ {
		pm, err := page(p)
		if err != nil {
			return nil, err
		}
		add(pm)
	}
	if pages > 3 {
		lm, err := page(pages)
		if err != nil {
			return nil, err
		}
		add(lm)
	}
	if n := len(info.Listed); n > 0 {
		info.LastID, _ = answer.IntOf(info.Listed[n-1]["Id"])
	}
	l.mu.Lock()
	l.campaigns[acct.AccountID] = info
	l.mu.Unlock()
	return info, nil
}

// firstCampaignID returns the Id of the account's first listed campaign, or
// skips the scenario when the account has none.
func (s *scenario) FirstCampaignID(ctx context.Context, acct control.Credentials) (int64, error) {
	info, err := s.Campaigns(ctx, acct)
	if err != nil {
		return 0, err
	}
	if len(info.FirstPage) == 0 {
		return 0, Skipf("the account has no campaigns, so no campaignId to ask for")
	}
	id, ok := answer.IntOf(info.FirstPage[0]["Id"])
	if !ok {
		return 0, s.Failf("the first listed campaign has no integer Id (spec §2.2)")
	}
	return id, nil
}
