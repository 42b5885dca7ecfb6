package steps

// The scenario of rule every-answer: it sends answers of every kind for the
// whole-run observer (answer.Observer), and fails with what the observer
// found and no scenario has reported (session.Run reports the rest, after
// the scenarios).

import (
	"context"
	"net/http"
	"regexp"

	"github.com/cucumber/godog"

	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/answer"
	"github.com/partner-v3/conformance-kit/steps/matrix"
	"github.com/partner-v3/conformance-kit/steps/session"
)

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
					c.Unreachable(session.CellOf(answer.EveryAnswer, op, role, cond), "no second account is configured")
				}
				continue
			}
			for _, v := range []struct {
				header string // the header sent wrong; "" for none
				cond   string // the cell the answer is drawn for
			}{{"", matrix.AnswerOK}, {spec.HeaderAPISecret, matrix.Answer401}, {spec.HeaderAccountID, matrix.Answer403}} {
				if v.header == "" && s.SkipsWrite(op) {
					c.Unreachable(session.CellOf(answer.EveryAnswer, op, role, v.cond), "read-only run: no contact is created")
					continue
				}
				body, err := s.ValidBodyFor(ctx, role, op)
				if err != nil {
					return err
				}
				h := session.CredentialHeaders(acct)
				if v.header != "" {
					h.Set(v.header, "wrong-"+session.RandomHex(max(4, len(h.Get(v.header))/2)))
				}
				x := s.Send(ctx, s.Expect(func() http.Header { return h }), http.MethodPost, session.Operations[op], spec.ContentType, body)
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
func (s *scenario) noAnswerBreaks() error { return s.ObservedFailure() }

func (s *scenario) registerObserver(sc *godog.ScenarioContext) {
	sc.Step(`^each account sends every operation a valid request, one with a wrong "`+regexp.QuoteMeta(spec.HeaderAPISecret)+`" and one with a wrong "`+regexp.QuoteMeta(spec.HeaderAccountID)+`", judging none of the answers itself$`, s.sendsForObserver)
	sc.Step(`^no answer the run has received breaks what the spec says of every response$`, s.noAnswerBreaks)
}
