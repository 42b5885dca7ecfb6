package steps

// Spec §5: every request carries x-api-key, x-api-secret and x-account-id;
// a wrong key or secret is answered 401 "Invalid API credentials" (rule 1),
// an account identifier that does not match 403 "Unauthorized account
// access" (rule 2).

import (
	"context"
	"net/http"
	"regexp"

	"github.com/cucumber/godog"

	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/matrix"
	"github.com/partner-v3/conformance-kit/steps/session"
)

func (s *scenario) registerAuth(sc *godog.ScenarioContext) {
	sc.Step(`^the "`+headerRE+`" header is (wrong|missing|empty)$`, s.headerIs)
	sc.Step(`^a second account is configured$`, s.secondAccountConfigured)
	sc.Step(`^each account sends Add Contact, Campaign List and Campaign Stats with its "`+headerRE+`" header changed in every way a comparison can be loose$`, s.sendsCredentialVariants)
	sc.Step(`^every answer should be (\d+) with the message "([^"]*)"$`, s.everyAnswerIs)
	sc.Step(`^every answer should be 403 with the message "`+regexp.QuoteMeta(spec.MsgUnauthorizedAccount)+`", or 401 with the message "`+regexp.QuoteMeta(spec.MsgInvalidCredentials)+`" where the header is missing or empty$`, s.everyAnswerIsAccountRefusal)
	sc.Step(`^each account sends a valid Add Contact, Campaign List and Campaign Stats request with its own credentials$`, s.sendsOwnCredentials)
	sc.Step(`^every one of them should be served$`, s.everyServed)
}

// headerRE matches the three headers of §5.
var headerRE = oneOf(spec.Headers())

// credentialRule is the matrix rule of a §5 header.
var credentialRule = map[string]string{spec.HeaderAPIKey: "auth-key", spec.HeaderAPISecret: "auth-secret", spec.HeaderAccountID: "auth-account"}

// sendsCredentialVariants sends, for every cell of the header's rule (every
// operation, account and way the value can be wrong), a valid request
// whose other two headers are right.
func (s *scenario) sendsCredentialVariants(ctx context.Context, header string) error {
	c := s.Cells(credentialRule[header])
	s.CellXs = s.CellXs[:0]
	for _, cell := range c.Rule.Cells() {
		acct, ok := c.AccountOf(cell)
		if !ok {
			continue
		}
		other, hasOther := s.Other(cell.Account)
		if cell.Condition == matrix.CondOtherAccount && !hasOther {
			c.Unreachable(cell, "no other account is configured")
			continue
		}
		right := session.CredentialHeaders(acct)
		v, omit, ok := session.CredentialVariant(cell.Condition, right.Get(header), session.CredentialHeaders(other).Get(header))
		if !ok {
			// The account's own value has nothing to change that way (no
			// letter to change the case of): its data, not the run's.
			c.Missing(cell, "the account's "+header+" cannot be changed that way")
			continue
		}
		h := right.Clone()
		if omit {
			h.Del(header)
		} else {
			h.Set(header, v)
		}
		body, err := s.ValidBodyFor(ctx, cell.Account, cell.Operation)
		if err != nil {
			return err
		}
		x := s.Send(ctx, s.Expect(func() http.Header { return h }), http.MethodPost, session.Operations[cell.Operation], spec.ContentType, body)
		if x.Budget != "" {
			return s.FailIn([]string{"8"}, x, "%s", x.Budget)
		}
		s.Last = x
		s.CellXs = append(s.CellXs, session.CellExchange{Cell: cell, X: x})
	}
	s.Pending = c
	return nil
}

// everyAnswerIs checks every cell's answer: the status and the message.
func (s *scenario) everyAnswerIs(status int, msg string) error {
	return s.checkRefusals(func(ce session.CellExchange) (int, string, bool) {
		// A key of the other account with this account's secret and id:
		// which mismatched header wins is not shown, so 403 is allowed.
		if ce.Cell.Rule == "auth-key" && ce.Cell.Condition == matrix.CondOtherAccount && ce.X.Status == http.StatusForbidden {
			return http.StatusForbidden, spec.MsgUnauthorizedAccount, true
		}
		return status, msg, false
	})
}

// everyAnswerIsAccountRefusal: 403 for an account id that does not match;
// a missing or empty one may be either refusal of §5.
func (s *scenario) everyAnswerIsAccountRefusal() error {
	return s.checkRefusals(func(ce session.CellExchange) (int, string, bool) {
		if (ce.Cell.Condition == matrix.CondMissing || ce.Cell.Condition == matrix.CondEmpty) && ce.X.Status == http.StatusUnauthorized {
			return http.StatusUnauthorized, spec.MsgInvalidCredentials, false
		}
		return http.StatusForbidden, spec.MsgUnauthorizedAccount, false
	})
}

// nonASCII are the credential conditions that put bytes outside ASCII in
// a header.
var nonASCII = map[string]bool{
	matrix.CondNBSPSuffix: true, matrix.CondLatin1NBSP: true, matrix.CondIdeographicLead: true,
	matrix.CondFullwidth: true, matrix.CondCyrillic: true,
}

// checkRefusals checks every cell's answer against the status and message
// want gives it; warn marks an answer the spec allows but a vendor should
// hear of.
func (s *scenario) checkRefusals(want func(session.CellExchange) (status int, msg string, warn bool)) error {
	return s.EachCell(func(c *session.CellCheck, ce session.CellExchange) {
		status, msg, warn := want(ce)
		x := ce.X
		switch {
		case x.Status == http.StatusBadRequest && nonASCII[ce.Cell.Condition]:
			// An HTTP layer before the service (a proxy, the server's
			// parser) may refuse header bytes outside ASCII as a malformed
			// request: refused all the same, which is what matters.
			s.Warn(c.Sections, x, "%s: refused with 400 instead of %d %q: a layer before the service may refuse non-ASCII header bytes; the credential was not accepted", ce.Cell, status, msg)
		case ce.Cell.Condition == matrix.CondMissing && x.Status/100 == 4:
			s.missingHeaderRefused(c, ce, status, msg)
		case x.Status != status:
			c.Fail(ce.Cell, x, "status %d, want %d %q", x.Status, status, msg)
		case session.MessageProblem(x, msg) != "":
			c.Fail(ce.Cell, x, "status %d, but %s", x.Status, session.MessageProblem(x, msg))
		case warn:
			s.Warn(c.Sections, x, "%s: answered %d %q; 401 %q is the plainer reading of §5 rule 1 (the key is not the account's)", ce.Cell, x.Status, msg, spec.MsgInvalidCredentials)
		}
	})
}

// sendsOwnCredentials sends a valid request of every operation with each
// account's own credentials (rule auth-served).
func (s *scenario) sendsOwnCredentials(ctx context.Context) error {
	return s.SendCells(ctx, "auth-served", func(cell matrix.Cell) ([]byte, error) {
		if s.SkipsWrite(cell.Operation) {
			return nil, session.SkipCell("read-only run: no contact is created")
		}
		return s.ValidBodyFor(ctx, cell.Account, cell.Operation)
	})
}

// everyServed: every answer is a 200 (its body is checked against the
// spec's tables on every answer, see session.ShapeProblems).
func (s *scenario) everyServed() error {
	return s.EveryOK("the account's own credentials were refused or the request failed")
}

func (s *scenario) headerIs(header, how string) error {
	switch how {
	case "missing":
		s.Overrides[header] = nil
	case "empty":
		v := ""
		s.Overrides[header] = &v
	case "wrong":
		// About the length of the real value, so only its content is wrong.
		cur := session.CredentialHeaders(s.Base).Get(header)
		v := "wrong-" + session.RandomHex(max(4, len(cur)/2))
		s.Overrides[header] = &v
	}
	return nil
}

func (s *scenario) secondAccountConfigured() error {
	if !s.Target.Second.Complete() {
		return session.Skipf("no second account is configured (--second-api-key, --second-api-secret, --second-account-id)")
	}
	return nil
}
