package steps

// The whole-run observer (matrix rule every-answer). What the spec says of
// EVERY response holds of every answer the run receives, whatever sent it:
// the preflight, a preparation read, any scenario's request, a request the
// pacer sent again after an unexpected 429. So the checks are not a
// scenario's but the run's client's: one transport holds each answer to
// them as it passes, and a defect that appears on the 700th request of a
// run fails the run (§1 rule 3, §5, §7, §4.1, §4.2 with §2.2, §4.3 with
// §2.3).
//
// Each statement is checked by the code that checks it everywhere else
// (x.json and labelProblem, exactBodyProblem, messageProblem,
// shapeProblems): one piece of code per rule. An answer a check of the
// scenario that sent it failed on (the scenario judged it itself, as the
// @rate-limit scenario judges its 429s) is reported once, by that
// scenario; an earlier attempt of the same request, which the scenario
// never read, is the observer's.

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/partner-v3/conformance-kit/steps/result"

	"github.com/cucumber/godog"

	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/internal/mask"
	"github.com/partner-v3/conformance-kit/steps/internal/record"
	"github.com/partner-v3/conformance-kit/steps/matrix"
)

// everyAnswer is the matrix rule the observer checks.
const everyAnswer = "every-answer"

// Observer holds every answer the run receives to what the spec says of
// every response. The runner builds one per run (NewObserver), puts its
// Transport under the pacer, so that it sees every attempt, and hands it
// to the step library in Env.Observer; Library.FinishObserver reports what
// the scenarios have not.
type Observer struct {
	primary, second control.Credentials
	secrets         *mask.Secrets

	mu   sync.Mutex
	seq  int           // requests sent so far
	seen []observation // answers that broke a rule, in the order they came
	next int           // seen[next:] are not reported yet
	done bool          // the run is judged: later answers are not held
}

// observation is one answer that broke a statement of rule every-answer.
type observation struct {
	seq      int
	cell     matrix.Cell
	level    result.Level
	sections []string
	problem  string
	// sender is the scenario that sent the request, nil for the
	// preflight; from names it for the reports.
	sender *result.ScenarioResult
	from   string
	// sent is the scenario's record of the request (nil for the
	// preflight's): a check of the scenario that failed on it judged it.
	sent *sentBy
	x    *result.Exchange
}

// NewObserver returns the observer of a run with these accounts. secrets
// hides the run's secrets in what it reports; it may be nil.
func NewObserver(primary, second control.Credentials, secrets *mask.Secrets) *Observer {
	return &Observer{primary: primary, second: second, secrets: secrets}
}

type senderKey struct{}

// sentBy is what the observer learns of a request a scenario sends: the
// scenario, its exchange (which the scenario's checks read), and the
// number of the request's last attempt (the pacer may send it again after
// an unexpected 429; the scenario reads only the last answer).
type sentBy struct {
	result *result.ScenarioResult
	x      *exchange
	last   atomic.Int64
}

// withSender marks ctx's request as one a scenario sends and records as x.
func withSender(ctx context.Context, r *result.ScenarioResult, x *exchange) context.Context {
	return context.WithValue(ctx, senderKey{}, &sentBy{result: r, x: x})
}

// judged reports whether the scenario that sent the request the
// observation is of failed a check on that very answer: then it reported
// it, and the observer does not again.
func (ob *observation) judged() bool {
	return ob.sent != nil && ob.sent.x.judged.Load() && ob.sent.last.Load() == int64(ob.seq)
}

// Transport returns base with every answer held to the rules of every
// response. The request and the answer pass on unchanged.
func (o *Observer) Transport(base http.RoundTripper) http.RoundTripper {
	return &observing{o: o, base: base}
}

type observing struct {
	o    *Observer
	base http.RoundTripper
}

// CloseIdleConnections passes the call on to base.
func (t *observing) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// RoundTrip implements http.RoundTripper.
func (t *observing) RoundTrip(r *http.Request) (*http.Response, error) {
	seq := t.o.count()
	x := &exchange{method: r.Method, url: r.URL.String(), header: r.Header.Clone(), sent: time.Now()}
	if r.Body != nil && r.Body != http.NoBody {
		b, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("read the request body: %w", err)
		}
		x.body = b
		r = r.Clone(r.Context())
		r.Body = io.NopCloser(bytes.NewReader(b))
	}
	resp, err := t.base.RoundTrip(r)
	x.recv = time.Now()
	if err != nil {
		// No answer: nothing to hold to the spec; the step that sent it
		// says so.
		return nil, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("read the response body: %w", err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	x.status, x.rheader, x.rbody = resp.StatusCode, resp.Header.Clone(), b
	t.o.observe(r.Context(), seq, x)
	return resp, nil
}

// count numbers a request of the run.
func (o *Observer) count() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.seq++
	return o.seq
}

// observe holds one answer to the rules and keeps what it breaks.
func (o *Observer) observe(ctx context.Context, seq int, x *exchange) {
	cond, sections, problem, level := answerProblem(x)
	sent, _ := ctx.Value(senderKey{}).(*sentBy)
	var sender *result.ScenarioResult
	if sent != nil {
		sent.last.Store(int64(seq))
		sender = sent.result
	}
	if problem == "" {
		return
	}
	ob := observation{seq: seq, level: level, sections: sections, problem: o.secrets.String(problem), sender: sender, sent: sent, from: record.ScenarioOf(ctx),
		cell: matrix.Cell{Rule: everyAnswer, Operation: cmp.Or(opOf(x), "no operation of the spec"), Account: o.role(x.header), Condition: cond},
		x:    x.report(o.secrets)}
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.done {
		o.seen = append(o.seen, ob)
	}
}

// role names the account a request is about: by its key, else by its
// account id (as the pacer and the simulator's switches do).
func (o *Observer) role(h http.Header) string {
	for _, by := range []string{spec.HeaderAPIKey, spec.HeaderAccountID} {
		v := h.Get(by)
		switch {
		case v == "":
		case v == credentialHeaders(o.primary).Get(by):
			return matrix.Primary
		case o.second.Complete() && v == credentialHeaders(o.second).Get(by):
			return matrix.Second
		}
	}
	return matrix.Primary
}

// take returns the observations not yet reported; with last, the observer
// stops holding answers (the run is judged).
func (o *Observer) take(last bool) []observation {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := slices.Clone(o.seen[o.next:])
	o.next = len(o.seen)
	o.done = o.done || last
	return out
}

// rateLimitBody is §7's 429 body, decoded as the suite decodes answers.
var rateLimitBody = func() any {
	v, err := decodeJSON(fmt.Appendf(nil, `{%q: %q}`, spec.ErrorField, spec.MsgRateLimit))
	if err != nil {
		panic(err)
	}
	return v
}()

// answerProblem holds one answer to what the spec says of every response
// and returns the condition of rule every-answer it breaks, the sections
// and what is wrong ("" when nothing is). The first broken condition
// counts: a body that is not JSON is not also a wrong 429 body.
//
// An answer to a request that is not one of the spec's operations (another
// method, another path) is held to the same statements, as a WARNING: §1
// rule 3 says every response body is JSON, but what answers a method or
// path the service does not define is often a layer before it.
func answerProblem(x *exchange) (cond string, sections []string, problem string, level result.Level) {
	if x.err != nil || x.method == http.MethodHead || x.status < 200 || x.status == http.StatusNoContent || x.status == http.StatusNotModified {
		return "", nil, "", ""
	}
	level = result.LevelFailure
	if x.method != http.MethodPost || opOf(x) == "" {
		level = result.LevelWarning
	}
	if _, err := x.json(); err != nil {
		return matrix.AnswerJSON, []string{"1"}, fmt.Sprintf("status %d, but the %v: every response body is JSON (spec §1 rule 3)", x.status, err), level
	}
	if p := labelProblem(x); p != "" {
		return matrix.AnswerJSON, []string{"1"}, fmt.Sprintf("status %d: %s", x.status, p), level
	}
	switch x.status {
	case http.StatusTooManyRequests:
		if p := exactBodyProblem(x, rateLimitBody); p != "" {
			return matrix.Answer429, []string{"7"}, p, level
		}
	case http.StatusUnauthorized, http.StatusForbidden:
		// §5 says what an incorrect key or secret (401) and a mismatched
		// account id (403) get; what a request without one of the headers
		// gets is not shown, so its message is not held to either.
		if slices.ContainsFunc(spec.Headers(), func(h string) bool { return len(x.header.Values(h)) == 0 }) {
			return "", nil, "", ""
		}
		cond, msg := matrix.Answer401, spec.MsgInvalidCredentials
		if x.status == http.StatusForbidden {
			cond, msg = matrix.Answer403, spec.MsgUnauthorizedAccount
		}
		if p := messageProblem(x, msg); p != "" {
			return cond, []string{"5", "7"}, fmt.Sprintf("status %d, but %s (spec §5, §7: a %d is %q)", x.status, p, x.status, msg), level
		}
	case http.StatusOK:
		if secs, p := shapeProblems(x); p != "" {
			return matrix.AnswerOK, secs, p, level
		}
	}
	return "", nil, "", ""
}

// exactBodyProblem says how an answer's body differs from want, a body the
// spec fixes whole (§7's 429); "" when it is want, labelled as JSON.
func exactBodyProblem(x *exchange, want any) string {
	got, err := x.json()
	switch {
	case err != nil:
		return fmt.Sprintf("the %d body is not JSON: spec §7 shows it as a JSON object with one string field %q", x.status, spec.ErrorField)
	case !jsonEqual(got, want):
		return fmt.Sprintf("the %d body is %s, want %s (spec §7: one string field %q holding %q)", x.status, strings.TrimSpace(string(x.rbody)), jsonText(want), spec.ErrorField, spec.MsgRateLimit)
	}
	return labelProblem(x)
}

// messageProblem says why an error answer does not carry the spec's
// message msg as a JSON body; "" when it does. The spec shows no body
// shape for errors other than 429 (§7), so the message may be anywhere in
// the body.
func messageProblem(x *exchange, msg string) string {
	switch {
	case !isJSON(x):
		return "the body is not JSON: every response body is JSON (spec §1 rule 3)"
	case labelProblem(x) != "":
		return labelProblem(x)
	case !mentions(x.rbody, msg):
		return fmt.Sprintf("the body does not carry the message %q", msg)
	}
	return ""
}

// jsonEqual compares two decoded JSON values.
func jsonEqual(a, b any) bool { return jsonText(a) == jsonText(b) }

// ---- the library's side: reporting the observations ----

// unreported returns the observer's failures not yet reported, leaving out
// those a scenario already reports: a check of the scenario that sent the
// request failed on that very answer (it judged the answer itself, as the
// @rate-limit scenario judges its 429s). Warnings go to the scenario that
// met them (or the observer's own, for the preflight's).
func (l *Library) unreported(own *result.ScenarioResult, last bool) []observation {
	if l.observer == nil {
		return nil
	}
	obs := l.observer.take(last)
	l.mu.Lock()
	defer l.mu.Unlock()
	var fails []observation
	for _, ob := range obs {
		if ob.level == result.LevelWarning {
			if r := cmp.Or(ob.sender, own); r != nil {
				addWarning(r, result.Finding{Level: result.LevelWarning, Sections: ob.sections, Message: fmt.Sprintf("%s: %s", ob.cell, ob.problem), Exchange: ob.x})
			}
			continue
		}
		if ob.judged() {
			continue
		}
		fails = append(fails, ob)
	}
	return fails
}

// addWarning adds a warning to a result, once per message. The caller
// holds l.mu.
func addWarning(r *result.ScenarioResult, f result.Finding) {
	for i := range r.Warnings {
		if w := &r.Warnings[i]; w.Message == f.Message {
			w.Count++
			return
		}
	}
	f.Count = 1
	r.Warnings = append(r.Warnings, f)
}

// observedFailure is one finding naming every observation: the request's
// number in the run, who sent it, the cell and what is wrong; the first
// one's exchange shown.
func (l *Library) observedFailure(obs []observation) *result.Finding {
	var sections []string
	lines := make([]string, 0, min(len(obs), 26))
	for i, ob := range obs {
		for _, s := range ob.sections {
			if !slices.Contains(sections, s) {
				sections = append(sections, s)
			}
		}
		if i == 25 {
			lines = append(lines, fmt.Sprintf("… and %d more", len(obs)-25))
			continue
		}
		if i > 25 {
			continue
		}
		from := ob.from
		if from == "" {
			from = "the run"
		} else if from != "preflight" {
			from = fmt.Sprintf("scenario %q", from)
		}
		lines = append(lines, fmt.Sprintf("request %d of the run (%s): %s: %s", ob.seq, from, ob.cell, strings.ReplaceAll(strings.ReplaceAll(ob.problem, "\n  ", " "), "\n", " ")))
	}
	slices.SortFunc(sections, result.CompareSections)
	answers := "answers of the run break"
	if len(obs) == 1 {
		answers = "answer of the run breaks"
	}
	msg := fmt.Sprintf("%d %s what the spec says of every response (rule %s: %s):\n  %s",
		len(obs), answers, everyAnswer, matrix.RuleByID(everyAnswer).Statement, strings.Join(lines, "\n  "))
	return &result.Finding{Level: result.LevelFailure, Sections: sections, Message: l.env.Secrets.String(msg), Exchange: obs[0].x}
}

// FinishObserver reports what the observer found and no scenario has
// reported: the answers that came after the scenario of rule every-answer
// ran (the @rate-limit scenario's, in file order), or all of them when no
// such scenario ran. They fail that scenario's result, or a result of the
// observer's own added for them. After it, the observer holds no more
// answers (the deployment profile's probes come after the verdict and
// never change it). The runner calls it once, after the scenarios, before
// Results.
func (l *Library) FinishObserver() {
	own := l.observerResult()
	fails := l.unreported(own, true)
	if len(fails) == 0 {
		return
	}
	f := l.observedFailure(fails)
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case own == nil:
		r := &result.ScenarioResult{Name: "Every answer of the run holds to what the spec says of every response (the whole-run observer)",
			Feature: "(the whole run)", Tags: []string{"@normative", matrix.Tag(everyAnswer)}, Sections: slices.Clone(matrix.AnswerSections),
			Status: result.StatusFailed, Step: "the whole-run observer", Failure: f, Message: f.Message}
		l.results = append(l.results, r)
	case own.Status == result.StatusFailed && own.Failure != nil:
		// Its step already failed on earlier answers: the later ones join.
		own.Failure.Message += "\nafter the scenario ran, " + f.Message
		own.Message = own.Failure.Message
		for _, s := range f.Sections {
			if !slices.Contains(own.Failure.Sections, s) {
				own.Failure.Sections = append(own.Failure.Sections, s)
			}
		}
		slices.SortFunc(own.Failure.Sections, result.CompareSections)
	default:
		own.Status, own.Step, own.Failure, own.Message = result.StatusFailed, "the whole-run observer, after the scenario ran", f, f.Message
	}
}

// observerResult is the result of the last scenario of rule every-answer
// that ran; nil when none did.
func (l *Library) observerResult() *result.ScenarioResult {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range slices.Backward(l.results) {
		if slices.Contains(r.Tags, matrix.Tag(everyAnswer)) {
			return r
		}
	}
	return nil
}

// ---- the scenario of rule every-answer ----

// sendsForObserver sends, as each account, every operation once with its
// own credentials, once with a wrong secret and once with a wrong account
// id: answers of every kind the rule speaks of (200, 401, 403), which the
// step does not judge. The observer does, with every other answer of the
// run.
func (s *scenario) sendsForObserver(ctx context.Context) error {
	c := s.cells(everyAnswer)
	for _, op := range c.rule.Operations {
		for _, role := range c.rule.Accounts {
			acct, ok := s.account(role)
			if !ok {
				for _, cond := range c.rule.Conditions {
					c.unreachable(cellOf(everyAnswer, op, role, cond), "no second account is configured")
				}
				continue
			}
			for _, v := range []struct {
				header string // the header sent wrong; "" for none
				cond   string // the cell the answer is drawn for
			}{{"", matrix.AnswerOK}, {spec.HeaderAPISecret, matrix.Answer401}, {spec.HeaderAccountID, matrix.Answer403}} {
				if v.header == "" && s.env.skipsWrite(op) {
					c.unreachable(cellOf(everyAnswer, op, role, v.cond), "read-only run: no contact is created")
					continue
				}
				body, err := s.validBodyFor(ctx, role, op)
				if err != nil {
					return err
				}
				h := credentialHeaders(acct)
				if v.header != "" {
					h.Set(v.header, "wrong-"+randomHex(max(4, len(h.Get(v.header))/2)))
				}
				x := s.send(ctx, s.expect(func() http.Header { return h }), http.MethodPost, operations[op], spec.ContentType, body)
				if x.budget != "" {
					return s.failIn([]string{"8"}, x, "%s", x.budget)
				}
				s.last = x
			}
		}
	}
	return nil
}

// noAnswerBreaks fails with every answer of the run so far that broke what
// the spec says of every response, unless the scenario that drew it
// already failed on it.
func (s *scenario) noAnswerBreaks() error {
	if s.lib.observer == nil {
		return fmt.Errorf("the run has no observer of its answers (steps.Env.Observer)")
	}
	fails := s.lib.unreported(s.result, false)
	if len(fails) == 0 {
		return nil
	}
	f := s.lib.observedFailure(fails)
	return &failure{*f}
}

func (s *scenario) registerObserver(sc *godog.ScenarioContext) {
	sc.Step(`^each account sends every operation a valid request, one with a wrong "`+regexp.QuoteMeta(spec.HeaderAPISecret)+`" and one with a wrong "`+regexp.QuoteMeta(spec.HeaderAccountID)+`", judging none of the answers itself$`, s.sendsForObserver)
	sc.Step(`^no answer the run has received breaks what the spec says of every response$`, s.noAnswerBreaks)
}
