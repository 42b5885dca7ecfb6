package answer

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
// (Problem: JSON, LabelProblem, ExactBodyProblem, MessageProblem,
// ShapeProblems): one piece of code per rule. An answer a check of the
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
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/internal/mask"
	"github.com/partner-v3/conformance-kit/steps/internal/record"
	"github.com/partner-v3/conformance-kit/steps/matrix"
	"github.com/partner-v3/conformance-kit/steps/result"
)

// EveryAnswer is the matrix rule the observer checks.
const EveryAnswer = "every-answer"

// Observer holds every answer the run receives to what the spec says of
// every response. The runner builds one per run (NewObserver), puts its
// Transport under the pacer, so that it sees every attempt, and hands it
// to the step library, which reports (Unreported) what the scenarios have
// not.
type Observer struct {
	primary, second control.Credentials
	secrets         *mask.Secrets

	mu   sync.Mutex
	seq  int           // requests sent so far
	seen []Observation // answers that broke a rule, in the order they came
	next int           // seen[next:] are not reported yet
	done bool          // the run is judged: later answers are not held
}

// Observation is one answer that broke a statement of rule every-answer.
type Observation struct {
	// Seq is the request's number in the run.
	Seq      int
	Cell     matrix.Cell
	Level    result.Level
	Sections []string
	// Problem says what is wrong, the run's secrets hidden.
	Problem string
	// Sender is the result of the scenario that sent the request, nil for
	// the preflight; From names it for the reports.
	Sender *result.ScenarioResult
	From   string
	// Exchange is the answer as reports show it.
	Exchange *result.Exchange
	// sent is the scenario's record of the request (nil for the
	// preflight's): a check of the scenario that failed on it judged it.
	sent *sentBy
}

// NewObserver returns the observer of a run with these accounts. secrets
// hides the run's secrets in what it reports; it may be nil.
func NewObserver(primary, second control.Credentials, secrets *mask.Secrets) *Observer {
	return &Observer{primary: primary, second: second, secrets: secrets}
}

type senderKey struct{}

// sentBy is what the observer learns of a request a scenario sends: the
// scenario, whether one of its checks failed on the answer it read, and
// the number of the request's last attempt (the pacer may send it again
// after an unexpected 429; the scenario reads only the last answer).
type sentBy struct {
	result *result.ScenarioResult
	judged *atomic.Bool
	last   atomic.Int64
}

// WithSender marks ctx's request as one the scenario of r sends; judged is
// set when a check of the scenario fails on the answer it reads (then the
// scenario reports it, and the observer does not again).
func WithSender(ctx context.Context, r *result.ScenarioResult, judged *atomic.Bool) context.Context {
	return context.WithValue(ctx, senderKey{}, &sentBy{result: r, judged: judged})
}

// judged reports whether the scenario that sent the request the
// observation is of failed a check on that very answer: then it reported
// it, and the observer does not again.
func (ob *Observation) judged() bool {
	return ob.sent != nil && ob.sent.judged.Load() && ob.sent.last.Load() == int64(ob.Seq)
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
	a := &Answer{Method: r.Method, URL: r.URL.String(), Header: r.Header.Clone(), Sent: time.Now()}
	if r.Body != nil && r.Body != http.NoBody {
		b, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("read the request body: %w", err)
		}
		a.Body = b
		r = r.Clone(r.Context())
		r.Body = io.NopCloser(bytes.NewReader(b))
	}
	resp, err := t.base.RoundTrip(r)
	a.Received = time.Now()
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
	a.Status, a.ResponseHeader, a.ResponseBody = resp.StatusCode, resp.Header.Clone(), b
	t.o.observe(r.Context(), seq, a)
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
func (o *Observer) observe(ctx context.Context, seq int, a *Answer) {
	cond, sections, problem, level := Problem(a)
	sent, _ := ctx.Value(senderKey{}).(*sentBy)
	var sender *result.ScenarioResult
	if sent != nil {
		sent.last.Store(int64(seq))
		sender = sent.result
	}
	if problem == "" {
		return
	}
	ob := Observation{Seq: seq, Level: level, Sections: sections, Problem: o.secrets.String(problem), Sender: sender, sent: sent, From: record.ScenarioOf(ctx),
		Cell:     matrix.Cell{Rule: EveryAnswer, Operation: cmp.Or(a.Operation(), "no operation of the spec"), Account: o.role(a.Header), Condition: cond},
		Exchange: a.Report(o.secrets)}
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.done {
		o.seen = append(o.seen, ob)
	}
}

// role names the account a request is about: by its key, else by its
// account id (as the pacer and the simulator's switches do).
func (o *Observer) role(h http.Header) string {
	of := func(c control.Credentials, header string) string {
		if header == spec.HeaderAPIKey {
			return c.APIKey
		}
		return c.AccountID
	}
	for _, by := range []string{spec.HeaderAPIKey, spec.HeaderAccountID} {
		v := h.Get(by)
		switch {
		case v == "":
		case v == of(o.primary, by):
			return matrix.Primary
		case o.second.Complete() && v == of(o.second, by):
			return matrix.Second
		}
	}
	return matrix.Primary
}

// Unreported returns the observations not yet reported: the warnings, and
// the failures no scenario reports itself (a check of the scenario that
// sent the request failed on that very answer: it judged the answer
// itself, as the @rate-limit scenario judges its 429s). With last, the
// observer stops holding answers (the run is judged).
func (o *Observer) Unreported(last bool) (warnings, failures []Observation) {
	o.mu.Lock()
	obs := slices.Clone(o.seen[o.next:])
	o.next = len(o.seen)
	o.done = o.done || last
	o.mu.Unlock()
	for _, ob := range obs {
		switch {
		case ob.Level == result.LevelWarning:
			warnings = append(warnings, ob)
		case !ob.judged():
			failures = append(failures, ob)
		}
	}
	return warnings, failures
}

// Failure is one finding naming every observation: the request's number
// in the run, who sent it, the cell and what is wrong; the first one's
// exchange shown. sec hides the run's secrets in the message.
func Failure(obs []Observation, sec *mask.Secrets) *result.Finding {
	var sections []string
	lines := make([]string, 0, min(len(obs), 26))
	for i, ob := range obs {
		for _, s := range ob.Sections {
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
		from := ob.From
		if from == "" {
			from = "the run"
		} else if from != "preflight" {
			from = fmt.Sprintf("scenario %q", from)
		}
		lines = append(lines, fmt.Sprintf("request %d of the run (%s): %s: %s", ob.Seq, from, ob.Cell, strings.ReplaceAll(strings.ReplaceAll(ob.Problem, "\n  ", " "), "\n", " ")))
	}
	slices.SortFunc(sections, result.CompareSections)
	answers := "answers of the run break"
	if len(obs) == 1 {
		answers = "answer of the run breaks"
	}
	msg := fmt.Sprintf("%d %s what the spec says of every response (rule %s: %s):\n  %s",
		len(obs), answers, EveryAnswer, matrix.RuleByID(EveryAnswer).Statement, strings.Join(lines, "\n  "))
	return &result.Finding{Level: result.LevelFailure, Sections: sections, Message: sec.String(msg), Exchange: obs[0].Exchange}
}
