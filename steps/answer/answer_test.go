package answer

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/steps/internal/mask"
)

func TestCheckFormat(t *testing.T) {
	tests := []struct {
		name   string
		value  any
		format string
		ok     bool
	}{
		{"a timestamp with milliseconds and Z passes", "2026-03-04T05:06:07.123Z", "timestamp", true},
		{"a timestamp without milliseconds fails", "2026-03-04T05:06:07Z", "timestamp", false},
		{"a timestamp with the zero offset +00:00 instead of Z passes: it is UTC (§2.2)", "2026-03-04T05:06:07.123+00:00", "timestamp", true},
		{"a timestamp with another offset fails: it is not UTC (§2.2)", "2026-03-04T05:06:07.123+01:00", "timestamp", false},
		{"a timestamp with -00:00 fails: RFC 3339's unknown offset", "2026-03-04T05:06:07.123-00:00", "timestamp", false},
		{"a timestamp without a zone fails", "2026-03-04T05:06:07.123", "timestamp", false},
		{"a timestamp of a day that does not exist fails", "2026-02-30T05:06:07.123Z", "timestamp", false},
		{"an offset +HH:MM passes", "+05:30", "utc offset", true},
		{"an offset without a colon fails", "+0530", "utc offset", false},
		{"an offset without a sign fails", "05:30", "utc offset", false},
		{"a six-digit colour passes", "#1A2b3C", "hex colour", true},
		{"a three-digit colour passes", "#abc", "hex colour", true},
		{"a colour without # fails", "1A2B3C", "hex colour", false},
		{"a colour with a non-hex digit fails", "#12345G", "hex colour", false},
		{"0 is 0 or 1", json.Number("0"), "0 or 1", true},
		{"2 is not 0 or 1", json.Number("2"), "0 or 1", false},
		{"sms is a channel", "sms", "email or sms", true},
		{"SMS is not a channel", "SMS", "email or sms", false},
		{"0 is a count", json.Number("0"), "count", true},
		{"-1 is no count", json.Number("-1"), "count", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CheckFormat(tt.value, tt.format) == ""; got != tt.ok {
				t.Fatalf("CheckFormat(%v, %q) ok=%v, want %v (%s)", tt.value, tt.format, got, tt.ok, CheckFormat(tt.value, tt.format))
			}
		})
	}
}

// TestCheckObjectTiers checks the two tiers of a field table: a spec field
// missing or of the wrong type is a problem (FAILURE); a field the table
// does not list is named as extra (WARNING), never as a problem.
func TestCheckObjectTiers(t *testing.T) {
	v, err := DecodeJSON([]byte(`{"pageNo": 1.0, "requestId": "r-1", "campaigns": [], "apiVersion": 3}`))
	if err != nil {
		t.Fatal(err)
	}
	problems, extra := CheckObject(v.(map[string]any), []FieldRow{
		{Field: "pageNo", Type: "integer"}, {Field: "pageSize", Type: "integer"}, {Field: "campaigns", Type: "array"},
	})
	got := strings.Join(problems, "\n")
	for _, want := range []string{`"pageNo": is number, want integer`, `"pageSize" is missing`} {
		if !strings.Contains(got, want) {
			t.Errorf("problems %q do not mention %q", got, want)
		}
	}
	if strings.Contains(got, "campaigns") || strings.Contains(got, "requestId") {
		t.Errorf("a correct or an extra field was reported as a problem: %q", got)
	}
	if strings.Join(extra, ",") != "apiVersion,requestId" {
		t.Errorf("extra fields %v, want [apiVersion requestId]", extra)
	}
}

func TestMentionsFindsEscapedMessages(t *testing.T) {
	if !Mentions([]byte(`{"detail":{"msg":"Rate limit exceeded. Try again later\u002e"}}`), "Rate limit exceeded. Try again later.") {
		t.Error("an escaped message was not found")
	}
	if Mentions([]byte(`{"error":"Invalid credentials"}`), "Invalid API credentials") {
		t.Error("a reworded message was accepted")
	}
}

func TestIsJSONType(t *testing.T) {
	for mt, want := range map[string]bool{
		"application/json":         true,
		"application/problem+json": true,
		"application/vnd.x+json":   true,
		"text/json":                false,
		"text/plain":               false,
		"application/jsonp":        false,
	} {
		if got := IsJSONType(mt); got != want {
			t.Errorf("IsJSONType(%q) = %v, want %v", mt, got, want)
		}
	}
}

func TestReportMasksCredentials(t *testing.T) {
	acct := control.Credentials{APIKey: "dev-key-alpha-7f3c2b9e", APISecret: "dev-secret-alpha-9d41e6a0c58b", AccountID: "acc_enc_QWxwaGFQYXJ0bmVyMDAx"}
	sec := mask.NewSecrets(mask.Value{Text: acct.APIKey}, mask.Value{Text: acct.APISecret, Secret: true}, mask.Value{Text: acct.AccountID})
	// The target echoes what it was sent, in a header and in the body: the
	// right secret and the key with its last character changed.
	x := &Answer{Method: "POST", URL: "https://x/v3/partner/webhook/campaign/list",
		Header:         credentialHeaders(acct),
		Status:         401,
		ResponseHeader: http.Header{"X-Echo-Secret": {acct.APISecret}},
		ResponseBody:   []byte(`{"error":"Invalid API credentials","given":{"x-api-key":"dev-key-alpha-7f3c2b9X","x-api-secret":"` + acct.APISecret + `"}}`)}
	d := x.Report(sec).Dump()
	for _, secret := range []string{"dev-key-alpha-7f3c2b9", "9d41e6a0c58b", "acc_enc_QWxwaGFQYXJ0bmVyMDAx", "dev-s"} {
		if strings.Contains(d, secret) {
			t.Errorf("the dump shows %q:\n%s", secret, d)
		}
	}
	if !strings.Contains(d, "Invalid API credentials") || !strings.Contains(d, "HTTP 401") {
		t.Errorf("the dump lacks the response:\n%s", d)
	}
	if !strings.Contains(d, `"x-api-key":"****(21 chars)X"`) || !strings.Contains(d, "X-Echo-Secret: ****(29 chars)") {
		t.Errorf("the dump does not show the echoes masked:\n%s", d)
	}
}
