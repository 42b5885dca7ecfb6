package partnerapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/partner-v3/conformance-kit/fixtures"
	"github.com/partner-v3/conformance-kit/simulator/partnerapi"
	"github.com/partner-v3/conformance-kit/simulator/sim"
)

// TestOpenAPIDocument_Served: the document is served outside the base path
// without credentials, as the embedded YAML and as JSON that says the same.
func TestOpenAPIDocument_Served(t *testing.T) {
	h := MustOpenServer(t, sim.Config{})
	origin := strings.TrimSuffix(h.sim.URL(), "/v3/partner/webhook")
	e := h.expect(origin)

	yamlResp := e.GET("/openapi.yaml").Expect().Status(http.StatusOK).HasContentType("application/yaml")
	if got := yamlResp.Body().Raw(); got != string(fixtures.OpenAPI) {
		t.Fatalf("GET /openapi.yaml is not fixtures/openapi.yaml (%d bytes, want %d)", len(got), len(fixtures.OpenAPI))
	}
	jsonBody := e.GET("/openapi.json").Expect().Status(http.StatusOK).HasContentType("application/json").Body().Raw()

	var fromYAML, fromJSON any
	if err := yaml.Unmarshal(fixtures.OpenAPI, &fromYAML); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(jsonBody), &fromJSON); err != nil {
		t.Fatalf("GET /openapi.json is not JSON: %v", err)
	}
	// Through JSON once, so that YAML's ints and JSON's float64s compare.
	b, err := json.Marshal(fromYAML)
	if err != nil {
		t.Fatal(err)
	}
	var yamlAsJSON any
	if err := json.Unmarshal(b, &yamlAsJSON); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(yamlAsJSON, fromJSON) {
		t.Fatal("GET /openapi.json does not hold what fixtures/openapi.yaml holds")
	}
	if !strings.HasPrefix(jsonBody, "{\n  \"openapi\": \"3.1.0\",\n  \"info\"") {
		t.Errorf("GET /openapi.json does not keep the YAML's key order: %.60q", jsonBody)
	}

	head := e.HEAD("/openapi.json").Expect().Status(http.StatusOK)
	head.Header("Content-Length").IsEqual(strconv.Itoa(len(jsonBody)))
	head.Body().IsEmpty()
	e.POST("/openapi.yaml").Expect().Status(http.StatusMethodNotAllowed).Header("Allow").IsEqual("GET, HEAD")
	// Under the base path it is an unknown operation, like any other path.
	h.anon().GET("/openapi.yaml").Expect().Status(http.StatusNotFound)
}

// TestOpenAPIDocument_NotRateLimited: reading the document spends none of
// the spec §8 budget, with or without an account's headers.
func TestOpenAPIDocument_NotRateLimited(t *testing.T) {
	h := MustOpenServer(t, sim.Config{RateLimit: 2})
	origin := strings.TrimSuffix(h.sim.URL(), "/v3/partner/webhook")
	a := h.alpha
	for i := 0; i < 5; i++ {
		h.expect(origin).GET("/openapi.json").
			WithHeader("x-api-key", a.APIKey).WithHeader("x-api-secret", a.APISecret).WithHeader("x-account-id", a.AccountID).
			Expect().Status(http.StatusOK)
	}
	for i, want := range []int{http.StatusOK, http.StatusOK, http.StatusTooManyRequests} {
		if got := h.list(a).StatusCode; got != want {
			t.Fatalf("Campaign List %d after reading the document: status %d, want %d", i+1, got, want)
		}
	}
}

// TestNewDocument: the YAML to JSON conversion keeps order and text, and
// refuses YAML that is no JSON.
func TestNewDocument(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		want    string
		wantErr string
	}{
		{"keys keep the order they are written in", "b: 1\na: [x, 2, null, true]\n", `{"b":1,"a":["x",2,null,true]}`, ""},
		{"a date stays the text it was written as", "d: 2025-03-01\n", `{"d":"2025-03-01"}`, ""},
		{"quoted text stays text", "'200': '3'\n", `{"200":"3"}`, ""},
		{"angle brackets are not escaped", "e: '{\"error\": \"<message>\"}'\n", `{"e":"{\"error\": \"<message>\"}"}`, ""},
		{"an alias is followed", "a: &x {k: v}\nb: *x\n", `{"a":{"k":"v"},"b":{"k":"v"}}`, ""},
		{"an integer key is refused", "200: ok\n", "", "not a string"},
		{"a document that is no mapping is refused", "- a\n", "", "not a YAML mapping"},
		{"broken YAML is refused", "a: [\n", "", "openapi document"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := partnerapi.NewDocument([]byte(tt.yaml))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err=%v, want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var compact bytes.Buffer
			if err := json.Compact(&compact, d.JSON); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, d.JSON)
			}
			// Compact keeps escapes as written, so this also checks <>.
			if got := compact.String(); got != tt.want {
				t.Fatalf("JSON=%s, want %s", got, tt.want)
			}
			if string(d.YAML) != tt.yaml {
				t.Fatal("the YAML is not kept as given")
			}
		})
	}
}
