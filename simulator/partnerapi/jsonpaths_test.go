package partnerapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/partner-v3/conformance-kit/simulator/sim"
)

// TestEveryPathAnswersJSON walks the paths and methods net/http's ServeMux
// would redirect (an empty id, a double slash, a dot segment, a subtree
// without its slash) or answer in plain text (a wrong method), and the
// unknown ones, on the real listeners (through the guard): each answer is
// a JSON error with a JSON Content-Type, never a redirect (issue 19).
func TestEveryPathAnswersJSON(t *testing.T) {
	h := MustOpenServer(t, sim.Config{})
	m := &matrix{t: t, h: h, alpha: h.alpha, bra: h.bravo}
	const host = "Host: 127.0.0.1\r\n"
	const token = "Authorization: Bearer test-token\r\n"
	raw := func(line, headers string) string {
		return line + " HTTP/1.1\r\n" + host + headers + "Connection: close\r\n\r\n"
	}
	tests := []struct {
		name   string
		req    request
		status int
		allow  string // the Allow header a 405 must carry
		msg    string // a part of the error message, if set
	}{
		{"an empty account id in a report path", request{admin: true, method: "GET", path: "/accounts//report", noLength: true}, 404, "", "No control call GET /accounts//report"},
		{"an empty account id in a budget path", request{admin: true, method: "GET", path: "/accounts//budget", noLength: true}, 404, "", ""},
		{"an empty account id", request{admin: true, method: "DELETE", path: "/accounts//", noLength: true}, 404, "", ""},
		{"a double slash before the call", request{admin: true, method: "POST", path: "//reset", noLength: true}, 404, "", ""},
		{"a double slash inside the call", request{admin: true, method: "POST", path: "/rate-limit//reset"}, 404, "", ""},
		{"a dot segment", request{admin: true, method: "POST", path: "/./reset"}, 404, "", ""},
		{"a dot-dot segment", request{admin: true, method: "GET", path: "/faults/../config", noLength: true}, 404, "", ""},
		{"a trailing slash", request{admin: true, method: "GET", path: "/config/", noLength: true}, 404, "", ""},
		{"a subtree without its slash", request{admin: true, method: "GET", path: "/debug/pprof", noLength: true}, 404, "", "No control call GET /debug/pprof"},
		{"an unknown path", request{admin: true, method: "GET", path: "/nope", noLength: true}, 404, "", ""},
		{"the root", request{admin: true, method: "GET", path: "/", noLength: true}, 404, "", ""},
		{"a percent-encoded slash in an id", request{admin: true, method: "GET", path: "/accounts/acc%2Fx/report", noLength: true}, 404, "", "No account acc/x"},
		{"a percent-encoded slash in a call", request{admin: true, method: "POST", path: "/rate-limit%2Freset"}, 404, "", ""},
		{"a percent-encoded dot segment", request{admin: true, method: "POST", path: "/%2E/reset"}, 404, "", ""},
		{"a wrong method", request{admin: true, method: "GET", path: "/reset", noLength: true}, 405, "POST", ""},
		{"a wrong method on a path with an id", request{admin: true, method: "POST", path: "/accounts/acc_x/report"}, 405, "GET", ""},
		{"PUT on a call with three methods", request{admin: true, method: "PUT", path: "/faults"}, 405, "GET, POST, DELETE", "Method PUT is not allowed on /faults"},
		{"HEAD on a POST call", request{admin: true, method: "HEAD", path: "/reset", noLength: true}, 405, "POST", ""},
		{"OPTIONS on a call", request{admin: true, method: "OPTIONS", path: "/config", noLength: true}, 405, "GET", ""},
		{"OPTIONS *", request{admin: true, raw: raw("OPTIONS *", token)}, 404, "", ""},
		{"CONNECT", request{admin: true, method: "CONNECT", raw: raw("CONNECT 127.0.0.1:443", token)}, 404, "", "No control call CONNECT 127.0.0.1:443"},
		{"a bad token", request{admin: true, method: "GET", path: "/config", noLength: true, noAuth: true, headers: []string{"Authorization: Bearer nope"}}, 401, "", ""},
		{"a bad token on a path the mux would redirect", request{admin: true, method: "GET", path: "/accounts//report", noLength: true, noAuth: true}, 401, "", ""},
		{"an unknown account", request{admin: true, method: "GET", path: "/accounts/acc_nobody/report", noLength: true}, 404, "", ""},
		// GET /metrics answers Prometheus's text format (TestMetrics); its
		// errors are JSON like every other call's.
		{"metrics without a token", request{admin: true, method: "GET", path: "/metrics", noLength: true, noAuth: true}, 401, "", "missing or wrong bearer token"},
		{"metrics with a wrong token", request{admin: true, method: "GET", path: "/metrics", noLength: true, noAuth: true, headers: []string{"Authorization: Bearer nope"}}, 401, "", ""},
		{"metrics with a wrong method", request{admin: true, method: "POST", path: "/metrics"}, 405, "GET", "Method POST is not allowed on /metrics"},
		{"metrics with a trailing slash", request{admin: true, method: "GET", path: "/metrics/", noLength: true}, 404, "", ""},
		{"metrics with a double slash", request{admin: true, method: "GET", path: "//metrics", noLength: true}, 404, "", ""},
		// The partner listener routes on the path as sent: none of these is
		// an operation.
		{"partner: a double slash", request{path: "/v3/partner/webhook//contact/add", body: "{}"}, 404, "", ""},
		{"partner: a dot segment", request{path: "/v3/partner/webhook/./campaign/list", body: "{}"}, 404, "", ""},
		{"partner: a trailing slash", request{path: "/v3/partner/webhook/campaign/list/", body: "{}"}, 404, "", ""},
		{"partner: a percent-encoded slash", request{path: "/v3/partner/webhook/campaign%2Flist", body: "{}"}, 404, "", ""},
		{"partner: OPTIONS on an operation", request{method: "OPTIONS", path: "campaign/list", noLength: true}, 405, "POST", ""},
		{"partner: OPTIONS *", request{raw: raw("OPTIONS *", "")}, 404, "", ""},
		{"partner: CONNECT", request{method: "CONNECT", raw: raw("CONNECT 127.0.0.1:443", "")}, 404, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := m.send(t, tt.req)
			if a.status != tt.status {
				t.Fatalf("Status=%d, want %d: %s", a.status, tt.status, a.body)
			}
			if !strings.HasPrefix(a.contentType, "application/json") {
				t.Fatalf("Content-Type=%q, want application/json: %s", a.contentType, a.body)
			}
			if tt.req.method == http.MethodHead {
				if len(a.body) != 0 {
					t.Fatalf("HEAD answered a body: %s", a.body)
				}
			} else {
				var e map[string]any
				if err := json.Unmarshal(a.body, &e); err != nil {
					t.Fatalf("body is not JSON: %v: %q", err, a.body)
				}
				if msg, ok := e["error"].(string); !ok || msg == "" || len(e) != 1 {
					t.Fatalf(`body = %s, want {"error": "<message>"}`, a.body)
				}
			}
			if !strings.Contains(string(a.body), tt.msg) {
				t.Fatalf("body = %s, want a message with %q", a.body, tt.msg)
			}
			if got := a.allow; tt.status == 405 && got != tt.allow {
				t.Fatalf("Allow=%q, want %q", got, tt.allow)
			}
		})
	}
}
