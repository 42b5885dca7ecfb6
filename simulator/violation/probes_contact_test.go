package violation_test

import (
	"net/http"
	"net/http/httptest"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/violation"
)

const phoneContact = `{"phoneNo":"+14155550100","firstName":"Pat"}`

// refusedContact: the switched simulator refuses body with 400 and msg,
// which the faithful one accepts.
func (p *pair) refusedContact(body, msg string) {
	p.t.Helper()
	p.expect(contact(body), func(a *answer) { errorAnswer(a, http.StatusBadRequest, msg) })
}

// contactsOf returns the contacts the simulator stored for the primary
// account, through the control API.
func contactsOf(s *sut) []any {
	s.t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/contacts?accountId="+s.sim.Accounts[0].AccountID, nil)
	req.Header.Set("Authorization", "Bearer probe")
	w := httptest.NewRecorder()
	s.admin.ServeHTTP(w, req)
	m, _ := decode(w.Body.Bytes()).(map[string]any)
	cs, _ := m["contacts"].([]any)
	return cs
}

// Spec §2.1 and §4.1: Add Contact.
func init() {
	register(map[violation.Name]probe{
		"contact-no-requirement": {run: func(p *pair) {
			for _, body := range []string{`{}`, `{"firstName":"Pat"}`, `{"email":"","phoneNo":null,"city":"Leeds"}`} {
				p.status(contact(body), http.StatusBadRequest, http.StatusOK)
			}
			// The rest of the contact is still checked, and the stored
			// contact has no phoneNo.
			if _, b := p.status(contact(`{"gender":"robot"}`), http.StatusBadRequest, http.StatusBadRequest); b.obj()["error"] == simulator.MsgEmailOrPhoneRequired {
				p.t.Fatalf("the gender was not checked: %s", b)
			}
			cs := contactsOf(p.b)
			if len(cs) != 3 {
				p.t.Fatalf("stored %d contacts, want 3", len(cs))
			}
			for _, c := range cs {
				if _, ok := c.(map[string]any)["phoneNo"]; ok {
					p.t.Fatalf("stored contact has a phoneNo: %v", c)
				}
			}
		}},
		"contact-email-required": {run: func(p *pair) {
			p.refusedContact(phoneContact, "Contact refused")
			p.same(contact(validContact))
		}},
		"contact-phone-required": {run: func(p *pair) {
			p.refusedContact(validContact, "Contact refused")
			p.same(contact(`{"email":"a@example.com","phoneNo":"+14155550100"}`))
		}},
		"contact-optional-fields": {run: func(p *pair) {
			p.refusedContact(`{"email":"a@example.com","tag":["vip"]}`, "Contact refused")
			p.refusedContact(`{"email":"a@example.com","playerType":[]}`, "Contact refused")
			p.same(contact(validContact))
		}},
		"contact-400-as-422": {run: func(p *pair) {
			p.expect(contact(`{}`), func(a *answer) { a.Status = http.StatusUnprocessableEntity })
			p.same(contact(`{"email":"not an address"}`))
		}},
		"contact-400-message": {run: func(p *pair) {
			p.expect(contact(`{"city":"Leeds"}`), func(a *answer) { a.obj()["error"] = "email or phone required" })
			p.same(contact(`{"email":"not an address"}`))
		}},
		"contact-status-value": {run: func(p *pair) {
			p.expect(contact(validContact), func(a *answer) { a.obj()["status"] = "ok" })
		}},
		"contact-id-number": {run: func(p *pair) {
			p.expect(contact(validContact), func(a *answer) { a.obj()["contactId"] = num(1234567) })
		}},
	})
}
