package partnerapi_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/simulator/sim"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

var (
	uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	list10 = `{"limit":10,"page":1}`
)

// refusal is a profile Outcome refusing with status and message.
func refusal(status int, message string) profile.Outcome {
	return profile.Outcome{Status: status, Message: message}
}

func wantStatus(t *testing.T, a probeAnswer, status int) map[string]any {
	t.Helper()
	if a.status != status {
		t.Fatalf("status %d, want %d: %s", a.status, status, a.body)
	}
	return a.object(t)
}

func wantError(t *testing.T, a probeAnswer, status int, message string) {
	t.Helper()
	m := wantStatus(t, a, status)
	if len(m) != 1 || m["error"] != message {
		t.Fatalf("body %s, want {\"error\": %q}", a.body, message)
	}
}

// TestProfile_Plays starts from the default profile, changes one choice,
// and shows the simulator plays it (issue 20).
func TestProfile_Plays(t *testing.T) {
	tests := []struct {
		name string
		edit func(p *profile.Profile)
		cfg  sim.Config
		// run sends the probes and checks the answers.
		run func(t *testing.T, h *harness)
	}{
		{
			name: "errors.bodies shapes a 400 with its message field and made fields",
			edit: func(p *profile.Profile) {
				p.Errors.Bodies.Value = map[string]profile.ErrorBody{"400": {MessageField: "message", Fields: []profile.Field{
					{Name: "code", Type: "integer", Format: profile.FormatStatus},
					{Name: "traceId", Type: "string", Format: profile.FormatUUID},
					{Name: "timestamp", Type: "string", Format: profile.FormatDateTime},
					{Name: "requestId", Type: "string", Format: profile.FormatEchoRequestID},
					{Name: "type", Type: "string", Example: json.RawMessage(`"invalid_request"`)},
				}}}
			},
			run: func(t *testing.T, h *harness) {
				a := h.probe(probe{path: spec.PathCampaignList, body: `{"limit":80,"page":1}`, as: h.alpha, header: map[string]string{"X-Request-Id": "req-42"}})
				m := wantStatus(t, a, 400)
				if m["message"] != "limit must be between 1 and 50" || m["code"] != 400.0 || m["requestId"] != "req-42" || m["type"] != "invalid_request" || len(m) != 6 {
					t.Errorf("body %s", a.body)
				}
				if !uuidRE.MatchString(fmt.Sprint(m["traceId"])) {
					t.Errorf("traceId %v is no UUID v4", m["traceId"])
				}
				if _, err := time.Parse(time.RFC3339, fmt.Sprint(m["timestamp"])); err != nil {
					t.Errorf("timestamp: %v", err)
				}
				// 401 has no shape of its own: it takes 400's.
				b := wantStatus(t, h.probe(probe{path: spec.PathCampaignList, body: list10}), 401)
				if b["message"] != spec.MsgInvalidCredentials || b["code"] != 401.0 {
					t.Errorf("401 body %v", b)
				}
			},
		},
		{
			name: "errors.bodies nests the message and fields named by dotted paths",
			edit: func(p *profile.Profile) {
				p.Errors.Bodies.Value = map[string]profile.ErrorBody{"400": {MessageField: "error.message", Fields: []profile.Field{
					{Name: "error.code", Type: "integer", Format: profile.FormatStatus},
					{Name: "requestId", Type: "string", Format: profile.FormatEchoRequestID},
					{Name: "error.details.hint", Type: "string", Example: json.RawMessage(`"see the docs"`)},
				}}}
			},
			run: func(t *testing.T, h *harness) {
				a := h.probe(probe{path: spec.PathCampaignList, body: `{"limit":80,"page":1}`, as: h.alpha, header: map[string]string{"X-Request-Id": "req-7"}})
				wantStatus(t, a, 400)
				const want = `{"error":{"message":"limit must be between 1 and 50","code":400,"details":{"hint":"see the docs"}},"requestId":"req-7"}` + "\n"
				if string(a.body) != want {
					t.Errorf("body %s, want %s", a.body, want)
				}
			},
		},
		{
			name: "errors.bodies shapes an injected 503 as 400's",
			edit: func(p *profile.Profile) {
				p.Errors.Bodies.Value = map[string]profile.ErrorBody{"400": {MessageField: "detail"}}
			},
			run: func(t *testing.T, h *harness) {
				h.addFault(map[string]any{"operation": spec.PathCampaignList, "kind": "error", "status": 503})
				a := h.probe(probe{path: spec.PathCampaignList, body: list10, as: h.alpha})
				if m := wantStatus(t, a, 503); m["detail"] != "Service Unavailable" || len(m) != 1 {
					t.Errorf("body %s", a.body)
				}
			},
		},
		{
			name: "errors.bodies never shapes the 429 of §7",
			edit: func(p *profile.Profile) {
				p.Errors.Bodies.Value = map[string]profile.ErrorBody{"400": {MessageField: "message"}}
			},
			cfg: sim.Config{RateLimit: 1},
			run: func(t *testing.T, h *harness) {
				wantStatus(t, h.probe(probe{path: spec.PathCampaignList, body: list10, as: h.alpha}), 200)
				wantError(t, h.probe(probe{path: spec.PathCampaignList, body: list10, as: h.alpha}), 429, spec.MsgRateLimit)
			},
		},
		{
			name: "auth.missingAccount 401",
			edit: func(p *profile.Profile) {
				p.Auth.MissingAccount.Value = refusal(401, spec.MsgInvalidCredentials)
			},
			run: func(t *testing.T, h *harness) {
				wantError(t, h.probe(probe{path: spec.PathCampaignList, body: list10, as: h.alpha, header: map[string]string{spec.HeaderAccountID: ""}}),
					401, spec.MsgInvalidCredentials)
				// A wrong account id is still §5 rule 2's 403.
				wantError(t, h.probe(probe{path: spec.PathCampaignList, body: list10, as: h.alpha, header: map[string]string{spec.HeaderAccountID: h.bravo.AccountID}}),
					403, spec.MsgUnauthorizedAccount)
			},
		},
		{
			name: "auth.credentialsFirst false answers the body's 400 before the 401",
			// A profile written before auth.checkOrder: credentialsFirst
			// alone says the order (profile.CheckOrderOf).
			edit: func(p *profile.Profile) {
				p.Auth.CredentialsFirst.Value = false
				p.Auth.CheckOrder = profile.Choice[[]string]{Unknown: profile.NotInFile}
			},
			run: func(t *testing.T, h *harness) {
				wrong := map[string]string{spec.HeaderAPISecret: "nope"}
				wantError(t, h.probe(probe{path: spec.PathCampaignStats, body: `{}`, as: h.alpha, header: wrong}), 400, spec.MsgCampaignIDRequired)
				wantError(t, h.probe(probe{path: spec.PathCampaignStats, body: `{"campaignId":1}`, as: h.alpha, header: wrong}), 401, spec.MsgInvalidCredentials)
				wantError(t, h.probe(probe{path: spec.PathContactAdd, body: `{"firstName":"x"}`, as: h.alpha, header: wrong}), 400, spec.MsgEmailOrPhoneRequired)
				// The body read ahead is the handler's still.
				wantStatus(t, h.probe(probe{path: spec.PathContactAdd, body: `{"email":"ok@example.com"}`, as: h.alpha}), 200)
			},
		},
		{
			name: "contact.contactId uuid",
			edit: func(p *profile.Profile) { p.Contact.ID.Value = profile.IDFormat{Kind: profile.IDUUID} },
			run: func(t *testing.T, h *harness) {
				m := wantStatus(t, h.probe(probe{path: spec.PathContactAdd, body: `{"email":"u@example.com"}`, as: h.alpha}), 200)
				if !uuidRE.MatchString(fmt.Sprint(m["contactId"])) {
					t.Errorf("contactId %v", m["contactId"])
				}
			},
		},
		{
			name: "contact.contactId numeric",
			edit: func(p *profile.Profile) { p.Contact.ID.Value = profile.IDFormat{Kind: profile.IDNumeric} },
			run: func(t *testing.T, h *harness) {
				m := wantStatus(t, h.probe(probe{path: spec.PathContactAdd, body: `{"email":"n@example.com"}`, as: h.alpha}), 200)
				if !regexp.MustCompile(`^[1-9][0-9]{11}$`).MatchString(fmt.Sprint(m["contactId"])) {
					t.Errorf("contactId %v", m["contactId"])
				}
			},
		},
		{
			name: "contact.contactId prefixed decimal counter",
			edit: func(p *profile.Profile) {
				p.Contact.ID.Value = profile.IDFormat{Kind: profile.IDPrefixed, Prefix: "C-", Digits: 8, Alphabet: profile.AlphabetDecimal}
			},
			run: func(t *testing.T, h *harness) {
				for i, want := range []string{"C-00000001", "C-00000002"} {
					m := wantStatus(t, h.probe(probe{path: spec.PathContactAdd, body: fmt.Sprintf(`{"email":"d%d@example.com"}`, i), as: h.alpha}), 200)
					if m["contactId"] != want {
						t.Errorf("contactId %v, want %s", m["contactId"], want)
					}
				}
			},
		},
		{
			name: "contact.contactId prefixed hex",
			edit: func(p *profile.Profile) {
				p.Contact.ID.Value = profile.IDFormat{Kind: profile.IDPrefixed, Prefix: "cid_", Digits: 7, Alphabet: profile.AlphabetHex}
			},
			run: func(t *testing.T, h *harness) {
				m := wantStatus(t, h.probe(probe{path: spec.PathContactAdd, body: `{"email":"h@example.com"}`, as: h.alpha}), 200)
				if !regexp.MustCompile(`^cid_[0-9a-f]{7}$`).MatchString(fmt.Sprint(m["contactId"])) {
					t.Errorf("contactId %v", m["contactId"])
				}
			},
		},
		{
			name: "contact.duplicateEmail new-id and duplicatePhone refused",
			edit: func(p *profile.Profile) {
				p.Contact.DuplicateEmail.Value = profile.Duplicate{Answer: profile.DuplicateNewID}
				r := refusal(409, "Contact already exists")
				p.Contact.DuplicatePhone.Value = profile.Duplicate{Answer: profile.DuplicateRefused, Refusal: &r}
			},
			run: func(t *testing.T, h *harness) {
				before := h.contactCount(h.alpha)
				add := func(body string) probeAnswer {
					return h.probe(probe{path: spec.PathContactAdd, body: body, as: h.alpha})
				}
				first := wantStatus(t, add(`{"email":"dup@example.com"}`), 200)
				again := wantStatus(t, add(`{"email":"dup@example.com"}`), 200)
				if first["contactId"] == again["contactId"] {
					t.Errorf("the same contactId %v twice, want a new one", first["contactId"])
				}
				wantStatus(t, add(`{"phoneNo":"+14155550123"}`), 200)
				wantError(t, add(`{"phoneNo":"+14155550123","firstName":"Again"}`), 409, "Contact already exists")
				if got := h.contactCount(h.alpha); got != before+3 {
					t.Errorf("%d contacts stored, want %d", got-before, 3)
				}
			},
		},
		{
			name: "contact.duplicateEmail refused",
			edit: func(p *profile.Profile) {
				r := refusal(400, "{field} is taken")
				p.Contact.DuplicateEmail.Value = profile.Duplicate{Answer: profile.DuplicateRefused, Refusal: &r}
			},
			run: func(t *testing.T, h *harness) {
				wantStatus(t, h.probe(probe{path: spec.PathContactAdd, body: `{"email":"taken@example.com"}`, as: h.alpha}), 200)
				wantError(t, h.probe(probe{path: spec.PathContactAdd, body: `{"email":"Taken@example.com"}`, as: h.alpha}), 400, "email is taken")
				// Another account's contacts are not this one's.
				wantStatus(t, h.probe(probe{path: spec.PathContactAdd, body: `{"email":"taken@example.com"}`, as: h.bravo}), 200)
			},
		},
		{
			name: "contact.validation refused with the profile's status and the field named",
			edit: func(p *profile.Profile) {
				p.Contact.Validation.Value[profile.ClassStringType] = refusal(422, "{field} has the wrong type")
				p.Contact.Validation.Value[profile.ClassEmptyString] = refusal(400, "{field} is empty")
			},
			run: func(t *testing.T, h *harness) {
				wantError(t, h.probe(probe{path: spec.PathContactAdd, body: `{"email":"v@example.com","city":5}`, as: h.alpha}), 422, "city has the wrong type")
				wantError(t, h.probe(probe{path: spec.PathContactAdd, body: `{"email":"v@example.com","state":""}`, as: h.alpha}), 400, "state is empty")
				// gender is not among string.empty's fields: today's answer.
				wantStatus(t, h.probe(probe{path: spec.PathContactAdd, body: `{"email":"v@example.com","gender":""}`, as: h.alpha}), 200)
				// Outside every class: today's answer.
				wantError(t, h.probe(probe{path: spec.PathContactAdd, body: `{"email":"v@example.com","city":"` + strings.Repeat("a", 300) + `"}`, as: h.alpha}),
					400, "city is longer than 255 characters")
			},
		},
		{
			name: "contact.validation accepted stores the contact",
			edit: func(p *profile.Profile) {
				for _, c := range []string{profile.ClassGenderValue, profile.ClassStringType, profile.ClassUnknownField, profile.ClassOptType, profile.ClassListType, profile.ClassDateImpossible} {
					p.Contact.Validation.Value[c] = profile.Outcome{Status: 200}
				}
			},
			run: func(t *testing.T, h *harness) {
				wantStatus(t, h.probe(probe{path: spec.PathContactAdd, as: h.alpha,
					body: `{"email":"acc@example.com","gender":"unknown","firstName":5,"nickname":"x","smsOptStatus":"1","tag":"vip","dateOfBirth":"1990-02-30"}`}), 200)
				stored := h.admin().GET("/contacts").WithQuery("accountId", h.alpha.AccountID).Expect().Status(http.StatusOK).JSON().Object()
				var found bool
				for _, c := range stored.Value("contacts").Array().Iter() {
					m := c.Object().Raw()
					if m["email"] != "acc@example.com" {
						continue
					}
					found = true
					if m["gender"] != "unknown" || m["firstName"] != "5" || m["smsOptStatus"] != 1.0 || fmt.Sprint(m["tag"]) != "[vip]" || m["dateOfBirth"] != "1990-02-30" || m["nickname"] != nil {
						t.Errorf("stored %v", m)
					}
				}
				if !found {
					t.Fatal("the contact is not stored")
				}
			},
		},
		{
			name: "campaignList out-of-range values accepted and clamped",
			edit: func(p *profile.Profile) {
				// What the probes of steps/learn answered.
				p.List.LimitAboveMax.Value = profile.Outcome{Status: 200, PageSize: 50, PageNo: 1}
				p.List.PageBelowOne.Value = profile.Outcome{Status: 200, PageSize: 10, PageNo: 1}
				p.List.WrongType.Value = profile.Outcome{Status: 200, PageSize: 5, PageNo: 1}
				p.List.ExtraField.Value = profile.Outcome{Status: 200, PageSize: 10, PageNo: 1}
				p.List.LimitMissing.Value = refusal(422, "{field} missing")
			},
			run: func(t *testing.T, h *harness) {
				for _, tt := range []struct {
					body         string
					size, pageNo float64
				}{
					{`{"limit":80,"page":1}`, 50, 1},
					{`{"limit":10,"page":0}`, 10, 1},
					{`{"limit":"5","page":"2"}`, 5, 2},
					{`{"limit":10,"page":1,"filter":"x"}`, 10, 1},
				} {
					m := wantStatus(t, h.probe(probe{path: spec.PathCampaignList, body: tt.body, as: h.alpha}), 200)
					if m["pageSize"] != tt.size || m["pageNo"] != tt.pageNo || float64(len(m["campaigns"].([]any))) != tt.size {
						t.Errorf("%s: pageSize %v pageNo %v, want %v %v", tt.body, m["pageSize"], m["pageNo"], tt.size, tt.pageNo)
					}
				}
				wantError(t, h.probe(probe{path: spec.PathCampaignList, body: `{"page":1}`, as: h.alpha}), 422, "limit missing")
			},
		},
		{
			name: "campaignList.pastLast serves the last page",
			edit: func(p *profile.Profile) {
				p.List.PastLast.Value = profile.PastLast{Outcome: profile.Outcome{Status: 200}}
			},
			run: func(t *testing.T, h *harness) {
				m := wantStatus(t, h.probe(probe{path: spec.PathCampaignList, body: `{"limit":10,"page":99}`, as: h.alpha}), 200)
				if m["pageNo"] != 8.0 || len(m["campaigns"].([]any)) != 3 {
					t.Errorf("pageNo %v with %d campaigns, want 8 with 3 (73 campaigns)", m["pageNo"], len(m["campaigns"].([]any)))
				}
			},
		},
		{
			name: "campaignList.pastLast refused",
			edit: func(p *profile.Profile) {
				p.List.PastLast.Value = profile.PastLast{Outcome: refusal(404, "Page not found")}
			},
			run: func(t *testing.T, h *harness) {
				wantError(t, h.probe(probe{path: spec.PathCampaignList, body: `{"limit":10,"page":99}`, as: h.alpha}), 404, "Page not found")
				wantStatus(t, h.probe(probe{path: spec.PathCampaignList, body: `{"limit":10,"page":8}`, as: h.alpha}), 200)
			},
		},
		{
			name: "campaignList filtered active and id-desc",
			edit: func(p *profile.Profile) {
				p.List.Filtered.Value = profile.FilteredActive
				p.List.Order.Value = profile.OrderIDDesc
			},
			run: func(t *testing.T, h *harness) {
				m := wantStatus(t, h.probe(probe{path: spec.PathCampaignList, body: `{"limit":50,"page":1}`, as: h.alpha}), 200)
				n := wantStatus(t, h.probe(probe{path: spec.PathCampaignList, body: `{"limit":50,"page":2}`, as: h.alpha}), 200)
				all := append(m["campaigns"].([]any), n["campaigns"].([]any)...)
				if m["totalRecords"] != 73.0 || m["filteredRecords"] != float64(len(all)) || len(all) >= 73 {
					t.Errorf("totalRecords %v filteredRecords %v, %d campaigns listed", m["totalRecords"], m["filteredRecords"], len(all))
				}
				prev := 1e18
				for _, c := range all {
					c := c.(map[string]any)
					if c["active"] != 1.0 || c["Id"].(float64) >= prev {
						t.Fatalf("campaign %v after Id %v", c, prev)
					}
					prev = c["Id"].(float64)
				}
			},
		},
		{
			name: "campaignStats choices accepted",
			edit: func(p *profile.Profile) {
				p.Stats.Unknown.Value = profile.Outcome{Status: 200}
				p.Stats.NumericString.Value = profile.Outcome{Status: 200}
				p.Stats.ExtraField.Value = profile.Outcome{Status: 200}
			},
			run: func(t *testing.T, h *harness) {
				m := wantStatus(t, h.probe(probe{path: spec.PathCampaignStats, body: `{"campaignId":987654321}`, as: h.alpha}), 200)
				if e := m["emailStat"].(map[string]any); len(e) != 9 || e["Hardbounce"] != 0.0 || len(m["smsStat"].(map[string]any)) != 3 {
					t.Errorf("unknown campaign: %v", m)
				}
				id := h.firstCampaignID(h.alpha)
				wantStatus(t, h.probe(probe{path: spec.PathCampaignStats, body: fmt.Sprintf(`{"campaignId":"%d"}`, id), as: h.alpha}), 200)
				wantStatus(t, h.probe(probe{path: spec.PathCampaignStats, body: fmt.Sprintf(`{"campaignId":%d,"x":1}`, id), as: h.alpha}), 200)
			},
		},
		{
			name: "campaignStats choices refused",
			edit: func(p *profile.Profile) {
				p.Stats.Unknown.Value = refusal(400, "Invalid campaignId")
				p.Stats.NumericString.Value = refusal(422, "bad {field}")
			},
			run: func(t *testing.T, h *harness) {
				wantError(t, h.probe(probe{path: spec.PathCampaignStats, body: `{"campaignId":987654321}`, as: h.alpha}), 400, "Invalid campaignId")
				wantError(t, h.probe(probe{path: spec.PathCampaignStats, body: `{"campaignId":"12"}`, as: h.alpha}), 422, "bad campaignId")
			},
		},
		{
			name: "http.unknownPath and otherMethod",
			edit: func(p *profile.Profile) {
				p.HTTP.UnknownPath.Value = refusal(400, "Bad route")
				p.HTTP.OtherMethod.Value = profile.MethodOutcome{Outcome: refusal(404, "Not Found")}
			},
			run: func(t *testing.T, h *harness) {
				wantError(t, h.probe(probe{path: "contact/remove", body: `{}`, as: h.alpha}), 400, "Bad route")
				a := h.probe(probe{method: http.MethodGet, path: spec.PathContactAdd, as: h.alpha})
				wantError(t, a, 404, "Not Found")
				if got := a.header.Get("Allow"); got != "" {
					t.Errorf("Allow %q, want none", got)
				}
			},
		},
		{
			name: "http.requestContentType accepted",
			edit: func(p *profile.Profile) { p.HTTP.RequestContentType.Value = profile.Outcome{Status: 200} },
			run: func(t *testing.T, h *harness) {
				wantStatus(t, h.probe(probe{path: spec.PathCampaignList, body: list10, as: h.alpha, header: map[string]string{"Content-Type": "text/plain"}}), 200)
				// Learned from text/plain, played for every media type but
				// JSON's (issue 28): a deployment that reads text/plain as
				// JSON reads a form or XML so too.
				for _, ct := range []string{"application/xml", "application/x-www-form-urlencoded", "text/csv; charset=utf-8"} {
					wantStatus(t, h.probe(probe{path: spec.PathCampaignList, body: list10, as: h.alpha, header: map[string]string{"Content-Type": ct}}), 200)
				}
				// JSON's own media type with another charset is not the
				// choice: still the simulator's 415.
				wantStatus(t, h.probe(probe{path: spec.PathCampaignList, body: list10, as: h.alpha, header: map[string]string{"Content-Type": "application/json; charset=latin1"}}), 415)
			},
		},
		{
			name: "http.requestContentType refused, echoing each media type",
			edit: func(p *profile.Profile) {
				p.HTTP.RequestContentType.Value = refusal(415, "unsupported media type {contentType}: send application/json")
			},
			run: func(t *testing.T, h *harness) {
				for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "application/xml"} {
					wantError(t, h.probe(probe{path: spec.PathCampaignList, body: list10, as: h.alpha, header: map[string]string{"Content-Type": ct}}),
						415, "unsupported media type "+ct+": send application/json")
				}
			},
		},
		{
			name: "notInteger and null: every wrong type of every integer field, null read as the profile reads it",
			edit: func(p *profile.Profile) {
				p.List.WrongType.Value = profile.Outcome{Status: 200, PageSize: 5, PageNo: 1}
				p.List.NotInteger.Value = refusal(422, "{field} must be a number")
				p.List.Null.Value = refusal(422, "limit must be a number") // as notInteger: a wrong type
				p.Stats.NotInteger.Value = refusal(422, "campaignId must be a number")
				p.Stats.Null.Value = refusal(400, spec.MsgCampaignIDRequired) // as missing
			},
			run: func(t *testing.T, h *harness) {
				wantStatus(t, h.probe(probe{path: spec.PathCampaignList, body: `{"limit": "5", "page": 1}`, as: h.alpha}), 200)
				for _, b := range []string{`{"limit": 2.5, "page": 1}`, `{"limit": true, "page": 1}`, `{"limit": "abc", "page": 1}`, `{"limit": {}, "page": 1}`, `{"limit": null, "page": 1}`} {
					wantError(t, h.probe(probe{path: spec.PathCampaignList, body: b, as: h.alpha}), 422, "limit must be a number")
				}
				wantError(t, h.probe(probe{path: spec.PathCampaignList, body: `{"limit": 5, "page": [1]}`, as: h.alpha}), 422, "page must be a number")
				wantError(t, h.probe(probe{path: spec.PathCampaignList, body: `{"limit": 5, "page": null}`, as: h.alpha}), 422, "page must be a number")
				for _, b := range []string{`{"campaignId": 1.5}`, `{"campaignId": false}`, `{"campaignId": "x1"}`} {
					wantError(t, h.probe(probe{path: spec.PathCampaignStats, body: b, as: h.alpha}), 422, "campaignId must be a number")
				}
				wantError(t, h.probe(probe{path: spec.PathCampaignStats, body: `{"campaignId": null}`, as: h.alpha}), 400, spec.MsgCampaignIDRequired)
			},
		},
		{
			name: "campaignList.null read as missing, and its own answer",
			edit: func(p *profile.Profile) {
				p.List.LimitMissing.Value = profile.Outcome{Status: 200, PageSize: 10, PageNo: 1}
				p.List.PageMissing.Value = refusal(400, "page is required")
				p.List.Null.Value = profile.Outcome{Status: 200, PageSize: 10, PageNo: 1}
				p.Stats.Null.Value = refusal(400, "campaignId must not be null")
			},
			run: func(t *testing.T, h *harness) {
				wantStatus(t, h.probe(probe{path: spec.PathCampaignList, body: `{"limit": null, "page": 1}`, as: h.alpha}), 200)
				wantError(t, h.probe(probe{path: spec.PathCampaignList, body: `{"limit": 5, "page": null}`, as: h.alpha}), 400, "page is required")
				wantError(t, h.probe(probe{path: spec.PathCampaignStats, body: `{"campaignId": null}`, as: h.alpha}), 400, "campaignId must not be null")
			},
		},
		{
			name: "http.bodyLimit",
			edit: func(p *profile.Profile) {
				r := refusal(400, "Payload too large")
				p.HTTP.BodyLimit.Value = profile.BodyLimit{Accepted: 16 << 10, Refused: 64 << 10, Refusal: &r}
			},
			run: func(t *testing.T, h *harness) {
				body := func(n int) string { return `{"limit":10,"page":1` + strings.Repeat(" ", n-len(list10)) + `}` }
				wantStatus(t, h.probe(probe{path: spec.PathCampaignList, body: body(16 << 10), as: h.alpha}), 200)
				wantError(t, h.probe(probe{path: spec.PathCampaignList, body: body(16<<10 + 1), as: h.alpha}), 400, "Payload too large")
			},
		},
		{
			name: "http.responseContentType on answers and errors",
			edit: func(p *profile.Profile) { p.HTTP.ResponseContentType.Value = "application/json; charset=utf-8" },
			run: func(t *testing.T, h *harness) {
				for _, pr := range []probe{
					{path: spec.PathCampaignList, body: list10, as: h.alpha},
					{path: spec.PathCampaignList, body: `{"limit":80,"page":1}`, as: h.alpha},
					{path: spec.PathCampaignList, body: list10},
				} {
					if got := h.probe(pr).header.Get("Content-Type"); got != "application/json; charset=utf-8" {
						t.Errorf("%s: Content-Type %q", pr.body, got)
					}
				}
			},
		},
		{
			name: "rateLimit.refusalContentType labels a 429 apart from the other answers",
			edit: func(p *profile.Profile) {
				p.HTTP.ResponseContentType.Value = "application/json; charset=utf-8"
				p.Rate.RefusalContentType.Value = "application/problem+json"
			},
			cfg: sim.Config{RateLimit: 1},
			run: func(t *testing.T, h *harness) {
				for i, want := range []string{"application/json; charset=utf-8", "application/problem+json"} {
					a := h.probe(probe{path: spec.PathCampaignList, body: list10, as: h.alpha})
					if got := a.header.Get("Content-Type"); got != want {
						t.Errorf("answer %d (%d): Content-Type %q, want %q", i+1, a.status, got, want)
					}
				}
			},
		},
		{
			name: "http.successFields",
			edit: func(p *profile.Profile) {
				p.HTTP.SuccessFields.Value = map[string][]profile.Field{spec.PathContactAdd: {{Name: "requestId", Type: "string", Format: profile.FormatEchoRequestID}}}
			},
			run: func(t *testing.T, h *harness) {
				m := wantStatus(t, h.probe(probe{path: spec.PathContactAdd, body: `{"email":"s@example.com"}`, as: h.alpha, header: map[string]string{"X-Request-Id": "r-1"}}), 200)
				if m["requestId"] != "r-1" || m["status"] != "success" || len(m) != 3 {
					t.Errorf("body %v", m)
				}
				if m := wantStatus(t, h.probe(probe{path: spec.PathCampaignList, body: list10, as: h.alpha}), 200); m["requestId"] != nil {
					t.Errorf("another operation's answer has the field: %v", m["requestId"])
				}
			},
		},
		{
			name: "http.recordFields, an echoed field and an identifier's format (issue 28)",
			edit: func(p *profile.Profile) {
				req := profile.IDFormat{Kind: profile.IDPrefixed, Prefix: "req-", Digits: 19, Alphabet: profile.AlphabetDecimal}
				p.HTTP.SuccessFields.Value = map[string][]profile.Field{spec.PathCampaignStats: {
					{Name: "campaignId", Type: "integer", Format: profile.FormatEcho},
					{Name: "requestId", Type: "string", Format: profile.FormatID, ID: &req}}}
				p.HTTP.RecordFields.Value = map[string]map[string][]profile.Field{
					spec.PathCampaignList:  {profile.RecordCampaigns: {{Name: "updatedBy", Type: "string", Example: json.RawMessage(`"system"`)}}},
					spec.PathCampaignStats: {profile.RecordEmailStat: {{Name: "Forwarded", Type: "integer", Example: json.RawMessage(`0`)}}, profile.RecordSMSStat: {{Name: "Pending", Type: "integer", Example: json.RawMessage(`0`)}}},
				}
			},
			run: func(t *testing.T, h *harness) {
				m := wantStatus(t, h.probe(probe{path: spec.PathCampaignList, body: list10, as: h.alpha}), 200)
				cs, _ := m["campaigns"].([]any)
				if len(cs) == 0 {
					t.Fatalf("no campaigns: %v", m)
				}
				for _, c := range cs {
					if c.(map[string]any)["updatedBy"] != "system" || c.(map[string]any)["Id"] == nil {
						t.Errorf("campaign %v: want its fields and updatedBy", c)
					}
				}
				id := int(cs[0].(map[string]any)["Id"].(float64))
				s := wantStatus(t, h.probe(probe{path: spec.PathCampaignStats, body: fmt.Sprintf(`{"campaignId": %d}`, id), as: h.alpha}), 200)
				if s["campaignId"] != float64(id) {
					t.Errorf("campaignId %v, want the request's %d echoed", s["campaignId"], id)
				}
				if rid, _ := s["requestId"].(string); !regexp.MustCompile(`^req-[0-9]{19}$`).MatchString(rid) {
					t.Errorf("requestId %q, want req- and 19 digits", rid)
				}
				email, _ := s["emailStat"].(map[string]any)
				sms, _ := s["smsStat"].(map[string]any)
				if email["Forwarded"] != float64(0) || email["Sent"] == nil || sms["Pending"] != float64(0) || sms["Sent"] == nil {
					t.Errorf("statistics %v", s)
				}
			},
		},
		{
			name: "http.http2 false offers HTTP/1.1 only",
			edit: func(p *profile.Profile) { p.HTTP.HTTP2.Value = false },
			run: func(t *testing.T, h *harness) {
				resp, err := h.client.Post(h.sim.URL()+"/"+spec.PathCampaignList, spec.ContentType, strings.NewReader(list10))
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.ProtoMajor != 1 {
					t.Errorf("answered over %s, want HTTP/1.1", resp.Proto)
				}
				// The same client speaks HTTP/2 to the default profile.
				d := mustOpenProfile(t, nil, sim.Config{})
				resp, err = d.client.Post(d.sim.URL()+"/"+spec.PathCampaignList, spec.ContentType, strings.NewReader(list10))
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.ProtoMajor != 2 {
					t.Errorf("the default profile answered over %s, want HTTP/2", resp.Proto)
				}
			},
		},
		{
			name: "http.gzip",
			edit: func(p *profile.Profile) { p.HTTP.Gzip.Value = true },
			run: func(t *testing.T, h *harness) {
				a := h.probe(probe{path: spec.PathCampaignList, body: list10, as: h.alpha, header: map[string]string{"Accept-Encoding": "gzip"}})
				if a.status != 200 || a.header.Get("Content-Encoding") != "gzip" {
					t.Fatalf("status %d Content-Encoding %q", a.status, a.header.Get("Content-Encoding"))
				}
				zr, err := gzip.NewReader(bytes.NewReader(a.body))
				if err != nil {
					t.Fatal(err)
				}
				plain, err := io.ReadAll(zr)
				if err != nil || !json.Valid(plain) {
					t.Fatalf("gunzipped body %q: %v", plain, err)
				}
				if b := h.probe(probe{path: spec.PathCampaignList, body: list10, as: h.alpha}); b.header.Get("Content-Encoding") != "" {
					t.Errorf("compressed for a client that did not ask")
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
			tt.run(t, mustOpenProfile(t, p, tt.cfg))
		})
	}
}
