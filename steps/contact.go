package steps

// Spec §2.1 (the Contact fields; email or phoneNo) and §4.1 (Add Contact:
// 200 {"status": "success", "contactId": "<contact_id>"}, the identifier of
// the created contact).

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/cucumber/godog"

	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/answer"
	"github.com/partner-v3/conformance-kit/steps/matrix"
	"github.com/partner-v3/conformance-kit/steps/session"
)

func (s *scenario) registerContact(sc *godog.ScenarioContext) {
	sc.Step(`^both answers should carry the same contactId$`, s.sameContactID)
	sc.Step(`^the simulator should hold a contact with the scenario's email address$`, s.simulatorHoldsContact)
	sc.Step(`^each account calls Add Contact with a contact of every form of §2\.1$`, s.addsEveryForm)
	sc.Step(`^every answer should be 200 with status "`+spec.StatusSuccess+`" and a contactId of its own$`, s.everyCreated)
	sc.Step(`^each account calls Add Contact with an empty body and with every optional field but neither email nor phoneNo$`, s.addsNoContact)
	sc.Step(`^each account calls Add Contact with each value §2\.1 lists for gender, emailOptStatus, smsOptStatus, country and dateOfBirth$`, s.addsEveryValue)
}

// optionalFields are every optional field of §2.1, each with a value of its
// format.
const optionalFields = `"firstName": "Ada", "lastName": "Lovelace", "addrOne": "12 St James's Square", "addrTwo": "Flat 3",
  "city": "London", "country": "UK", "state": "LND", "zipCode": "SW1Y 4JH", "gender": "female",
  "dateOfBirth": "1990-12-10", "emailOptStatus": 1, "smsOptStatus": 0, "tag": ["vip", "newsletter"], "playerType": ["casual"]`

// contactBody is a new contact of a form of matrix.ContactForms.
func (s *scenario) contactBody(form string) []byte {
	var fields []string
	switch form {
	case matrix.FormEmail, matrix.FormEmailFull:
		fields = append(fields, fmt.Sprintf(`"email": %q`, s.NewEmail()))
	case matrix.FormPhone, matrix.FormPhoneFull:
		fields = append(fields, fmt.Sprintf(`"phoneNo": %q`, session.RandomPhone()))
	default:
		fields = append(fields, fmt.Sprintf(`"email": %q, "phoneNo": %q`, s.NewEmail(), session.RandomPhone()))
	}
	if strings.HasSuffix(form, "every optional field") {
		fields = append(fields, optionalFields)
	}
	return []byte("{" + strings.Join(fields, ", ") + "}")
}

// addsEveryForm creates, for each account, a contact of every form of
// rule contact-created, each with its own address and number.
func (s *scenario) addsEveryForm(ctx context.Context) error {
	return s.SendCells(ctx, "contact-created", func(cell matrix.Cell) ([]byte, error) { return s.contactBody(cell.Condition), nil })
}

// addsEveryValue creates, for each account, a contact with each value of
// rule contact-values ("gender \"other\"" sends "gender": "other").
func (s *scenario) addsEveryValue(ctx context.Context) error {
	return s.SendCells(ctx, "contact-values", func(cell matrix.Cell) ([]byte, error) {
		field, value, _ := strings.Cut(cell.Condition, " ")
		return fmt.Appendf(nil, `{"email": %q, %q: %s}`, s.NewEmail(), field, value), nil
	})
}

func (s *scenario) addsNoContact(ctx context.Context) error {
	return s.SendCells(ctx, "contact-required", func(cell matrix.Cell) ([]byte, error) {
		if cell.Condition == matrix.NoContactEmpty {
			return []byte(`{}`), nil
		}
		return []byte("{" + optionalFields + "}"), nil
	})
}

// everyCreated: every creation answered 200 {"status": "success",
// "contactId": "<string>"}, and no two of an account's contacts share a
// contactId (spec §4.1: the identifier of the created contact).
func (s *scenario) everyCreated() error {
	ids := contactIDs{}
	return s.EachCell(func(c *session.CellCheck, ce session.CellExchange) {
		x := ce.X
		if x.Status != http.StatusOK {
			c.Fail(ce.Cell, x, "status %d, want 200: the contact has what §2.1 requires", x.Status)
			return
		}
		ids.check(c, ce)
	})
}

func (s *scenario) sameContactID() error {
	if len(s.ContactIDs) != 2 {
		return s.Failf("%d of the two Add Contact answers carried a contactId", len(s.ContactIDs))
	}
	if s.ContactIDs[0] != s.ContactIDs[1] {
		return s.Failf("the contactIds differ: %q then %q", s.ContactIDs[0], s.ContactIDs[1])
	}
	return nil
}

func (s *scenario) simulatorHoldsContact(ctx context.Context) error {
	if s.Target.Control == nil {
		return session.Skipf("needs the simulator's control API")
	}
	// The control API lists contacts oldest first, a page at a time, and
	// the account may hold many (seeded ones, other scenarios'): read from
	// the newest page back until the contact is found.
	const pageSize = 100
	account := s.Target.Primary.AccountID
	_, total, err := s.Target.Control.Contacts(ctx, control.ContactFilter{AccountID: account, Limit: 1})
	if err != nil {
		return fmt.Errorf("list contacts through the control API: %w", err)
	}
	for end := total; end > 0; end -= pageSize {
		f := control.ContactFilter{AccountID: account, Offset: max(end-pageSize, 0), Limit: min(pageSize, end)}
		cs, _, err := s.Target.Control.Contacts(ctx, f)
		if err != nil {
			return fmt.Errorf("list contacts through the control API: %w", err)
		}
		for _, c := range cs {
			if strings.EqualFold(c.Email, s.Email) {
				return nil
			}
		}
	}
	return s.Failf("the simulator holds %d contacts for the account, none with the email %s", total, s.Email)
}

// contactIDs are the contactIds an account's creations got, by cell, to
// find one answered twice (spec §4.1: the identifier of the created
// contact).
type contactIDs map[string]matrix.Cell

// check judges a 200 to Add Contact: a JSON object with status "success"
// and a non-empty string contactId that no other contact of the account
// got (every cell's contact is distinct: its own address or number).
func (ids contactIDs) check(c *session.CellCheck, ce session.CellExchange) {
	x := ce.X
	m, err := x.Object()
	if err != nil {
		c.Fail(ce.Cell, x, "%v (spec §1 rule 3)", err)
		return
	}
	id, ok := m["contactId"].(string)
	switch {
	case m["status"] != spec.StatusSuccess:
		c.Fail(ce.Cell, x, "status is %s, want %q (spec §4.1)", answer.JSONText(m["status"]), spec.StatusSuccess)
	case !ok || id == "":
		c.Fail(ce.Cell, x, "contactId is %s, want a non-empty string (spec §4.1)", answer.JSONText(m["contactId"]))
	default:
		key := ce.Cell.Account + "\x00" + id
		if prev, dup := ids[key]; dup {
			c.Fail(ce.Cell, x, "contactId %q was answered for the contact of %s too: distinct contacts (each its own address or number) each get the identifier of the created contact (spec §4.1)", id, prev.Condition)
		}
		ids[key] = ce.Cell
	}
}
