package steps

// A request without one of the three headers of §5. The spec says what an
// INCORRECT key or secret gets (§5 rule 1: 401 "Invalid API credentials")
// and what a MISMATCHED account id gets (§5 rule 2: 403 "Unauthorized
// account access"); what a request that carries no such header gets is
// not stated. A correct service built on a framework that declares the
// header required (FastAPI's Header(...)) answers 422 with the framework's
// body before its own code runs. So a refusal of any client error is
// accepted, as a WARNING when it is not the status and message §5 gives an
// incorrect value; what still fails traces to a sentence: serving the
// request (§4: the three headers are required; §5: "Required: yes"), a
// server error (§7's 500 is for an unexpected server-side problem), a body
// that is not JSON (§1 rule 3).

import (
	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/answer"
	"github.com/partner-v3/conformance-kit/steps/session"
)

// headerOfRule is the §5 header a credential rule changes.
var headerOfRule = map[string]string{"auth-key": spec.HeaderAPIKey, "auth-secret": spec.HeaderAPISecret, "auth-account": spec.HeaderAccountID}

// missingHeaderRefused judges a client error to a request without the
// cell's header: JSON it must be (§1 rule 3); its status and message the
// spec leaves open.
func (s *scenario) missingHeaderRefused(c *session.CellCheck, ce session.CellExchange, status int, msg string) {
	x := ce.X
	if !session.IsJSON(x) || session.LabelProblem(x) != "" {
		c.Fail(ce.Cell, x, "status %d, but %s", x.Status, session.MessageProblem(x, msg))
		return
	}
	if x.Status == status && answer.Mentions(x.ResponseBody, msg) {
		return
	}
	s.Warn(c.Sections, x, "a request without %s was answered %d, not %d with the message %q: §5 says what an incorrect key or secret (rule 1) or a mismatched account id (rule 2) gets, not what a request without the header gets; a client error refuses it all the same, and %d %q is the plainer reading for clients",
		headerOfRule[ce.Cell.Rule], x.Status, status, msg, status, msg)
}
