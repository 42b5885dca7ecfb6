package steps

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/partner-v3/conformance-kit/features"
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
		{"a timestamp with an offset instead of Z fails", "2026-03-04T05:06:07.123+00:00", "timestamp", false},
		{"a timestamp of a day that does not exist fails", "2026-02-30T05:06:07.123Z", "timestamp", false},
		{"an offset +HH:MM passes", "+05:30", "utc offset", true},
		{"an offset without a colon fails", "+0530", "utc offset", false},
		{"a six-digit colour passes", "#1A2b3C", "hex colour", true},
		{"a three-digit colour passes", "#abc", "hex colour", true},
		{"a colour without # fails", "1A2B3C", "hex colour", false},
		{"a colour with a non-hex digit fails", "#12345G", "hex colour", false},
		{"0 is 0 or 1", json.Number("0"), "0 or 1", true},
		{"2 is not 0 or 1", json.Number("2"), "0 or 1", false},
		{"sms is a channel", "sms", "email or sms", true},
		{"SMS is not a channel", "SMS", "email or sms", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := checkFormat(tt.value, tt.format) == ""; got != tt.ok {
				t.Fatalf("checkFormat(%v, %q) ok=%v, want %v (%s)", tt.value, tt.format, got, tt.ok, checkFormat(tt.value, tt.format))
			}
		})
	}
}

func TestCheckObjectReportsMissingExtraAndWrongType(t *testing.T) {
	v, err := decodeJSON([]byte(`{"pageNo": 1.0, "extra": true, "campaigns": []}`))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(checkObject(v.(map[string]any), []fieldRow{
		{field: "pageNo", typ: "integer"}, {field: "pageSize", typ: "integer"}, {field: "campaigns", typ: "array"},
	}), "\n")
	for _, want := range []string{`"pageNo": is number, want integer`, `"pageSize" is missing`, `"extra" is not in the spec`} {
		if !strings.Contains(got, want) {
			t.Errorf("problems %q do not mention %q", got, want)
		}
	}
	if strings.Contains(got, "campaigns") {
		t.Errorf("a correct field was reported: %q", got)
	}
}

func TestDumpMasksCredentials(t *testing.T) {
	h := credentialHeaders(Account{APIKey: "dev-key-alpha-7f3c2b9e", APISecret: "dev-secret-alpha-9d41e6a0c58b", AccountID: "acc_enc_QWxwaGFQYXJ0bmVyMDAx"})
	x := &exchange{method: "POST", url: "https://x/v3/partner/webhook/campaign/list", header: h, status: 401,
		rheader: http.Header{"Content-Type": {"application/json"}}, rbody: []byte(`{"error":"Invalid API credentials"}`)}
	d := x.dump()
	for _, secret := range []string{"dev-key-alpha-7f3c2b9e", "dev-secret-alpha-9d41e6a0c58b", "9d41e6a0c58b", "acc_enc_QWxwaGFQYXJ0bmVyMDAx", "dev-s"} {
		if strings.Contains(d, secret) {
			t.Errorf("the dump shows %q:\n%s", secret, d)
		}
	}
	if !strings.Contains(d, "Invalid API credentials") || !strings.Contains(d, "HTTP 401") {
		t.Errorf("the dump lacks the response:\n%s", d)
	}
}

func TestMentionsFindsEscapedMessages(t *testing.T) {
	if !mentions([]byte(`{"detail":{"msg":"Rate limit exceeded. Try again later\u002e"}}`), "Rate limit exceeded. Try again later.") {
		t.Error("an escaped message was not found")
	}
	if mentions([]byte(`{"error":"Invalid credentials"}`), "Invalid API credentials") {
		t.Error("a reworded message was accepted")
	}
}

// TestPacerResetsThroughControlAPI checks that, with a control API, the
// pacer resets an account's counter instead of exceeding its budget, and
// that deliberate requests are never held back.
func TestPacerResetsThroughControlAPI(t *testing.T) {
	p := newPacer(5, 1<<40, io.Discard) // a window so long that only resets free it
	var resets []string
	p.resetFn = func(_ context.Context, id string) error { resets = append(resets, id); return nil }
	ctx := context.Background()
	for i := range 12 {
		if err := p.acquire(ctx, []string{"a"}); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	// A budget of 4 per window: 12 requests need two resets.
	if got, want := len(resets), 2; got != want {
		t.Fatalf("resets=%d, want %d", got, want)
	}
	for i := range 10 {
		if err := p.acquire(withDeliberate(ctx), []string{"a"}); err != nil {
			t.Fatalf("deliberate request %d: %v", i, err)
		}
	}
	if got, want := len(resets), 2; got != want {
		t.Fatalf("deliberate requests caused resets: %d, want %d", got, want)
	}
	if got, want := p.requests.Load(), int64(22); got != want {
		t.Fatalf("requests=%d, want %d", got, want)
	}
}

// TestPacerAttributesRequestsToAccounts checks that a request counts for
// every account whose credentials it carries, and anything else for the
// primary.
func TestPacerAttributesRequestsToAccounts(t *testing.T) {
	pr := Account{APIKey: "k1", APISecret: "s1", AccountID: "a1"}
	se := Account{APIKey: "k2", APISecret: "s2", AccountID: "a2"}
	tr := &pacedTransport{primary: pr, second: se}
	tests := []struct {
		name    string
		key, id string
		want    string
	}{
		{"the primary's credentials count for the primary", "k1", "a1", "a1"},
		{"the second's credentials count for the second", "k2", "a2", "a2"},
		{"the primary's key with the second's id counts for both", "k1", "a2", "a2,a1"},
		{"an unknown key counts for the primary", "nope", "", "a1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := http.NewRequest(http.MethodPost, "https://x/", nil)
			r.Header.Set("x-api-key", tt.key)
			r.Header.Set("x-account-id", tt.id)
			if got := strings.Join(tr.accounts(r), ","); got != tt.want {
				t.Fatalf("accounts=%s, want %s", got, tt.want)
			}
		})
	}
}

// TestFeaturesFromADirectory checks that a --features directory is read
// like the embedded suite, and that --read-only's tag expression drops the
// @writes scenarios.
func TestFeaturesFromADirectory(t *testing.T) {
	embedded, err := countScenarios(features.FS, "@normative")
	if err != nil {
		t.Fatal(err)
	}
	dir, err := countScenarios(os.DirFS("../features"), "@normative")
	if err != nil {
		t.Fatal(err)
	}
	if embedded == 0 || dir != embedded {
		t.Fatalf("embedded suite %d normative scenarios, directory %d", embedded, dir)
	}
	readOnly, err := countScenarios(features.FS, "@normative && ~@writes")
	if err != nil {
		t.Fatal(err)
	}
	if readOnly == 0 || readOnly >= embedded {
		t.Fatalf("read-only selects %d of %d normative scenarios", readOnly, embedded)
	}
}

func TestConfigValidation(t *testing.T) {
	primary := Account{APIKey: "k1", APISecret: "s1", AccountID: "a1"}
	tests := []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"a URL and a primary account suffice", Config{BaseURL: "https://x.example/v3/partner/webhook", Primary: primary}, true},
		{"plain http is no usage error (spec §1 scenarios fail instead)", Config{BaseURL: "http://x.example/v2", Primary: primary}, true},
		{"a handler stands in for the URL", Config{Handler: http.NotFoundHandler(), Primary: primary}, true},
		{"no target", Config{Primary: primary}, false},
		{"a relative URL", Config{BaseURL: "/v3/partner/webhook", Primary: primary}, false},
		{"a primary account without secret", Config{BaseURL: "https://x.example", Primary: Account{APIKey: "k", AccountID: "a"}}, false},
		{"half a second account", Config{BaseURL: "https://x.example", Primary: primary, Second: Account{APIKey: "k2"}}, false},
		{"the primary account twice", Config{BaseURL: "https://x.example", Primary: primary, Second: primary}, false},
		{"a control API without token", Config{BaseURL: "https://x.example", Primary: primary, AdminURL: "https://127.0.0.1:8444"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.withDefaults().validate()
			if (err == nil) != tt.ok {
				t.Fatalf("validate() = %v, want ok=%v", err, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrConfig) {
				t.Fatalf("%v does not wrap ErrConfig", err)
			}
		})
	}
}
