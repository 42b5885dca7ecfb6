package partnerapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/partner-v3/conformance-kit/simulator/sim"
)

// TestControlCallOnThePartnerPort: a control call sent to the partner port
// (POST /reset, GET /journal...) is a JSON 404 that says it is a control
// call and where the control API listens (--admin-addr, its URL); the same
// call on the control port is one it knows (issue 27). A path that is no
// control call keeps the partner API's own 404.
func TestControlCallOnThePartnerPort(t *testing.T) {
	h := MustOpenServer(t, sim.Config{})
	partner := strings.TrimSuffix(h.sim.URL(), "/v3/partner/webhook")
	do := func(method, url string, admin bool) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, url, strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		if admin {
			req.Header.Set("Authorization", "Bearer test-token")
		}
		resp, err := h.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var body struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(b, &body) != nil {
			t.Fatalf("%s %s: the body is not JSON: %q", method, url, b)
		}
		return resp.StatusCode, body.Error
	}
	tests := []struct{ method, path string }{
		{"POST", "/reset"}, {"GET", "/journal"}, {"POST", "/clock"}, {"POST", "/rate-limit/reset"}, {"POST", "/faults"},
		{"GET", "/contacts"}, {"GET", "/accounts"}, {"GET", "/config"}, {"GET", "/version"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			status, msg := do(tt.method, partner+tt.path, false)
			if status != http.StatusNotFound || !strings.Contains(msg, "is a call of the control API") ||
				!strings.Contains(msg, "--admin-addr (SIM_ADMIN_ADDR)") || !strings.Contains(msg, h.sim.AdminURL()) {
				t.Errorf("partner port: %d %q; want a 404 naming the control API, --admin-addr and %s", status, msg, h.sim.AdminURL())
			}
			if status, msg := do(tt.method, h.sim.AdminURL()+tt.path, true); status == http.StatusNotFound && strings.HasPrefix(msg, "No control call") {
				t.Errorf("%s %s is listed as a control call but the control API does not know it: %q", tt.method, tt.path, msg)
			}
		})
	}
	if status, msg := do("POST", partner+"/resets", false); status != http.StatusNotFound || strings.Contains(msg, "control API") {
		t.Errorf("POST /resets: %d %q; want the partner API's own 404", status, msg)
	}
}
