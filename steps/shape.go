package steps

// The shape of every successful answer, checked on every answer the suite
// sees (not only in the scenarios that look at it): a field's type is due
// on every response where it appears, whatever the request that drew it.

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// The spec's field tables (§2.2, §2.3, §4.1, §4.2), as the scenarios' own
// tables state them; TestShapesMatchTheScenarios keeps the two alike.
var (
	contactShape = []fieldRow{{"status", "string", ""}, {"contactId", "string", ""}}
	pageShape    = []fieldRow{{"pageNo", "integer", ""}, {"pageSize", "integer", ""}, {"totalPages", "integer", ""},
		{"totalRecords", "integer", ""}, {"filteredRecords", "integer", ""}, {"campaigns", "array", ""}}
	campaignShape = []fieldRow{
		{"Id", "integer", ""}, {"campaignName", "string", ""}, {"campaignType", "integer", "0 or 1"},
		{"campaignChannel", "string", "email or sms"}, {"status", "string", ""}, {"statusColor", "string", "hex colour"},
		{"active", "integer", "0 or 1"}, {"scheduledOn", "string", "timestamp"}, {"scheduledTimeZone", "string", ""},
		{"offset", "string", "utc offset"}, {"autoResend", "integer", ""}, {"broadcastOn", "string", "timestamp"},
		{"broadcast", "integer", ""}, {"createdAt", "string", "timestamp"}, {"updatedAt", "string", "timestamp"},
		{"reason", "null or string", ""},
	}
	statsShape     = []fieldRow{{spec.EmailStat, "object", ""}, {spec.SMSStat, "object", ""}}
	emailStatShape = countRows(spec.EmailStatKeys()...)
	smsStatShape   = countRows(spec.SMSStatKeys()...)
)

func countRows(names ...string) []fieldRow {
	rows := make([]fieldRow, len(names))
	for i, n := range names {
		rows[i] = fieldRow{n, "integer", "count"}
	}
	return rows
}

// shapeProblems checks a 200 answer of an operation against the spec's
// tables and returns the sections it breaks and what is wrong; nil when
// nothing is. Fields the spec does not list are the scenarios' to warn
// about.
func shapeProblems(x *exchange) (sections []string, problem string) {
	if x.err != nil || x.status != http.StatusOK || x.method != http.MethodPost {
		return nil, ""
	}
	var op string
	for name, path := range operations {
		if strings.HasSuffix(x.url, "/"+path) {
			op = name
		}
	}
	if op == "" {
		return nil, ""
	}
	m, err := x.object()
	if err != nil {
		return []string{"1"}, fmt.Sprintf("a 200 answer of %s: %v (spec §1 rule 3)", op, err)
	}
	check := func(secs []string, what string, obj map[string]any, rows []fieldRow) ([]string, string) {
		if p, _ := checkObject(obj, rows); len(p) > 0 {
			return secs, fmt.Sprintf("%s does not have the spec's fields (%s):\n  %s", what, SectionList(secs), strings.Join(p, "\n  "))
		}
		return nil, ""
	}
	switch op {
	case spec.OpAddContact:
		if sec, p := check([]string{"4.1"}, "the Add Contact answer", m, contactShape); p != "" {
			return sec, p
		}
		if m["status"] != spec.StatusSuccess || m["contactId"] == "" {
			return []string{"4.1"}, fmt.Sprintf("the Add Contact answer has status %s and contactId %s, want %q and a non-empty string (spec §4.1)", jsonText(m["status"]), jsonText(m["contactId"]), spec.StatusSuccess)
		}
	case spec.OpCampaignList:
		if sec, p := check([]string{"4.2"}, "the Campaign List answer", m, pageShape); p != "" {
			return sec, p
		}
		for i, c := range m["campaigns"].([]any) {
			o, ok := c.(map[string]any)
			if !ok {
				return []string{"2.2"}, fmt.Sprintf("campaign %d of the page is %s, not an object (spec §2.2)", i+1, kindOf(c))
			}
			if sec, p := check([]string{"2.2"}, fmt.Sprintf("campaign %d of the page (Id %s)", i+1, jsonText(o["Id"])), o, campaignShape); p != "" {
				return sec, p
			}
		}
	case spec.OpCampaignStats:
		if sec, p := check([]string{"2.3", "4.3"}, "the Campaign Stats answer", m, statsShape); p != "" {
			return sec, p
		}
		if sec, p := check([]string{"2.3"}, strconv.Quote(spec.EmailStat), m[spec.EmailStat].(map[string]any), emailStatShape); p != "" {
			return sec, p
		}
		return check([]string{"2.3"}, strconv.Quote(spec.SMSStat), m[spec.SMSStat].(map[string]any), smsStatShape)
	}
	return nil, ""
}
