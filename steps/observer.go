package steps

// The whole-run observer's side in the step library (rule every-answer):
// what answer.Observer found and no scenario has reported goes into the
// results, and the scenario of the rule sends answers of every kind for it.

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"regexp"
	"slices"

	"github.com/cucumber/godog"

	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/answer"
	"github.com/partner-v3/conformance-kit/steps/matrix"
	"github.com/partner-v3/conformance-kit/steps/result"
)

// ---- the library's side: reporting the observations ----

// unreported returns the observer's failures not yet reported, leaving out
// those a scenario already reports (answer.Observer.Unreported). Warnings
// go to the scenario that met them (or the observer's own, for the
// preflight's).
func (l *Library) unreported(own *result.ScenarioResult, last bool) []answer.Observation {
	if l.observer == nil {
		return nil
	}
	warnings, fails := l.observer.Unreported(last)
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, ob := range warnings {
		if r := cmp.Or(ob.Sender, own); r != nil {
			addWarning(r, result.Finding{Level: result.LevelWarning, Sections: ob.Sections, Message: fmt.Sprintf("%s: %s", ob.Cell, ob.Problem), Exchange: ob.Exchange})
		}
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
	f := answer.Failure(fails, l.env.Secrets)
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case own == nil:
		r := &result.ScenarioResult{Name: "Every answer of the run holds to what the spec says of every response (the whole-run observer)",
			Feature: "(the whole run)", Tags: []string{"@normative", matrix.Tag(answer.EveryAnswer)}, Sections: slices.Clone(matrix.AnswerSections),
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
		if slices.Contains(r.Tags, matrix.Tag(answer.EveryAnswer)) {
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
	c := s.Cells(answer.EveryAnswer)
	for _, op := range c.Rule.Operations {
		for _, role := range c.Rule.Accounts {
			acct, ok := s.Account(role)
			if !ok {
				for _, cond := range c.Rule.Conditions {
					c.Unreachable(CellOf(answer.EveryAnswer, op, role, cond), "no second account is configured")
				}
				continue
			}
			for _, v := range []struct {
				header string // the header sent wrong; "" for none
				cond   string // the cell the answer is drawn for
			}{{"", matrix.AnswerOK}, {spec.HeaderAPISecret, matrix.Answer401}, {spec.HeaderAccountID, matrix.Answer403}} {
				if v.header == "" && s.env.skipsWrite(op) {
					c.Unreachable(CellOf(answer.EveryAnswer, op, role, v.cond), "read-only run: no contact is created")
					continue
				}
				body, err := s.ValidBodyFor(ctx, role, op)
				if err != nil {
					return err
				}
				h := CredentialHeaders(acct)
				if v.header != "" {
					h.Set(v.header, "wrong-"+RandomHex(max(4, len(h.Get(v.header))/2)))
				}
				x := s.Send(ctx, s.Expect(func() http.Header { return h }), http.MethodPost, Operations[op], spec.ContentType, body)
				if x.Budget != "" {
					return s.FailIn([]string{"8"}, x, "%s", x.Budget)
				}
				s.Last = x
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
	fails := s.lib.unreported(s.Result, false)
	if len(fails) == 0 {
		return nil
	}
	f := answer.Failure(fails, s.lib.env.Secrets)
	return &Failure{*f}
}

func (s *scenario) registerObserver(sc *godog.ScenarioContext) {
	sc.Step(`^each account sends every operation a valid request, one with a wrong "`+regexp.QuoteMeta(spec.HeaderAPISecret)+`" and one with a wrong "`+regexp.QuoteMeta(spec.HeaderAccountID)+`", judging none of the answers itself$`, s.sendsForObserver)
	sc.Step(`^no answer the run has received breaks what the spec says of every response$`, s.noAnswerBreaks)
}
