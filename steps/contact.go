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
)

func (s *scenario) registerContact(sc *godog.ScenarioContext) {
	sc.Step(`^both answers should carry the same contactId$`, s.sameContactID)
	sc.Step(`^every answer should carry a contactId of its own$`, s.distinctContactIDs)
	sc.Step(`^the simulator should hold a contact with the scenario's email address$`, s.simulatorHoldsContact)
}

// noteContact remembers the contactId of a successful Add Contact.
func (s *scenario) noteContact(op string) {
	if op != "Add Contact" {
		return
	}
	s.contactCalls++
	if s.last.status != http.StatusOK {
		return
	}
	if m, err := s.last.object(); err == nil {
		if id, ok := m["contactId"].(string); ok {
			s.contactIDs = append(s.contactIDs, id)
		}
	}
}

func (s *scenario) sameContactID() error {
	if len(s.contactIDs) != 2 {
		return s.failf("%d of the two Add Contact answers carried a contactId", len(s.contactIDs))
	}
	if s.contactIDs[0] != s.contactIDs[1] {
		return s.failf("the contactIds differ: %q then %q", s.contactIDs[0], s.contactIDs[1])
	}
	return nil
}

// distinctContactIDs checks that contacts created one after the other got
// identifiers of their own: a contactId identifies the created contact
// (spec §4.1), so two contacts cannot share one.
func (s *scenario) distinctContactIDs() error {
	if len(s.contactIDs) != s.contactCalls {
		return s.failf("%d of the %d Add Contact answers carried a string contactId with status 200 (spec §4.1)", len(s.contactIDs), s.contactCalls)
	}
	seen := map[string]int{}
	for i, id := range s.contactIDs {
		if j, dup := seen[id]; dup {
			return s.failf("contacts %d and %d, created with different email addresses and phone numbers, were both answered contactId %q: a contactId identifies the created contact (spec §4.1)", j+1, i+1, id)
		}
		seen[id] = i
	}
	return nil
}

func (s *scenario) simulatorHoldsContact(ctx context.Context) error {
	if s.env.Control == nil {
		return skipf("needs the simulator's control API")
	}
	cs, err := s.env.Control.Contacts(ctx, s.env.Primary.AccountID)
	if err != nil {
		return fmt.Errorf("list contacts through the control API: %w", err)
	}
	for _, c := range cs {
		if e, _ := c["email"].(string); strings.EqualFold(e, s.email) {
			return nil
		}
	}
	return s.failf("the simulator holds %d contacts for the account, none with the email %s", len(cs), s.email)
}
