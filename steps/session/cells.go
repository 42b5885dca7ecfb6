package session

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

	"github.com/cucumber/godog"
	"github.com/gavv/httpexpect/v2"

	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/answer"
	"github.com/partner-v3/conformance-kit/steps/matrix"
	"github.com/partner-v3/conformance-kit/steps/result"
)

// CellExchange is one cell's request and answer, for the Then steps.
type CellExchange struct {
	Cell matrix.Cell
	X    *Exchange
}

// CellCheck collects the outcome of a rule's cells in one step.
type CellCheck struct {
	s        *Scenario
	Rule     matrix.Rule
	failed   []string
	first    *Exchange
	Sections []string
	// absent are the cells the target's data does not hold (no deleted
	// campaign listed: filtering is open): a warning.
	absent []string
}

// Cells starts the check of the cells of matrix rule id, in the rule's
// sections.
func (s *Scenario) Cells(id string) *CellCheck {
	r := matrix.RuleByID(id)
	return &CellCheck{s: s, Rule: r, Sections: r.Sections}
}

// Fail records that cell broke the rule on exchange x.
func (c *CellCheck) Fail(cell matrix.Cell, x *Exchange, format string, args ...any) {
	x.markJudged()
	c.failed = append(c.failed, cell.String()+": "+fmt.Sprintf(format, args...))
	if c.first == nil {
		c.first = x
	}
}

// Unreachable records a cell the run's configuration keeps it from
// checking (no second account, a read-only run): the rule is not verified
// there, and the run is no certification.
func (c *CellCheck) Unreachable(cell matrix.Cell, why string) {
	c.s.run.mu.Lock()
	defer c.s.run.mu.Unlock()
	c.s.Result.Unverified = append(c.s.Result.Unverified, cell.String()+": "+why)
}

// UnreachableOnce is Unreachable, unless the scenario already recorded
// the cell unreachable for that reason.
func (c *CellCheck) UnreachableOnce(cell matrix.Cell, why string) {
	c.s.run.mu.Lock()
	defer c.s.run.mu.Unlock()
	if line := cell.String() + ": " + why; !slices.Contains(c.s.Result.Unverified, line) {
		c.s.Result.Unverified = append(c.s.Result.Unverified, line)
	}
}

// Missing records a cell the target's data does not hold, which the spec
// allows (no sms campaign, no deleted one listed).
func (c *CellCheck) Missing(cell matrix.Cell, why string) {
	c.absent = append(c.absent, cell.String()+": "+why)
}

// Err ends the step: a failure naming every broken cell, or nil. Cells the
// data does not hold become one warning.
func (c *CellCheck) Err() error {
	if len(c.absent) > 0 {
		lines := c.absent
		if len(lines) > 10 {
			lines = append(slices.Clone(lines[:10]), fmt.Sprintf("… and %d more", len(c.absent)-10))
		}
		c.s.Warn(c.Sections, nil, "%d cells of rule %s could not be checked: the target's data does not hold them:\n  %s", len(c.absent), c.Rule.ID, strings.Join(lines, "\n  "))
	}
	if len(c.failed) == 0 {
		return nil
	}
	lines := c.failed
	if len(lines) > 25 {
		lines = append(slices.Clone(lines[:25]), fmt.Sprintf("… and %d more", len(c.failed)-25))
	}
	return c.s.FailIn(c.Sections, c.first, "%d cells of rule %s break the spec (%s):\n  %s",
		len(c.failed), c.Rule.ID, c.Rule.Statement, strings.Join(lines, "\n  "))
}

// Account returns the credentials of a role, and false when the run has no
// such account.
func (s *Scenario) Account(role string) (control.Credentials, bool) {
	if role == matrix.Second {
		return s.Target.Second, s.Target.Second.Complete()
	}
	return s.Target.Primary, true
}

// AccountOf returns the credentials a cell of c is sent with; without
// them (a cell of the second account, none configured) it records the cell
// unreachable and returns false.
func (c *CellCheck) AccountOf(cell matrix.Cell) (control.Credentials, bool) {
	acct, ok := c.s.Account(cell.Account)
	if !ok {
		c.Unreachable(cell, "no second account is configured")
	}
	return acct, ok
}

// Other returns the other role's credentials, and false without them.
func (s *Scenario) Other(role string) (control.Credentials, bool) {
	if role == matrix.Second {
		return s.Account(matrix.Primary)
	}
	return s.Account(matrix.Second)
}

// ClientOf returns the clean client of a role (nil without the account).
func (s *Scenario) ClientOf(role string) *httpexpect.Expect {
	if role == matrix.Second {
		return s.SecondClient
	}
	return s.PrimaryClient
}

// SendAs sends a JSON POST of op with a role's own credentials and returns
// the exchange; it does not change the scenario's last exchange. A
// budget finding (a 429 after a quiet window) is returned as the step's
// failure.
func (s *Scenario) SendAs(ctx context.Context, role, op string, body []byte) (*Exchange, error) {
	x := s.Send(ctx, s.ClientOf(role), http.MethodPost, Operations[op], spec.ContentType, body)
	if x.Budget != "" {
		return x, s.FailIn([]string{"8"}, x, "%s", x.Budget)
	}
	return x, nil
}

// ValidBodyFor is a request body op accepts from the account of role
// (validBodyOf): a new contact, page 1, the statistics of the account's
// first campaign.
func (s *Scenario) ValidBodyFor(ctx context.Context, role, op string) ([]byte, error) {
	return validBodyOf(op, bodyParts{
		email: s.NewEmail,
		campaignID: func() (int64, error) {
			acct, _ := s.Account(role)
			info, err := s.Campaigns(ctx, acct)
			if err != nil {
				return 0, err
			}
			id := int64(1) // no campaign: a refusal still holds for any Id
			if len(info.FirstPage) > 0 {
				id, _ = answer.IntOf(info.FirstPage[0]["Id"])
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

// NewEmail is a new address of the run, for one more contact.
func (s *Scenario) NewEmail() string {
	return "conformance-" + s.Target.RunID + "-" + RandomHex(5) + "@" + s.Target.EmailDomain
}

// NoteRetry counts a try that could not decide and is made again.
func (s *Scenario) NoteRetry() {
	s.run.mu.Lock()
	defer s.run.mu.Unlock()
	s.Result.Retries++
}

// CellOf names a cell of the matrix.
func CellOf(rule, op, account, cond string) matrix.Cell {
	return matrix.Cell{Rule: rule, Operation: op, Account: account, Condition: cond}
}

// SkipCell is a body func's way to say a cell cannot be sent in this run
// (a read-only run creates no contact): the cell is unverified.
type SkipCell string

// Error implements error.
func (e SkipCell) Error() string { return string(e) }

// SendCells sends, for every cell of a rule, its operation as its account
// with the body body gives it, for the Then step that checks them.
func (s *Scenario) SendCells(ctx context.Context, rule string, body func(matrix.Cell) ([]byte, error)) error {
	c := s.Cells(rule)
	s.CellXs = s.CellXs[:0]
	for _, cell := range c.Rule.Cells() {
		if _, ok := c.AccountOf(cell); !ok {
			continue
		}
		b, err := body(cell)
		var skip SkipCell
		if errors.As(err, &skip) {
			c.Unreachable(cell, string(skip))
			continue
		}
		if err != nil {
			return err
		}
		x, err := s.SendAs(ctx, cell.Account, cell.Operation, b)
		if err != nil {
			return err
		}
		s.Last = x
		s.CellXs = append(s.CellXs, CellExchange{cell, x})
	}
	s.Pending = c
	return nil
}

// EachCell checks every cell the step before sent with check; a cell whose
// request got no answer fails without it.
func (s *Scenario) EachCell(check func(c *CellCheck, ce CellExchange)) error {
	c := s.Pending
	if c == nil {
		return fmt.Errorf("no cells were sent before this step")
	}
	for _, ce := range s.CellXs {
		if ce.X.Err != nil {
			c.Fail(ce.Cell, ce.X, "no answer: %v", ce.X.Err)
			continue
		}
		check(c, ce)
	}
	return c.Err()
}

// EveryOK checks every cell's answer is a 200 whose body has the spec's
// fields (ShapeProblems); why says what a refusal means.
func (s *Scenario) EveryOK(why string) error {
	return s.EachCell(func(c *CellCheck, ce CellExchange) { c.Served(ce, why) })
}

// Served checks a cell's answer is a 200 labelled JSON whose body has the
// spec's fields (ShapeProblems), failing the cell when not; why says what
// a refusal means. It reports whether the answer was served so.
func (c *CellCheck) Served(ce CellExchange, why string) bool {
	x := ce.X
	switch {
	case x.Status != http.StatusOK:
		c.Fail(ce.Cell, x, "status %d, want 200: %s", x.Status, why)
	case LabelProblem(x) != "":
		c.Fail(ce.Cell, x, "%s", LabelProblem(x))
	default:
		if secs, p := ShapeProblems(x); p != "" {
			c.Fail(ce.Cell, x, "%s (spec %s)", p, result.SectionList(secs))
			return false
		}
		return true
	}
	return false
}

// ValidBody is a request body each operation accepts (validBodyOf): a new
// contact with the scenario's address, the first page, the statistics of
// the primary account's first campaign.
func (s *Scenario) ValidBody(ctx context.Context, op string) ([]byte, error) {
	return validBodyOf(op, bodyParts{
		email: func() string { return s.Email },
		campaignID: func() (int64, error) {
			id, err := s.FirstCampaignID(ctx, s.Target.Primary)
			if err != nil {
				if !errors.Is(err, godog.ErrSkip) {
					return 0, err
				}
				// No campaign: an auth check still holds for any Id; a check
				// that needs a 200 skips (see statusShouldBe).
				s.Invented = true
				id = 1
			}
			return id, nil
		},
	})
}

// CellSent reports whether the step recorded an exchange for cell.
func (s *Scenario) CellSent(cell matrix.Cell) bool {
	for _, ce := range s.CellXs {
		if ce.Cell == cell {
			return true
		}
	}
	return false
}

// IsMissing reports whether cell was already set aside as one the target
// does not hold.
func (c *CellCheck) IsMissing(cell matrix.Cell) bool {
	p := cell.String() + ": "
	for _, a := range c.absent {
		if len(a) >= len(p) && a[:len(p)] == p {
			return true
		}
	}
	return false
}
