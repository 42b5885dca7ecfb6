// Package session is one scenario's session with the target: its state
// (credentials, the contacts it names, its last exchanges), how it sends a
// request and records the exchange, how it fails or warns with the run's
// secrets hidden, and how it sends and judges the cells of a matrix rule.
// The step definitions of package steps are methods on a type that embeds
// a Scenario; what the scenarios of one run share (the campaign lists read
// so far, the results) is a Run.
//
// It holds no step definition and registers no sentence: what a scenario
// says is package steps'; what it does to the target is here.
package session

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cucumber/godog"
	"github.com/gavv/httpexpect/v2"

	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/answer"
	"github.com/partner-v3/conformance-kit/steps/internal/pace"
	"github.com/partner-v3/conformance-kit/steps/internal/record"
	"github.com/partner-v3/conformance-kit/steps/internal/target"
	"github.com/partner-v3/conformance-kit/steps/result"
)

// Operations are the paths of spec §4's operations, by the names the spec
// and the scenarios use.
var Operations = func() map[string]string {
	m := map[string]string{}
	for _, o := range spec.Operations() {
		m[o.Name] = o.Path
	}
	return m
}()

// Run is what the scenarios of one run share: its target, the observer of
// its answers, the campaign lists read so far (by account id), and every
// scenario's result. Its lock guards the results, which the scenarios
// write as they run.
type Run struct {
	target   *target.Target
	observer *answer.Observer // may be nil

	mu        sync.Mutex
	campaigns map[string]*CampaignInfo // by account id
	results   []*result.ScenarioResult
}

// NewRun returns the shared state of a run against t, which it never
// changes. obs holds every answer of the run to what the spec says of
// every response (rule every-answer); it may be nil, and then
// ObservedFailure is an error and FinishObserver does nothing.
func NewRun(t *target.Target, obs *answer.Observer) *Run {
	return &Run{target: t, observer: obs, campaigns: make(map[string]*CampaignInfo)}
}

// Results returns the scenarios' results in the order they started.
func (r *Run) Results() []*result.ScenarioResult {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.results)
}

// NewScenario returns the state of one scenario of the run, to Begin when
// godog starts it. godog builds one per scenario, so scenarios cannot leak
// into each other.
func (r *Run) NewScenario() *Scenario {
	return &Scenario{run: r, Target: r.target, tags: map[string]bool{}, Overrides: map[string]*string{}}
}

// Scenario is one scenario's state and how it sends, records and judges.
type Scenario struct {
	run *Run
	// Target is the run's target, never changed.
	Target *target.Target
	// Result is the scenario's result, written under the run's lock.
	Result  *result.ScenarioResult
	started time.Time
	tags    map[string]bool

	reporter      collectReporter
	Client        *httpexpect.Expect // the scenario's client, with its headers
	PrimaryClient *httpexpect.Expect // clean primary credentials
	SecondClient  *httpexpect.Expect // clean second credentials; nil without one

	Base      control.Credentials // whose credentials Client sends
	Overrides map[string]*string  // header -> value, nil value = omitted

	// Email and phone are unique to the scenario; email2 and phone2 are a
	// second contact's.
	Email, phone, email2, phone2 string

	Last    *Exchange
	OwnLast *Exchange // last exchange with the scenario's own credentials
	// ContactIDs are the contactIds of the scenario's successful Add
	// Contact calls (Call).
	ContactIDs []string
	// CellXs are the exchanges of the cells a step sent, for the Then
	// step that checks them; Pending is that rule's check.
	CellXs  []CellExchange
	Pending *CellCheck
	// Invented is set when a Campaign Stats request had to use a made-up
	// campaignId because the account has no campaign (ValidBody).
	Invented bool
}

// prepKey marks requests that prepare a scenario (reading the campaign list)
// rather than exercise it: they are paced, and retried after an unexpected
// 429, even in a @rate-limit scenario.
type prepKey struct{}

// WithPrep marks ctx's requests as preparation (see prepKey).
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

// RandomHex is n random bytes in hexadecimal.
func RandomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b)
}

// RandomPhone is a North American number in the 555 exchange, which is
// kept for fiction, random per scenario.
func RandomPhone() string {
	var b [2]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("+1202555%04d", (int(b[0])<<8|int(b[1]))%10000)
}

// Expect builds one httpexpect client whose Builder adds headers() to every
// request.
func (s *Scenario) Expect(headers func() http.Header) *httpexpect.Expect {
	e := httpexpect.WithConfig(httpexpect.Config{
		BaseURL:  strings.TrimSuffix(s.Target.BaseURL.String(), "/"),
		Client:   s.Target.Client,
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

// CredentialHeaders are the three headers of §5 that send a's credentials.
func CredentialHeaders(a control.Credentials) http.Header {
	h := http.Header{}
	h.Set(spec.HeaderAPIKey, a.APIKey)
	h.Set(spec.HeaderAPISecret, a.APISecret)
	h.Set(spec.HeaderAccountID, a.AccountID)
	return h
}

// headers are the scenario's credentials after its Given steps changed them.
func (s *Scenario) headers() http.Header {
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
type failure struct{ result.Finding }

// Error implements error.
func (f *failure) Error() string { return f.Detail() }

// Failf fails the step on the last exchange, in the scenario's sections.
func (s *Scenario) Failf(format string, args ...any) error {
	return s.FailOn(s.Last, format, args...)
}

// FailOn fails the step on exchange x, in the scenario's sections.
func (s *Scenario) FailOn(x *Exchange, format string, args ...any) error {
	return s.FailIn(s.Result.Sections, x, format, args...)
}

// FailIn fails the step on exchange x, in the given spec sections.
func (s *Scenario) FailIn(sections []string, x *Exchange, format string, args ...any) error {
	x.markJudged()
	return &failure{result.Finding{Level: result.LevelFailure, Sections: sections, Message: s.Target.Secrets.String(fmt.Sprintf(format, args...)), Exchange: x.report(s.Target.Secrets)}}
}

// Warn records a warning in the given sections (the scenario's when nil),
// once per message however often it is seen.
func (s *Scenario) Warn(sections []string, x *Exchange, format string, args ...any) {
	if sections == nil {
		sections = s.Result.Sections
	}
	msg := s.Target.Secrets.String(fmt.Sprintf(format, args...))
	s.run.mu.Lock()
	defer s.run.mu.Unlock()
	for i := range s.Result.Warnings {
		if w := &s.Result.Warnings[i]; w.Message == msg {
			w.Count++
			return
		}
	}
	s.Result.Warnings = append(s.Result.Warnings, result.Finding{Level: result.LevelWarning, Sections: sections, Message: msg, Count: 1, Exchange: x.report(s.Target.Secrets)})
}

// Skipf ends the scenario as skipped, with the reason kept for the report.
func Skipf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", godog.ErrSkip, fmt.Sprintf(format, args...))
}

// Send sends one request through e and records it as an exchange.
// contentType "" sends no Content-Type header; body nil sends no body.
func (s *Scenario) Send(ctx context.Context, e *httpexpect.Expect, method, path, contentType string, body []byte) *Exchange {
	if s.tags["@rate-limit"] && ctx.Value(prepKey{}) == nil {
		ctx = pace.Deliberate(ctx)
	}
	ctx = record.WithScenario(ctx, s.Result.Title())
	ctx, note := pace.WithNote(ctx)
	x := &Exchange{Method: method, URL: strings.TrimSuffix(s.Target.BaseURL.String(), "/") + "/" + path, Body: body}
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
func (s *Scenario) noteSent(n *pace.Note) {
	s.run.mu.Lock()
	defer s.run.mu.Unlock()
	s.Result.Requests += n.Attempts
	s.Result.BudgetWaits = append(s.Result.BudgetWaits, n.Waits...)
}

// headersOf reconstructs the credential headers e would send, for a dump of
// a request that got no answer.
func (s *Scenario) headersOf(e *httpexpect.Expect) http.Header {
	switch e {
	case s.PrimaryClient:
		return CredentialHeaders(s.Target.Primary)
	case s.SecondClient:
		return CredentialHeaders(s.Target.Second)
	}
	return s.headers()
}

// Call sends a JSON POST to an operation with the scenario's credentials and
// makes it the last exchange. A request that got no answer fails the step,
// and so does a 429 the target sent after a full quiet window (spec §8).
func (s *Scenario) Call(ctx context.Context, op string, body []byte) error {
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

// Took makes x the last exchange and fails the step when it got no answer
// or a budget finding.
func (s *Scenario) Took(x *Exchange, what string) error {
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

// Expand fills the placeholders of a request body.
func (s *Scenario) Expand(body string) string {
	return strings.NewReplacer(
		"{{email}}", s.Email,
		"{{EMAIL}}", strings.ToUpper(s.Email),
		"{{phone}}", s.phone,
		"{{email2}}", s.email2,
		"{{phone2}}", s.phone2,
	).Replace(body)
}

// CampaignInfo is what the suite learnt of an account's campaign list, read
// once with the account's own credentials.
type CampaignInfo struct {
	Total     int64            // filteredRecords: what the pages hold
	FirstPage []map[string]any // page 1 with limit spec.MaxPageSize
	Listed    []map[string]any // pages 1 to 3 and the last, with limit spec.MaxPageSize
	LastID    int64            // Id of the last campaign of the last page
}

// Campaigns returns what the suite knows of an account's campaign list,
// reading it once with the account's own credentials.
func (s *Scenario) Campaigns(ctx context.Context, acct control.Credentials) (*CampaignInfo, error) {
	l := s.run
	l.mu.Lock()
	info := l.campaigns[acct.AccountID]
	l.mu.Unlock()
	if info != nil {
		return info, nil
	}
	e := s.PrimaryClient
	if acct == s.Target.Second {
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

// FirstCampaignID returns the Id of the account's first listed campaign, or
// skips the scenario when the account has none.
func (s *Scenario) FirstCampaignID(ctx context.Context, acct control.Credentials) (int64, error) {
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

// inspect records, as the scenario's warnings, what every answer shows that
// the spec allows but a vendor should know (answer.Warnings): an unusual
// JSON media type or parameter (§1 rule 3), fields the spec does not list,
// timestamps with +00:00, headers that contradict each other or the run's
// rate limit (§8).
func (s *Scenario) inspect(x *Exchange) {
	for _, w := range answer.Warnings(x.answer(), s.Target.Pacer.Limit(), s.Target.Pacer.Window()) {
		s.Warn(w.Sections, x, "%s", w.Message)
	}
}

// noteContact remembers the contactId of a successful Add Contact.
func (s *Scenario) noteContact(op string) {
	if op != spec.OpAddContact {
		return
	}
	if s.Last.Status != http.StatusOK {
		return
	}
	if m, err := s.Last.Object(); err == nil {
		if id, ok := m["contactId"].(string); ok {
			s.ContactIDs = append(s.ContactIDs, id)
		}
	}
}

// Begin records the scenario's identity, example the values of its
// outline row ("" for none), and gives it its addresses and clients. godog
// calls it (by way of package steps) before the scenario's first step.
func (s *Scenario) Begin(p *godog.Scenario, example string) {
	r := &result.ScenarioResult{Name: p.Name, Feature: p.Uri, Status: result.StatusPassed, Example: example}
	for _, t := range p.Tags {
		r.Tags = append(r.Tags, t.Name)
		s.tags[t.Name] = true
		if id, ok := strings.CutPrefix(t.Name, "@spec-"); ok && !slices.Contains(r.Sections, id) {
			r.Sections = append(r.Sections, id)
		}
	}
	slices.SortFunc(r.Sections, result.CompareSections)
	s.Result, s.started = r, time.Now()
	s.Email = "conformance-" + s.Target.RunID + "-" + RandomHex(5) + "@" + s.Target.EmailDomain
	s.phone = RandomPhone()
	s.email2 = "conformance-" + s.Target.RunID + "-" + RandomHex(5) + "@" + s.Target.EmailDomain
	s.phone2 = RandomPhone()
	for s.phone2 == s.phone {
		s.phone2 = RandomPhone()
	}
	s.Base = s.Target.Primary
	s.Client = s.Expect(func() http.Header { return s.headers() })
	s.PrimaryClient = s.Expect(func() http.Header { return CredentialHeaders(s.Target.Primary) })
	if s.Target.Second.Complete() {
		s.SecondClient = s.Expect(func() http.Header { return CredentialHeaders(s.Target.Second) })
	}
	s.run.mu.Lock()
	s.run.results = append(s.run.results, r)
	s.run.mu.Unlock()
}

// StepDone folds one step's outcome into the scenario's result: the first
// failure wins; a skip counts only while nothing failed.
func (s *Scenario) StepDone(text string, status godog.StepResultStatus, err error) {
	s.run.mu.Lock()
	defer s.run.mu.Unlock()
	r := s.Result
	if r.Status == result.StatusFailed {
		return
	}
	switch status {
	case godog.StepFailed, godog.StepUndefined, godog.StepPending, godog.StepAmbiguous:
		r.Status, r.Step = result.StatusFailed, text
		var f *failure
		switch {
		case errors.As(err, &f):
			r.Failure = &f.Finding
		case err != nil:
			// Not a finding of the library's own (a control API error, a
			// table the step cannot read): its text may quote an answer.
			r.Failure = &result.Finding{Level: result.LevelFailure, Sections: r.Sections, Message: s.Target.Secrets.String(err.Error())}
		default:
			r.Failure = &result.Finding{Level: result.LevelFailure, Sections: r.Sections, Message: "step " + status.String()}
		}
		r.Message = r.Failure.Message
	case godog.StepSkipped:
		if errors.Is(err, ErrInconclusive) {
			r.Status, r.Step = result.StatusInconclusive, text
			r.Message = strings.TrimPrefix(err.Error(), godog.ErrSkip.Error()+": ")
			return
		}
		if err != nil && errors.Is(err, godog.ErrSkip) && r.Status == result.StatusPassed {
			r.Status, r.Step = result.StatusSkipped, text
			r.Message = s.Target.Secrets.String(strings.TrimPrefix(err.Error(), godog.ErrSkip.Error()+": "))
		}
	}
}

// End stamps the scenario's duration.
func (s *Scenario) End() {
	s.run.mu.Lock()
	defer s.run.mu.Unlock()
	s.Result.Duration = time.Since(s.started)
}

// SkipsWrite reports whether the run may not send operation name: a
// read-only run sends nothing that writes (spec Operation.Writes). name
// comes from the matrix, which holds its operations to the spec's.
func (s *Scenario) SkipsWrite(name string) bool {
	if !s.Target.ReadOnly {
		return false
	}
	op, err := spec.OperationNamed(name)
	if err != nil {
		panic(err)
	}
	return op.Writes
}

// ErrInconclusive marks a step that could not decide a normative rule, even
// after every try (steps.MaxBurstAttempts): the run is incomplete, never a
// pass. StepDone makes its scenario inconclusive.
var ErrInconclusive = errors.New("inconclusive")
