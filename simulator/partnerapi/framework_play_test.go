package partnerapi_test

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/partner-v3/conformance-kit/simulator/jsonbody"
	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/simulator/sim"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// TestProfile_PlaysAFrameworksShape (issue 28): the choices of a web
// framework's own shape, each changed alone from the default profile,
// played in the form they were learned.
func TestProfile_PlaysAFrameworksShape(t *testing.T) {
	const list10 = `{"limit": 10, "page": 1}`
	problems := func(p *profile.Profile) {
		bodies := p.Errors.Bodies.Value
		bodies["422"] = profile.ErrorBody{Problems: &profile.Problems{Field: "detail", MessageField: "msg", Fields: []profile.Field{
			{Name: "loc", Type: "array", Format: profile.FormatTemplate, Example: json.RawMessage(`["body","{field}"]`)},
			{Name: "type", Type: "string", Example: json.RawMessage(`"less_than_equal"`)},
		}}}
		p.List.LimitAboveMax.Value = profile.Outcome{Status: 422, Message: "Input should be less than or equal to 50"}
		p.List.PageBelowOne.Value = profile.Outcome{Status: 422, Message: "Input should be greater than or equal to 1"}
	}
	tests := []struct {
		name string
		edit func(p *profile.Profile)
		run  func(t *testing.T, h *harness)
	}{
		{
			name: "errors.bodies with problems: 422, no message field, the item names the request's own field",
			edit: problems,
			run: func(t *testing.T, h *harness) {
				for _, c := range []struct{ body, field, msg string }{
					{`{"limit": 80, "page": 1}`, "limit", "Input should be less than or equal to 50"},
					{`{"limit": 5, "page": 0}`, "page", "Input should be greater than or equal to 1"},
				} {
					var got struct {
						Detail []struct {
							Loc  []string `json:"loc"`
							Msg  string   `json:"msg"`
							Type string   `json:"type"`
						} `json:"detail"`
					}
					a := h.probe(probe{path: spec.PathCampaignList, body: c.body, as: h.alpha})
					m := wantStatus(t, a, 422)
					if err := json.Unmarshal(a.body, &got); err != nil || len(m) != 1 || len(got.Detail) != 1 {
						t.Fatalf("%s: body %s, want {\"detail\": [one problem]}", c.body, a.body)
					}
					if p := got.Detail[0]; len(p.Loc) != 2 || p.Loc[0] != "body" || p.Loc[1] != c.field || p.Msg != c.msg || p.Type != "less_than_equal" {
						t.Errorf("%s: problem %+v, want loc [body %s], msg %q", c.body, p, c.field, c.msg)
					}
				}
			},
		},
		{
			name: "requestBody.malformedJSON: the message as a template of where the parse failed",
			edit: func(p *profile.Profile) {
				p.RequestBody.MalformedJSON.Value = profile.Outcome{Status: 400, Message: "JSON parse error at offset {offset} (column {position}): unexpected character '{char}'"}
			},
			run: func(t *testing.T, h *harness) {
				wantError(t, h.probe(probe{path: spec.PathCampaignList, body: `{"limit": ]}`, as: h.alpha}), 400,
					"JSON parse error at offset 10 (column 11): unexpected character ']'")
				wantError(t, h.probe(probe{path: spec.PathContactAdd, body: `{"email":: 1}`, as: h.alpha}), 400,
					"JSON parse error at offset 9 (column 10): unexpected character ':'")
			},
		},
		{
			name: "requestBody.integralFloat refused on every integer field, naming it",
			edit: func(p *profile.Profile) {
				p.RequestBody.IntegralFloat.Value = profile.Outcome{Status: 422, Message: "{field} should be a valid integer"}
			},
			run: func(t *testing.T, h *harness) {
				wantError(t, h.probe(probe{path: spec.PathCampaignList, body: `{"limit": 5, "page": 1.0}`, as: h.alpha}), 422, "page should be a valid integer")
				wantError(t, h.probe(probe{path: spec.PathCampaignStats, body: `{"campaignId": 1e3}`, as: h.alpha}), 422, "campaignId should be a valid integer")
				wantStatus(t, h.probe(probe{path: spec.PathCampaignList, body: list10, as: h.alpha}), 200)
				// A contact's opt status is contact.validation's
				// optStatus.integralFloat, in a contact field's words
				// (issue 28): default.json's serves it.
				wantStatus(t, h.probe(probe{path: spec.PathContactAdd, body: `{"email": "f@example.com", "smsOptStatus": 1.0}`, as: h.alpha}), 200)
			},
		},
		{
			name: "contact.validation.optStatus.integralFloat: an opt status 1.0 in the words of a contact's field",
			edit: func(p *profile.Profile) {
				p.RequestBody.IntegralFloat.Value = profile.Outcome{Status: 200, PageSize: 5, PageNo: 1}
				p.Contact.Validation = profile.Choice[map[string]profile.Outcome]{Value: map[string]profile.Outcome{
					profile.ClassOptFloat: {Status: 400, Message: "invalid {field}"}}}
			},
			run: func(t *testing.T, h *harness) {
				wantError(t, h.probe(probe{path: spec.PathContactAdd, body: `{"email": "f@example.com", "smsOptStatus": 1.0}`, as: h.alpha}), 400, "invalid smsOptStatus")
				wantError(t, h.probe(probe{path: spec.PathContactAdd, body: `{"email": "f@example.com", "emailOptStatus": 0e0}`, as: h.alpha}), 400, "invalid emailOptStatus")
				wantStatus(t, h.probe(probe{path: spec.PathCampaignList, body: `{"limit": 5.0, "page": 1}`, as: h.alpha}), 200)
			},
		},
		{
			name: "contact.validation: a list holding null, an email that is a number",
			edit: func(p *profile.Profile) {
				p.Contact.Validation = profile.Choice[map[string]profile.Outcome]{Value: map[string]profile.Outcome{
					profile.ClassListNull:          {Status: 200},
					profile.ClassListItem:          {Status: 422, Message: "Input should be a valid string"},
					profile.ClassContactType:       {Status: 400, Message: spec.MsgEmailOrPhoneRequired},
					profile.ClassContactTypeBeside: {Status: 400, Message: "invalid {field}"}}}
			},
			run: func(t *testing.T, h *harness) {
				wantStatus(t, h.probe(probe{path: spec.PathContactAdd, body: `{"email": "n@example.com", "tag": [null, "vip"]}`, as: h.alpha}), 200)
				wantError(t, h.probe(probe{path: spec.PathContactAdd, body: `{"email": "n@example.com", "tag": [null, 1]}`, as: h.alpha}), 422, "Input should be a valid string")
				// An email of another type is read as absent: §4.1's
				// refusal alone; beside a phoneNo, phoneNo.type's refusal.
				wantError(t, h.probe(probe{path: spec.PathContactAdd, body: `{"email": 5}`, as: h.alpha}), 400, spec.MsgEmailOrPhoneRequired)
				wantError(t, h.probe(probe{path: spec.PathContactAdd, body: `{"email": 5, "phoneNo": "+15551234567"}`, as: h.alpha}), 400, "invalid email")
				wantError(t, h.probe(probe{path: spec.PathContactAdd, body: `{"email": "n@example.com", "phoneNo": 5551234567}`, as: h.alpha}), 400, "invalid phoneNo")
			},
		},
		{
			name: "auth.checkOrder: the body, then the account, then the key",
			edit: func(p *profile.Profile) {
				p.Auth.CheckOrder.Value = []string{profile.CheckJSON, profile.CheckFields, profile.CheckAccount, profile.CheckCredentials}
				p.Auth.CredentialsFirst.Value = false
			},
			run: func(t *testing.T, h *harness) {
				wrongKey := map[string]string{spec.HeaderAPIKey: "nope", spec.HeaderAccountID: "no-such-account"}
				wantError(t, h.probe(probe{path: spec.PathCampaignList, body: list10, as: h.alpha, header: wrongKey}), 403, spec.MsgUnauthorizedAccount)
				// A known account and a wrong key: the key's 401.
				wantError(t, h.probe(probe{path: spec.PathCampaignList, body: list10, as: h.alpha, header: map[string]string{spec.HeaderAPIKey: "nope"}}), 401, spec.MsgInvalidCredentials)
				_, jsonErr := jsonbody.Parse([]byte(`{"limit": #}`))
				a := h.probe(probe{path: spec.PathCampaignList, body: `{"limit": #}`, as: h.alpha, header: map[string]string{spec.HeaderAPISecret: "nope"}})
				wantStatus(t, a, 400)
				if !regexp.MustCompile(`not valid JSON`).Match(a.body) || jsonErr == nil {
					t.Errorf("a body that is no JSON and a wrong secret: %s, want the parse error", a.body)
				}
			},
		},
		{
			name: "auth.checkOrder: fields before JSON read a body that is no JSON as {}",
			edit: func(p *profile.Profile) {
				p.Auth.CheckOrder.Value = []string{profile.CheckCredentials, profile.CheckAccount, profile.CheckFields, profile.CheckJSON}
			},
			run: func(t *testing.T, h *harness) {
				wantError(t, h.probe(probe{path: spec.PathCampaignStats, body: `{"campaignId": #}`, as: h.alpha}), 400, spec.MsgCampaignIDRequired)
			},
		},
		{
			name: "contact.contactId: 8 digits, and 24 hex digits without a prefix",
			edit: func(p *profile.Profile) { p.Contact.ID.Value = profile.IDFormat{Kind: profile.IDNumeric, Digits: 8} },
			run: func(t *testing.T, h *harness) {
				m := wantStatus(t, h.probe(probe{path: spec.PathContactAdd, body: `{"email": "eight@example.com"}`, as: h.alpha}), 200)
				if id, _ := m["contactId"].(string); !regexp.MustCompile(`^[1-9][0-9]{7}$`).MatchString(id) {
					t.Errorf("contactId %q, want 8 digits", id)
				}
			},
		},
		{
			name: "contact.contactId: 24 lowercase hex digits alone",
			edit: func(p *profile.Profile) {
				p.Contact.ID.Value = profile.IDFormat{Kind: profile.IDPrefixed, Digits: 24, Alphabet: profile.AlphabetHex}
			},
			run: func(t *testing.T, h *harness) {
				m := wantStatus(t, h.probe(probe{path: spec.PathContactAdd, body: `{"email": "hex@example.com"}`, as: h.alpha}), 200)
				if id, _ := m["contactId"].(string); !regexp.MustCompile(`^[0-9a-f]{24}$`).MatchString(id) {
					t.Errorf("contactId %q, want 24 lowercase hex digits", id)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := profile.Default()
			tt.edit(p)
			if err := p.Check(); err != nil {
				t.Fatalf("the test's profile: %v", err)
			}
			tt.run(t, mustOpenProfile(t, p, sim.Config{}))
		})
	}
}

// TestProbeParseError: profile.ProbeParseError is what the simulator says
// of the malformedJSON probe ({parseError} there, which Compare renders).
func TestProbeParseError(t *testing.T) {
	_, err := jsonbody.Parse([]byte(profile.ProbeMalformedJSON))
	if err == nil || !regexp.MustCompile(`message=`+regexp.QuoteMeta(profile.ProbeParseError)+`$`).MatchString(err.Error()) {
		t.Fatalf("the probe's parse error %v, want %q", err, profile.ProbeParseError)
	}
}
