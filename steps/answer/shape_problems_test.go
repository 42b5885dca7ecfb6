package answer

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

// TestShapeProblems: every operation's 200 answer is held to its table and
// to what lies inside it, with the sections each breaks.
func TestShapeProblems(t *testing.T) {
	const base = "https://sim.test/v3/partner/webhook/"
	const campaign = `{"Id": 7, "campaignName": "n", "campaignType": 0, "campaignChannel": "email", "status": "s", "statusColor": "#fff",
		"active": 1, "scheduledOn": "2024-01-02T03:04:05.000Z", "scheduledTimeZone": "UTC", "offset": "+00:00", "autoResend": 0,
		"broadcastOn": "2024-01-02T03:04:05.000Z", "broadcast": 1, "createdAt": "2024-01-02T03:04:05.000Z", "updatedAt": "2024-01-02T03:04:05.000Z", "reason": null}`
	const email = `{"Sent": 1, "Opened": 1, "Delivered": 1, "Hardbounce": 0, "Softbounce": 0, "Failed": 0, "Clicked": 0, "Unsubscribe": 0, "Complained": 0}`
	tests := []struct {
		name, path, body string
		sections         []string
		problem          string // a part of it; "" for none
	}{
		{"a good Add Contact answer", "contact/add", `{"status": "success", "contactId": "c1"}`, nil, ""},
		{"an Add Contact answer without contactId", "contact/add", `{"status": "success"}`, []string{"4.1"}, `the Add Contact answer does not have the spec's fields (§4.1):
  field "contactId" is missing`},
		{"an Add Contact answer that failed", "contact/add", `{"status": "error", "contactId": ""}`, []string{"4.1"}, `has status "error" and contactId ""`},
		{"a good Campaign List answer", "campaign/list", `{"pageNo": 1, "pageSize": 1, "totalPages": 1, "totalRecords": 1, "filteredRecords": 1, "campaigns": [` + campaign + `]}`, nil, ""},
		{"a Campaign List answer without pageNo", "campaign/list", `{"pageSize": 1, "totalPages": 1, "totalRecords": 1, "filteredRecords": 1, "campaigns": []}`, []string{"4.2"}, `the Campaign List answer does not have the spec's fields (§4.2)`},
		{"a campaign that is no object", "campaign/list", `{"pageNo": 1, "pageSize": 1, "totalPages": 1, "totalRecords": 1, "filteredRecords": 1, "campaigns": [3]}`, []string{"2.2"}, "campaign 1 of the page is integer, not an object (spec §2.2)"},
		{"a campaign without its name", "campaign/list", `{"pageNo": 1, "pageSize": 1, "totalPages": 1, "totalRecords": 1, "filteredRecords": 1, "campaigns": [` + strings.Replace(campaign, `"campaignName": "n", `, "", 1) + `]}`, []string{"2.2"}, `campaign 1 of the page (Id 7) does not have the spec's fields (§2.2):
  field "campaignName" is missing`},
		{"a good Campaign Stats answer", "campaign/stats", `{"emailStat": ` + email + `, "smsStat": {"Sent": 1, "Delivered": 1, "Failed": 0}}`, nil, ""},
		{"a Campaign Stats answer without smsStat", "campaign/stats", `{"emailStat": ` + email + `}`, []string{"2.3", "4.3"}, `the Campaign Stats answer does not have the spec's fields (§2.3, §4.3)`},
		{"an emailStat without Sent", "campaign/stats", `{"emailStat": {}, "smsStat": {"Sent": 1, "Delivered": 1, "Failed": 0}}`, []string{"2.3"}, `"emailStat" does not have the spec's fields (§2.3)`},
		{"an smsStat with a string", "campaign/stats", `{"emailStat": ` + email + `, "smsStat": {"Sent": "1", "Delivered": 1, "Failed": 0}}`, []string{"2.3"}, `"smsStat" does not have the spec's fields (§2.3)`},
		{"an answer that is no object", "campaign/stats", `[]`, []string{"1"}, "a 200 answer of Campaign Stats: body is JSON but not an object: array (spec §1 rule 3)"},
		{"a path that is no operation", "contact/delete", `[]`, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := &Answer{Method: http.MethodPost, URL: base + tt.path, Status: http.StatusOK, ResponseBody: []byte(tt.body)}
			secs, p := ShapeProblems(x)
			if !slices.Equal(secs, tt.sections) {
				t.Errorf("sections = %v, want %v (%s)", secs, tt.sections, p)
			}
			if (tt.problem == "") != (p == "") || !strings.Contains(p, tt.problem) {
				t.Errorf("problem = %q, want one holding %q", p, tt.problem)
			}
		})
	}
}

// TestWarnExtraFields: the fields an operation's 200 answer carries beyond
// the spec's tables are a warning each, in the body and inside it.
func TestWarnExtraFields(t *testing.T) {
	const base = "https://sim.test/v3/partner/webhook/"
	tests := []struct {
		name, path, body string
		want             []string
	}{
		{"an Add Contact answer with more", "contact/add", `{"status": "success", "contactId": "c1", "id": 3}`,
			[]string{`the body carries fields the spec does not list: "id"`}},
		{"a Campaign List answer with more, in it and in its campaigns", "campaign/list",
			`{"pageNo": 1, "next": 2, "campaigns": [{"Id": 1, "tags": []}, {"Id": 2, "owner": "o", "tags": []}, 3]}`,
			[]string{`the body carries fields the spec does not list: "next"`, `campaigns carry fields the spec does not list (§2.2): "owner", "tags"`}},
		{"a Campaign Stats answer with more, in it and in its objects", "campaign/stats",
			`{"emailStat": {"Sent": 1, "Bounced": 0}, "smsStat": {"Sent": 1, "Queued": 0}, "campaignId": 4}`,
			[]string{`the body carries fields the spec does not list: "campaignId"`, `"emailStat" carries fields the spec does not list: "Bounced"`, `"smsStat" carries fields the spec does not list: "Queued"`}},
		{"answers with nothing more", "campaign/stats", `{"emailStat": {}, "smsStat": 1}`, nil},
		{"a path that is no operation", "contact/delete", `{"x": 1}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, w := range ExtraFields(&Answer{Method: http.MethodPost, URL: base + tt.path, Status: http.StatusOK, ResponseBody: []byte(tt.body)}) {
				if w.Sections != nil {
					t.Errorf("warning %q has sections %v, want the scenario's", w.Message, w.Sections)
				}
				got = append(got, w.Message)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("warnings = %q, want %q", got, tt.want)
			}
		})
	}
}
