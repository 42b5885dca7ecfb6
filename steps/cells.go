package steps

// Running a rule's cells (steps/matrix): one step sends what every cell needs
// and collects, cell by cell, what does not hold. The step fails once, at
// its end, naming every cell that broke (the first one's exchange shown),
// so a report says which corner of the rule a target breaks, not only that
// it breaks it.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/partner-v3/conformance-kit/steps/answer"

	"github.com/partner-v3/conformance-kit/steps/result"

	"github.com/gavv/httpexpect/v2"

	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/matrix"
)

// cellExchange is one cell's request and answer, for the Then steps.
type cellExchange struct {
	cell matrix.Cell
	x    *exchange
}

// cellCheck collects the outcome of a rule's cells in one step.
type cellCheck struct {
	s        *scenario
	rule     matrix.Rule
	failed   []string
	first    *exchange
	sections []string
	// absent are the cells the target's data does not hold (no deleted
	// campaign listed: filtering is open): a warning.
	absent []string
}

func (s *scenario) cells(id string) *cellCheck {
	r := matrix.RuleByID(id)
	return &cellCheck{s: s, rule: r, sections: r.Sections}
}

// fail records that cell broke the rule on exchange x.
func (c *cellCheck) fail(cell matrix.Cell, x *exchange, format string, args ...any) {
	x.markJudged()
	c.failed = append(c.failed, cell.String()+": "+fmt.Sprintf(format, args...))
	if c.first == nil {
		c.first = x
	}
}

// unreachable records a cell the run's configuration keeps it from
// checking (no second account, a read-only run): the rule is not verified
// there, and the run is no certification.
func (c *cellCheck) unreachable(cell matrix.Cell, why string) {
	c.s.lib.mu.Lock()
	defer c.s.lib.mu.Unlock()
	c.s.result.Unverified = append(c.s.result.Unverified, cell.String()+": "+why)
}

// missing records a cell the target's data does not hold, which the spec
// allows (no sms campaign, no deleted one listed).
func (c *cellCheck) missing(cell matrix.Cell, why string) {
	c.absent = append(c.absent, cell.String()+": "+why)
}

// err ends the step: a failure naming every broken cell, or nil. Cells the
// data does not hold become one warning.
func (c *cellCheck) err() error {
	if len(c.absent) > 0 {
		lines := c.absent
		if len(lines) > 10 {
			lines = append(slices.Clone(lines[:10]), fmt.Sprintf("… and %d more", len(c.absent)-10))
		}
		c.s.warn(c.sections, nil, "%d cells of rule %s could not be checked: the target's data does not hold them:\n  %s", len(c.absent), c.rule.ID, strings.Join(lines, "\n  "))
	}
	if len(c.failed) == 0 {
		return nil
	}
	lines := c.failed
	if len(lines) > 25 {
		lines = append(slices.Clone(lines[:25]), fmt.Sprintf("… and %d more", len(c.failed)-25))
	}
	return c.s.failIn(c.sections, c.first, "%d cells of rule %s break the spec (%s):\n  %s",
		len(c.failed), c.rule.ID, c.rule.Statement, strings.Join(lines, "\n  "))
}

// account returns the credentials of a role, and false when the run has no
// such account.
func (s *scenario) account(role string) (control.Credentials, bool) {
	if role == matrix.Second {
		return s.env.Second, s.env.Second.Complete()
	}
	return s.env.Primary, true
}

// accountOf returns the credentials a cell of c is sent with; without
// them (a cell of the second account, none configured) it records the cell
// unreachable and returns false.
func (c *cellCheck) accountOf(cell matrix.Cell) (control.Credentials, bool) {
	acct, ok := c.s.account(cell.Account)
	if !ok {
		c.unreachable(cell, "no second account is configured")
	}
	return acct, ok
}

// other returns the other role's credentials, and false without them.
func (s *scenario) other(role string) (control.Credentials, bool) {
	if role == matrix.Second {
		return s.account(matrix.Primary)
	}
	return s.account(matrix.Second)
}

// client returns the clean client of a role (nil without the account).
func (s *scenario) client(role string) *httpexpect.Expect {
	if role == matrix.Second {
		return s.second
	}
	return s.primary
}

// sendAs sends a JSON POST of op with a role's own credentials and returns
// the exchange; it does not change the scenario's last exchange. A
// budget finding (a 429 after a quiet window) is returned as the step's
// failure.
func (s *scenario) sendAs(ctx context.Context, role, op string, body []byte) (*exchange, error) {
	x := s.send(ctx, s.client(role), http.MethodPost, operations[op], spec.ContentType, body)
	if x.budget != "" {
		return x, s.failIn([]string{"8"}, x, "%s", x.budget)
	}
	return x, nil
}

// validBodyFor is a request body op accepts from the account of role
// (validBodyOf): a new contact, page 1, the statistics of the account's
// first campaign.
func (s *scenario) validBodyFor(ctx context.Context, role, op string) ([]byte, error) {
	return validBodyOf(op, bodyParts{
		email: s.newEmail,
		campaignID: func() (int64, error) {
			acct, _ := s.account(role)
			info, err := s.campaigns(ctx, acct)
			if err != nil {
				return 0, err
			}
			id := int64(1) // no campaign: a refusal still holds for any Id
			if len(info.firstPage) > 0 {
				id, _ = answer.IntOf(info.firstPage[0]["Id"])
			}
			return id, nil
		},
	})
}

// bodyParts are what a valid request body is made of that a scenario
// supplies; each is called only by the operation whose body needs it
// (spec.Operation's Writes, NeedsCampaign), so a body of Add Contact reads
// no campaign list.
type bodyParts struct {
	email      func() string         // a contact's address, for an operation that writes
	campaignID func() (int64, error) // a campaign of the account, for one that needs it
}

// validBodyOf returns a request body the operation named op accepts, built
// by spec's table from p: a contact with an address and the first name
// "Conformance", the first page of one campaign, the statistics of a
// campaign. A name that is not one of the spec's operations is an error.
func validBodyOf(op string, p bodyParts) ([]byte, error) {
	o, err := spec.OperationNamed(op)
	if err != nil {
		return nil, err
	}
	sample := spec.Sample{FirstName: "Conformance", Limit: 1}
	if o.Writes {
		sample.Email = p.email()
	}
	if o.NeedsCampaign {
		if sample.CampaignID, err = p.campaignID(); err != nil {
			return nil, err
		}
	}
	return o.Body(sample)
}

// newEmail is a new address of the run, for one more contact.
func (s *scenario) newEmail() string {
	return "conformance-" + s.env.RunID + "-" + randomHex(5) + "@" + s.env.EmailDomain
}

// noteRetry counts a try that could not decide and is made again.
func (s *scenario) noteRetry() {
	s.lib.mu.Lock()
	defer s.lib.mu.Unlock()
	s.result.Retries++
}

// cellOf names a cell of the matrix.
func cellOf(rule, op, account, cond string) matrix.Cell {
	return matrix.Cell{Rule: rule, Operation: op, Account: account, Condition: cond}
}

// skipCell is a body func's way to say a cell cannot be sent in this run
// (a read-only run creates no contact): the cell is unverified.
type skipCell string

func (e skipCell) Error() string { return string(e) }

// sendCells sends, for every cell of a rule, its operation as its account
// with the body body gives it, for the Then step that checks them.
func (s *scenario) sendCells(ctx context.Context, rule string, body func(matrix.Cell) ([]byte, error)) error {
	c := s.cells(rule)
	s.cellXs = s.cellXs[:0]
	for _, cell := range c.rule.Cells() {
		if _, ok := c.accountOf(cell); !ok {
			continue
		}
		b, err := body(cell)
		var skip skipCell
		if errors.As(err, &skip) {
			c.unreachable(cell, string(skip))
			continue
		}
		if err != nil {
			return err
		}
		x, err := s.sendAs(ctx, cell.Account, cell.Operation, b)
		if err != nil {
			return err
		}
		s.last = x
		s.cellXs = append(s.cellXs, cellExchange{cell, x})
	}
	s.pending = c
	return nil
}

// eachCell checks every cell the step before sent with check; a cell whose
// request got no answer fails without it.
func (s *scenario) eachCell(check func(c *cellCheck, ce cellExchange)) error {
	c := s.pending
	if c == nil {
		return fmt.Errorf("no cells were sent before this step")
	}
	for _, ce := range s.cellXs {
		if ce.x.err != nil {
			c.fail(ce.cell, ce.x, "no answer: %v", ce.x.err)
			continue
		}
		check(c, ce)
	}
	return c.err()
}

// everyOK checks every cell's answer is a 200 whose body has the spec's
// fields (shapeProblems); why says what a refusal means.
func (s *scenario) everyOK(why string) error {
	return s.eachCell(func(c *cellCheck, ce cellExchange) { c.served(ce, why) })
}

// served checks a cell's answer is a 200 labelled JSON whose body has the
// spec's fields (shapeProblems), failing the cell when not; why says what
// a refusal means. It reports whether the answer was served so.
func (c *cellCheck) served(ce cellExchange, why string) bool {
	x := ce.x
	switch {
	case x.status != http.StatusOK:
		c.fail(ce.cell, x, "status %d, want 200: %s", x.status, why)
	case labelProblem(x) != "":
		c.fail(ce.cell, x, "%s", labelProblem(x))
	default:
		if secs, p := shapeProblems(x); p != "" {
			c.fail(ce.cell, x, "%s (spec %s)", p, result.SectionList(secs))
			return false
		}
		return true
	}
	return false
}
