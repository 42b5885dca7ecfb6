package partnerapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/partner-v3/conformance-kit/simulator/sim"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// TestContactAdd_Accepted covers spec §4.1 success: either identifier is
// enough, every §2.1 field is accepted, and the contact is stored.
func TestContactAdd_Accepted(t *testing.T) {
	h := MustOpenServer(t, sim.Config{})
	full := map[string]any{
		"email": "ada@example.com", "phoneNo": "+1 (555) 010-9999", "firstName": "Ada", "lastName": "Lovelace",
		"addrOne": "12 St James's Square", "addrTwo": "Flat 2", "city": "London", "country": "UK", "state": "LDN",
		"zipCode": "SW1Y 4JH", "gender": "female", "dateOfBirth": "1990-12-10", "emailOptStatus": 1, "smsOptStatus": 0,
		"tag": []string{"vip", "newsletter"}, "playerType": []string{"casual"},
	}
	tests := []struct {
		name string
		body map[string]any
	}{
		{"email only", map[string]any{"email": "only-email@example.com"}},
		{"phoneNo only", map[string]any{"phoneNo": "+14155550100"}},
		{"every field", full},
		{"null optional fields", map[string]any{"email": "nulls@example.com", "gender": nil, "tag": nil}},
		{"empty tag list", map[string]any{"email": "notags@example.com", "tag": []string{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := h.as(h.alpha).POST("/contact/add").WithJSON(tt.body).Expect().
				Status(http.StatusOK).HasContentType("application/json").JSON().Object()
			obj.Keys().ContainsOnly("status", "contactId")
			obj.Value("status").IsEqual("success")
			obj.Value("contactId").String().NotEmpty()
		})
	}
	t.Run("the contact is stored with its fields", func(t *testing.T) {
		stored := h.admin().GET("/contacts").WithQuery("accountId", h.alpha.AccountID).Expect().
			Status(http.StatusOK).JSON().Object()
		stored.Value("total").IsEqual(len(tests))
		var found bool
		for _, c := range stored.Value("contacts").Array().Iter() {
			if c.Object().Raw()["email"] == "ada@example.com" {
				found = true
				for k, v := range full {
					c.Object().Value(k).IsEqual(v)
				}
			}
		}
		if !found {
			t.Fatal("the full contact is not among the stored ones")
		}
	})
}

// TestContactAdd_Duplicate checks the documented choice for an existing
// contact (spec §2.1: not shown): the same contactId, fields merged.
func TestContactAdd_Duplicate(t *testing.T) {
	h := MustOpenServer(t, sim.Config{})
	first := h.as(h.alpha).POST("/contact/add").WithJSON(map[string]any{"email": "Dup@Example.com", "firstName": "A"}).
		Expect().Status(http.StatusOK).JSON().Object().Value("contactId").String().Raw()
	h.as(h.alpha).POST("/contact/add").WithJSON(map[string]any{"email": "dup@example.com", "city": "Oslo"}).
		Expect().Status(http.StatusOK).JSON().Object().Value("contactId").IsEqual(first)
	other := h.as(h.bravo).POST("/contact/add").WithJSON(map[string]any{"email": "dup@example.com"}).
		Expect().Status(http.StatusOK).JSON().Object().Value("contactId").String().Raw()
	if other == first {
		t.Fatal("another account's contact shares the id: accounts are not isolated")
	}
	phone := h.as(h.alpha).POST("/contact/add").WithJSON(map[string]any{"phoneNo": "+4790000000"}).
		Expect().Status(http.StatusOK).JSON().Object().Value("contactId").String().Raw()
	h.as(h.alpha).POST("/contact/add").WithJSON(map[string]any{"phoneNo": "+4790000000", "lastName": "B"}).
		Expect().Status(http.StatusOK).JSON().Object().Value("contactId").IsEqual(phone)
	if got, want := h.contactCount(h.alpha), 2; got != want {
		t.Fatalf("alpha has %d contacts, want %d", got, want)
	}
	c := h.admin().GET("/contacts").WithQuery("accountId", h.alpha.AccountID).Expect().JSON().Object().
		Value("contacts").Array().Value(0).Object()
	c.Value("firstName").IsEqual("A")
	c.Value("city").IsEqual("Oslo")
}

// TestContactAdd_Refused covers the spec §4.1 400 and the documented
// answers to invalid fields (not shown in the spec): a 400 naming the field,
// and nothing stored.
func TestContactAdd_Refused(t *testing.T) {
	h := MustOpenServer(t, sim.Config{})
	tests := []struct {
		name  string
		body  string
		field string // "" means the spec's exact message
	}{
		{"neither email nor phoneNo", `{"firstName":"Ann"}`, ""},
		{"empty object", `{}`, ""},
		{"both empty strings", `{"email":"","phoneNo":""}`, ""},
		{"both null", `{"email":null,"phoneNo":null}`, ""},
		{"only a misspelt identifier", `{"phone":"+4790000000","firstName":"Ann"}`, ""},
		{"neither, and a bad gender", `{"gender":"x"}`, ""},
		{"email not a string", `{"email":42}`, "email must be a string"},
		{"phoneNo not a string", `{"phoneNo":4790000000}`, "phoneNo must be a string"},
		{"malformed email", `{"email":"not-an-address"}`, "email"},
		{"email with a display name", `{"email":"Ann <ann@example.com>"}`, "email"},
		{"phone with letters", `{"phoneNo":"call me"}`, "phoneNo"},
		{"phone too short", `{"phoneNo":"12345"}`, "phoneNo"},
		{"gender out of the list", `{"email":"g@example.com","gender":"Female"}`, "gender"},
		{"date in another format", `{"email":"d@example.com","dateOfBirth":"10/12/1990"}`, "dateOfBirth"},
		{"impossible date", `{"email":"d@example.com","dateOfBirth":"1990-02-30"}`, "dateOfBirth"},
		{"date in the future", `{"email":"d@example.com","dateOfBirth":"2999-01-01"}`, "dateOfBirth"},
		{"opt status 2", `{"email":"o@example.com","emailOptStatus":2}`, "emailOptStatus"},
		{"opt status as string", `{"email":"o@example.com","smsOptStatus":"1"}`, "smsOptStatus must be an integer"},
		{"opt status as fraction", `{"email":"o@example.com","smsOptStatus":0.5}`, "smsOptStatus must be an integer"},
		{"tag not a list", `{"email":"t@example.com","tag":"vip"}`, "tag must be an array of strings"},
		{"tag list of numbers", `{"email":"t@example.com","playerType":[1,2]}`, "playerType must be an array of strings"},
		{"empty tag name", `{"email":"t@example.com","tag":[""]}`, "tag"},
		{"too many tags", `{"email":"t@example.com","tag":[` + strings.Repeat(`"x",`, 100) + `"x"]}`, "tag"},
		{"country not a code", `{"email":"c@example.com","country":"United Kingdom"}`, "country"},
		{"name too long", `{"email":"n@example.com","firstName":"` + strings.Repeat("a", 256) + `"}`, "firstName"},
		{"unknown field", `{"email":"u@example.com","phone":"+4790000000"}`, `"phone"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := h.as(h.alpha).POST("/contact/add").WithBytes([]byte(tt.body)).
				WithHeader("Content-Type", "application/json").Expect()
			if tt.field == "" {
				expectError(resp, http.StatusBadRequest, spec.MsgEmailOrPhoneRequired)
				return
			}
			resp.Status(http.StatusBadRequest).HasContentType("application/json")
			resp.JSON().Object().Keys().ContainsOnly("error")
			resp.JSON().Object().Value("error").String().Contains(tt.field)
		})
	}
	if got := h.contactCount(h.alpha); got != 0 {
		t.Fatalf("refused requests stored %d contacts", got)
	}
}
