package learn

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// TestFieldsInsideRecordsAndTheirFormats: fields added inside each
// campaign and inside the statistics are learned with their type and
// format, an echo of the request as an echo, an identifier of a shape
// with its prefix, length and alphabet (issue 28).
func TestFieldsInsideRecordsAndTheirFormats(t *testing.T) {
	stats := &exch{op: spec.PathCampaignStats, status: http.StatusOK, header: http.Header{}, reqBody: []byte(`{"campaignId": 1234}`),
		body: []byte(`{"emailStat": {"Sent": 1, "Forwarded": 0}, "smsStat": {"Sent": 2, "Pending": 0}, "campaignId": 1234, "requestId": "req-1732752000123456789", "traceId": "none"}`)}
	added, seen := recordsOf(stats, profile.RecordPaths()[spec.PathCampaignStats])
	if !seen || len(added[profile.RecordEmailStat]) != 1 || added[profile.RecordEmailStat][0].Name != "Forwarded" ||
		len(added[profile.RecordSMSStat]) != 1 || added[profile.RecordSMSStat][0].Name != "Pending" {
		t.Errorf("statistics' fields %+v (seen %v)", added, seen)
	}
	_, vals, _ := object(stats.body)
	top := extraFields([]string{"campaignId", "requestId", "traceId"}, vals, nil, stats)
	if f := top[0]; f.Format != profile.FormatEcho || f.Type != "integer" {
		t.Errorf("campaignId %+v, want an echo", f)
	}
	if f := top[1]; f.Format != profile.FormatID || f.ID == nil || f.ID.Prefix != "req-" || f.ID.Digits != 19 || f.ID.Alphabet != profile.AlphabetDecimal {
		t.Errorf("requestId %+v, want req- and 19 decimal digits", f)
	}
	if f := top[2]; f.Format != "" || string(f.Example) != `"none"` {
		t.Errorf("traceId %+v: a word under an id name is a constant", f)
	}

	list := &exch{op: spec.PathCampaignList, status: http.StatusOK, header: http.Header{}, reqBody: []byte(`{"limit": 2, "page": 1}`),
		body: []byte(`{"pageNo": 1, "campaigns": [{"Id": 1, "updatedBy": "system", "tags": []}, {"Id": 2, "updatedBy": "ops"}]}`)}
	added, _ = recordsOf(list, profile.RecordPaths()[spec.PathCampaignList])
	got, _ := json.Marshal(added)
	if string(got) != `{"campaigns[]":[{"name":"updatedBy","type":"string","example":"system"}]}` {
		t.Errorf("campaigns' fields %s, want updatedBy alone (tags is not in every campaign)", got)
	}
	empty := &exch{op: spec.PathCampaignList, status: http.StatusOK, header: http.Header{}, body: []byte(`{"pageNo": 9, "campaigns": []}`)}
	if _, seen := recordsOf(empty, profile.RecordPaths()[spec.PathCampaignList]); seen {
		t.Errorf("an empty page shows no campaign's fields")
	}
}

// TestOffsetTemplate: an end-of-input error quoting where the probe's
// body ended is learned with {offset} (0-based) or {position} (1-based)
// in its place, so that the simulator says where the client's body ended.
func TestOffsetTemplate(t *testing.T) {
	n := profile.ProbeEndOfInputOffset
	for msg, want := range map[string]string{
		fmt.Sprintf("JSON parse error at offset %d: unexpected end of input", n): "JSON parse error at offset {offset}: unexpected end of input",
		fmt.Sprintf("Unexpected end of JSON input at position %d", n+1):          "Unexpected end of JSON input at position {position}",
		"Request body must be complete JSON":                                     "Request body must be complete JSON",
	} {
		if got := offsetTemplate(msg, n); got != want {
			t.Errorf("offsetTemplate(%q) = %q, want %q", msg, got, want)
		}
	}
}
