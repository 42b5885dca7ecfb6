package violation_test

import (
	"net/http"
	"net/http/httptest"

	"github.com/partner-v3/conformance-kit/simulator/spec"
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
			if _, b := p.status(contact(`{"gender":"robot"}`), http.StatusBadRequest, http.StatusBadRequest); b.obj()["error"] == spec.MsgEmailOrPhoneRequired {
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
		"contact-extra-required": {run: func(p *pair) {
			p.refusedContact(`{"email":"a@example.com"}`, "firstName is required")
			p.same(contact(validContact))
		}},
		"contact-gender-other-refused": {run: func(p *pair) {
			p.refusedContact(`{"email":"a@example.com","gender":"other"}`, "gender must be male or female")
			p.same(contact(`{"email":"a@example.com","gender":"female"}`))
		}},
		"contact-opt-zero-refused": {run: func(p *pair) {
			p.refusedContact(`{"email":"a@example.com","emailOptStatus":0}`, "emailOptStatus must be 1")
			p.same(contact(`{"email":"a@example.com","emailOptStatus":1}`))
			p.same(contact(`{"email":"a@example.com","smsOptStatus":0}`))
		}},
		"contact-sms-opt-refused": {run: func(p *pair) {
			p.refusedContact(`{"email":"a@example.com","smsOptStatus":1}`, "smsOptStatus must be 0")
			p.same(contact(`{"email":"a@example.com","smsOptStatus":0}`))
			p.same(contact(`{"email":"a@example.com","emailOptStatus":1}`))
		}},
		"contact-dob-format": {run: func(p *pair) {
			p.refusedContact(`{"email":"a@example.com","dateOfBirth":"1990-05-17"}`, "dateOfBirth must be of the form DD/MM/YYYY")
			p.status(contact(`{"email":"a@example.com","dateOfBirth":"17/05/1990"}`), http.StatusBadRequest, http.StatusOK)
			p.same(contact(validContact))
		}},
		"contact-country-uk-refused": {run: func(p *pair) {
			p.refusedContact(`{"email":"a@example.com","country":"UK"}`, "country must be an ISO 3166-1 alpha-2 code, such as GB")
			p.same(contact(`{"email":"a@example.com","country":"US"}`))
		}},
		"contact-400-as-422": {run: func(p *pair) {
			p.expect(contact(`{}`), func(a *answer) { a.Status = http.StatusUnprocessableEntity })
			p.same(contact(`{"email":"not an address"}`))
		}},
		"contact-400-message": {run: func(p *pair) {
			p.expect(contact(`{"city":"Leeds"}`), func(a *answer) { a.obj()["error"] = "email or phone required" })
			p.same(contact(`{"email":"not an address"}`))
		}},
		"contact-400-message-empty": {run: func(p *pair) {
			p.expect(contact(`{}`), func(a *answer) { a.obj()["error"] = "The request body is empty" })
			p.same(contact(`{"city":"Leeds"}`))
		}},
		"error-400-contact-plain": {run: func(p *pair) {
			p.expect(contact(`{}`), func(a *answer) {
				a.Type, a.Doc, a.Raw = textPlain, nil, []byte(spec.MsgEmailOrPhoneRequired)
			})
			p.same(contact(`{"email":"not an address"}`))
			p.same(stats(0).with("x-api-key", "nope"))
		}},
		"contact-success-201": {run: func(p *pair) {
			p.expect(contact(validContact), func(a *answer) { a.Status = http.StatusCreated })
			p.same(contact(`{}`))
		}},
		"contact-status-value": {run: func(p *pair) {
			p.expect(contact(validContact), func(a *answer) { a.obj()["status"] = "ok" })
		}},
		"contact-status-missing-phone": {run: func(p *pair) {
			p.expect(contact(phoneContact), func(a *answer) { delete(a.obj(), "status") })
			p.same(contact(validContact))
			p.same(contact(`{"email":"b@example.com","phoneNo":"+14155550101"}`))
		}},
		"contact-id-number": {run: func(p *pair) {
			p.expect(contact(validContact), func(a *answer) { a.obj()["contactId"] = num(1234567) })
		}},
		"contact-id-constant": {run: func(p *pair) {
			p.expect(contact(validContact), func(a *answer) { a.obj()["contactId"] = "<contact_id>" })
			p.expect(contact(phoneContact), func(a *answer) { a.obj()["contactId"] = "<contact_id>" })
		}},
		"contact-id-empty": {run: func(p *pair) {
			p.expect(contact(validContact), func(a *answer) { a.obj()["contactId"] = "" })
		}},
		"contact-id-null-phone": {run: func(p *pair) {
			p.expect(contact(phoneContact), func(a *answer) { a.obj()["contactId"] = nil })
			p.same(contact(validContact))
		}},
	})
}
