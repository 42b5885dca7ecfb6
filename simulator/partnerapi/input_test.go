package partnerapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/partner-v3/conformance-kit/simulator/sim"
)

// TestBadInput: whatever arrives, the answer is a 4xx JSON error that says
// what is wrong, and no state changes.
func TestBadInput(t *testing.T) {
	h := MustOpenServer(t, sim.Config{})
	h.as(h.alpha).POST("/contact/add").WithJSON(map[string]string{"email": "keep@example.com"}).Expect().Status(http.StatusOK)
	huge := `{"email":"big@example.com","firstName":"` + strings.Repeat("a", 70<<10) + `"}`
	tests := []struct {
		name, path, contentType, body string
		status                        int
		mentions                      string
	}{
		{"malformed JSON", "/contact/add", "application/json", `{"email": "x@example.com"`, 400, "not valid JSON"},
		{"trailing garbage", "/contact/add", "application/json", `{"email":"x@example.com"} {}`, 400, "not valid JSON"},
		{"a JSON array", "/campaign/list", "application/json", `[{"limit":1,"page":1}]`, 400, "JSON object"},
		{"a JSON string", "/campaign/stats", "application/json", `"hello"`, 400, "JSON object"},
		{"an empty body", "/campaign/list", "application/json", ``, 400, "empty"},
		{"no content type", "/contact/add", "", `{"email":"x@example.com"}`, 415, "application/json"},
		{"form encoded", "/contact/add", "application/x-www-form-urlencoded", `email=x@example.com`, 415, "application/json"},
		{"text/plain JSON", "/campaign/list", "text/plain", `{"limit":1,"page":1}`, 415, "application/json"},
		{"a body over 64 KiB", "/contact/add", "application/json", huge, 413, "65536"},
		{"invalid UTF-8 in a string", "/contact/add", "application/json", "{\"email\":\"x@example.com\",\"city\":\"\xff\"}", 400, "city is not valid UTF-8"},
		{"deep nesting", "/campaign/list", "application/json", `{"limit":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `,"page":1}`, 400, "limit must be an integer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := h.as(h.alpha).POST(tt.path).WithBytes([]byte(tt.body))
			if tt.contentType != "" {
				req = req.WithHeader("Content-Type", tt.contentType)
			}
			resp := req.Expect()
			resp.Status(tt.status).HasContentType("application/json")
			if tt.mentions != "" {
				resp.JSON().Object().Value("error").String().Contains(tt.mentions)
			}
		})
	}
	t.Run("charset parameter is accepted", func(t *testing.T) {
		h.as(h.alpha).POST("/campaign/list").WithBytes([]byte(`{"limit":1,"page":1}`)).
			WithHeader("Content-Type", "application/json; charset=utf-8").Expect().Status(http.StatusOK)
	})
	t.Run("wrong method answers 405 with Allow: POST", func(t *testing.T) {
		for _, m := range []string{"GET", "PUT", "DELETE", "PATCH"} {
			resp := h.as(h.alpha).Request(m, "/campaign/list").Expect()
			resp.Status(http.StatusMethodNotAllowed).HasContentType("application/json")
			resp.Header("Allow").IsEqual("POST")
		}
	})
	t.Run("unknown paths answer 404 JSON", func(t *testing.T) {
		for _, p := range []string{"/contact/ad", "/campaign", "/v2/partner/webhook/campaign/list", "/"} {
			h.as(h.alpha).POST(p).WithJSON(map[string]int{}).Expect().
				Status(http.StatusNotFound).HasContentType("application/json").JSON().Object().ContainsKey("error")
		}
		h.expect(strings.TrimSuffix(h.sim.URL(), "/v3/partner/webhook")).POST("/campaign/list").WithJSON(map[string]int{}).
			Expect().Status(http.StatusNotFound).JSON().Object().ContainsKey("error")
	})
	t.Run("every response has a request id", func(t *testing.T) {
		h.anon().POST("/nowhere").Expect().Header("X-Request-Id").NotEmpty()
		h.as(h.alpha).POST("/campaign/list").WithHeader("X-Request-Id", "trace-123").WithJSON(map[string]int{"limit": 1, "page": 1}).
			Expect().Header("X-Request-Id").IsEqual("trace-123")
	})
	if got, want := h.contactCount(h.alpha), 1; got != want { // keep@ only
		t.Fatalf("%d contacts after bad input, want %d", got, want)
	}
}
