package partnerapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gavv/httpexpect/v2"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/inmem"
	"github.com/partner-v3/conformance-kit/simulator/internal/apitest"
	"github.com/partner-v3/conformance-kit/simulator/mock"
	"github.com/partner-v3/conformance-kit/simulator/partnerapi"
	"github.com/partner-v3/conformance-kit/simulator/sim"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// addFault posts a fault and returns its id.
func (h *harness) addFault(body map[string]any) string {
	return h.admin().POST("/faults").WithJSON(body).Expect().Status(http.StatusCreated).
		JSON().Object().Value("id").String().Raw()
}

func (h *harness) faults(query ...string) []any {
	req := h.admin().GET("/faults")
	for i := 0; i+1 < len(query); i += 2 {
		req = req.WithQuery(query[i], query[i+1])
	}
	return req.Expect().Status(http.StatusOK).JSON().Object().Value("faults").Array().Raw()
}

func (h *harness) listAs(a *simulator.Account) *httpexpect.Response {
	return h.as(a).POST("/campaign/list").WithJSON(map[string]int{"limit": 1, "page": 1}).Expect()
}

// TestFaults: the control API's injected faults hit the next N requests of
// one operation, then the operation works again.
func TestFaults(t *testing.T) {
	h := MustOpenServer(t, sim.Config{})
	h.admin().POST("/faults").WithJSON(map[string]any{"operation": "campaign/list", "kind": "error", "count": 2}).
		Expect().Status(http.StatusCreated).JSON().Object().HasValue("remaining", 2).HasValue("status", 500).HasValue("probability", 1)
	if got := len(h.faults()); got != 1 {
		t.Fatalf("%d faults listed, want 1", got)
	}
	// Another operation is untouched.
	h.as(h.alpha).POST("/campaign/stats").WithJSON(map[string]int{}).Expect().Status(http.StatusBadRequest)
	for i := 0; i < 2; i++ {
		expectError(h.listAs(h.alpha), http.StatusInternalServerError, spec.MsgInternal)
	}
	h.listAs(h.alpha).Status(http.StatusOK)
	if got := h.faults(); len(got) != 0 {
		t.Fatalf("faults after use: %v", got)
	}

	t.Run("drop cuts the connection", func(t *testing.T) {
		h.addFault(map[string]any{"operation": "*", "kind": "drop"})
		req, _ := http.NewRequest(http.MethodPost, h.sim.URL()+"/contact/add", strings.NewReader(`{"email":"d@example.com"}`))
		req.Header.Set("Content-Type", "application/json")
		for k, v := range map[string]string{"x-api-key": h.alpha.APIKey, "x-api-secret": h.alpha.APISecret, "x-account-id": h.alpha.AccountID} {
			req.Header.Set(k, v)
		}
		if resp, err := h.client.Do(req); err == nil {
			resp.Body.Close()
			t.Fatalf("a dropped request was answered %d", resp.StatusCode)
		}
		h.as(h.alpha).POST("/contact/add").WithJSON(map[string]string{"email": "d@example.com"}).Expect().Status(http.StatusOK)
	})
	t.Run("delay holds the answer", func(t *testing.T) {
		h.addFault(map[string]any{"operation": "contact/add", "kind": "delay", "delay": "300ms"})
		start := time.Now()
		h.as(h.alpha).POST("/contact/add").WithJSON(map[string]string{"email": "slow@example.com"}).Expect().Status(http.StatusOK)
		if d := time.Since(start); d < 300*time.Millisecond {
			t.Fatalf("answered after %v, before the injected 300ms", d)
		}
	})
}

// TestFaults_Kinds: each kind answers as documented.
func TestFaults_Kinds(t *testing.T) {
	h := MustOpenServer(t, sim.Config{})
	tests := []struct {
		name  string
		fault map[string]any
		check func(t *testing.T, resp *httpexpect.Response)
	}{
		{"an error fault answers 500 with the spec §7 message by default", map[string]any{"kind": "error"},
			func(t *testing.T, resp *httpexpect.Response) {
				expectError(resp, http.StatusInternalServerError, spec.MsgInternal)
			}},
		{"an error fault answers any 5xx status with its name", map[string]any{"kind": "error", "status": 503},
			func(t *testing.T, resp *httpexpect.Response) {
				expectError(resp, http.StatusServiceUnavailable, "Service Unavailable")
			}},
		{"an error fault with a status that has no name still says what it is", map[string]any{"kind": "error", "status": 599},
			func(t *testing.T, resp *httpexpect.Response) {
				expectError(resp, 599, "Server error 599")
			}},
		{"a rate-limit fault answers the spec §7 429 with its Retry-After", map[string]any{"kind": "rate-limit", "retryAfter": 7},
			func(t *testing.T, resp *httpexpect.Response) {
				expectError(resp, http.StatusTooManyRequests, spec.MsgRateLimit)
				resp.Header("Retry-After").IsEqual("7")
			}},
		{"a rate-limit fault waits one second by default", map[string]any{"kind": "rate-limit"},
			func(t *testing.T, resp *httpexpect.Response) {
				resp.Status(http.StatusTooManyRequests).Header("Retry-After").IsEqual("1")
			}},
		{"a malformed fault answers 200 JSON that does not parse", map[string]any{"kind": "malformed"},
			func(t *testing.T, resp *httpexpect.Response) {
				resp.Status(http.StatusOK).HasContentType("application/json")
				if body := resp.Body().Raw(); json.Valid([]byte(body)) || body == "" {
					t.Errorf("body %q parses as JSON", body)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.fault["operation"] = "campaign/list"
			h.addFault(tt.fault)
			tt.check(t, h.listAs(h.alpha))
			h.listAs(h.alpha).Status(http.StatusOK)
		})
	}
}

// TestFaults_AfterAuthentication: a request answered 401 or 403 neither
// gets a fault nor consumes one (spec §5 comes first).
func TestFaults_AfterAuthentication(t *testing.T) {
	h := MustOpenServer(t, sim.Config{})
	h.addFault(map[string]any{"operation": "*", "kind": "error"})
	body := map[string]int{"limit": 1, "page": 1}
	expectError(h.anon().POST("/campaign/list").WithHeader("x-api-key", h.alpha.APIKey).WithHeader("x-api-secret", "wrong").
		WithHeader("x-account-id", h.alpha.AccountID).WithJSON(body).Expect(), http.StatusUnauthorized, spec.MsgInvalidCredentials)
	expectError(h.anon().POST("/campaign/list").WithHeader("x-api-key", h.alpha.APIKey).WithHeader("x-api-secret", h.alpha.APISecret).
		WithHeader("x-account-id", h.bravo.AccountID).WithJSON(body).Expect(), http.StatusForbidden, spec.MsgUnauthorizedAccount)
	if got := h.faults(); len(got) != 1 {
		t.Fatalf("faults after a 401 and a 403 = %v, want the one still pending", got)
	}
	expectError(h.listAs(h.alpha), http.StatusInternalServerError, spec.MsgInternal)
}

// TestFaults_RateLimit: an allowed request counts even when a fault answers
// it; a request refused with 429 consumes no fault.
func TestFaults_RateLimit(t *testing.T) {
	h := MustOpenServer(t, sim.Config{RateLimit: 2})
	h.addFault(map[string]any{"operation": "*", "kind": "error"})
	h.listAs(h.alpha).Status(http.StatusInternalServerError)
	h.listAs(h.alpha).Status(http.StatusOK)
	h.addFault(map[string]any{"operation": "*", "kind": "error"})
	expectError(h.listAs(h.alpha), http.StatusTooManyRequests, spec.MsgRateLimit)
	if got := h.faults(); len(got) != 1 {
		t.Fatalf("faults after a 429 = %v, want the one still pending", got)
	}
	h.clock.Advance(time.Minute)
	h.listAs(h.alpha).Status(http.StatusInternalServerError)
}

// TestFaults_Account: a fault for one account leaves the others alone, so
// CI jobs sharing a simulator do not hit each other's faults.
func TestFaults_Account(t *testing.T) {
	h := MustOpenServer(t, sim.Config{})
	id := h.addFault(map[string]any{"operation": "*", "kind": "error", "accountId": h.bravo.AccountID, "count": 2})
	other := h.addFault(map[string]any{"operation": "contact/add", "kind": "drop", "accountId": h.alpha.AccountID})
	h.listAs(h.alpha).Status(http.StatusOK)
	h.listAs(h.bravo).Status(http.StatusInternalServerError)
	if got := h.faults("accountId", h.bravo.AccountID); len(got) != 1 || got[0].(map[string]any)["id"] != id {
		t.Fatalf("bravo's faults = %v, want %s only", got, id)
	}
	// Clearing one account's faults keeps the other's.
	h.admin().DELETE("/faults").WithQuery("accountId", h.bravo.AccountID).Expect().Status(http.StatusOK)
	if got := h.faults(); len(got) != 1 || got[0].(map[string]any)["id"] != other {
		t.Fatalf("faults = %v, want alpha's %s only", got, other)
	}
	h.listAs(h.bravo).Status(http.StatusOK)
}

// TestFaults_Delete: DELETE /faults/{id} removes one fault.
func TestFaults_Delete(t *testing.T) {
	h := MustOpenServer(t, sim.Config{})
	first := h.addFault(map[string]any{"operation": "*", "kind": "error", "count": 3})
	second := h.addFault(map[string]any{"operation": "campaign/list", "kind": "rate-limit", "retryAfter": 5})
	h.admin().DELETE("/faults/"+first).Expect().Status(http.StatusOK).JSON().Object().
		HasValue("id", first).HasValue("remaining", 3).HasValue("kind", "error")
	if got := h.faults(); len(got) != 1 || got[0].(map[string]any)["id"] != second {
		t.Fatalf("faults = %v, want %s only", got, second)
	}
	expectError(h.admin().DELETE("/faults/"+first).Expect(), http.StatusNotFound, "No fault "+first)
	h.listAs(h.alpha).Status(http.StatusTooManyRequests)
}

// TestFaults_BadRequests: every field is checked, and the 400 names it.
func TestFaults_BadRequests(t *testing.T) {
	h := MustOpenServer(t, sim.Config{})
	tests := []struct {
		name, body, field string
	}{
		{"an unknown kind", `{"operation":"campaign/list","kind":"explode"}`, "kind"},
		{"no kind", `{"operation":"campaign/list"}`, "kind"},
		{"an unknown operation", `{"operation":"contact/delete","kind":"error"}`, "operation"},
		{"no operation", `{"kind":"error"}`, "operation"},
		{"a delay over the cap", `{"operation":"*","kind":"delay","delay":"5h"}`, "delay"},
		{"a delay that is no duration", `{"operation":"*","kind":"delay","delay":"soon"}`, "delay"},
		{"a delay fault without a delay", `{"operation":"*","kind":"delay"}`, "delay"},
		{"a delay on another kind", `{"operation":"*","kind":"error","delay":"1s"}`, "delay"},
		{"a count of zero", `{"operation":"*","kind":"error","count":0}`, "count"},
		{"a count over the cap", `{"operation":"*","kind":"error","count":1000001}`, "count"},
		{"a count that is a string", `{"operation":"*","kind":"error","count":"2"}`, "count"},
		{"a status below 500", `{"operation":"*","kind":"error","status":404}`, "status"},
		{"a status over 599", `{"operation":"*","kind":"error","status":600}`, "status"},
		{"a status on another kind", `{"operation":"*","kind":"drop","status":503}`, "status"},
		{"a negative retryAfter", `{"operation":"*","kind":"rate-limit","retryAfter":-1}`, "retryAfter"},
		{"a fractional retryAfter", `{"operation":"*","kind":"rate-limit","retryAfter":1.5}`, "retryAfter"},
		{"a retryAfter on another kind", `{"operation":"*","kind":"error","retryAfter":3}`, "retryAfter"},
		{"a probability of zero", `{"operation":"*","kind":"error","probability":0}`, "probability"},
		{"a probability over one", `{"operation":"*","kind":"error","probability":1.01}`, "probability"},
		{"a probability that is a string", `{"operation":"*","kind":"error","probability":"0.5"}`, "probability"},
		{"an unknown account", `{"operation":"*","kind":"error","accountId":"acc_nobody"}`, "accountId"},
		{"an unknown field", `{"operation":"*","kind":"error","colour":"red"}`, "colour"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg := h.admin().POST("/faults").WithBytes([]byte(tt.body)).WithHeader("Content-Type", "application/json").
				Expect().Status(http.StatusBadRequest).JSON().Object().Value("error").String().Raw()
			if !strings.Contains(msg, tt.field) {
				t.Errorf("message %q does not name %s", msg, tt.field)
			}
		})
	}
	if got := h.faults(); len(got) != 0 {
		t.Fatalf("refused requests stored faults: %v", got)
	}
}

// lockedBuffer is a log sink for concurrent handlers.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestFaults_LoggedAsInjected: an injected fault is logged at info level
// as "injected fault" with its id and kind, never as an internal error, and
// the journal names it.
func TestFaults_LoggedAsInjected(t *testing.T) {
	var logs lockedBuffer
	h := MustOpenServer(t, sim.Config{Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	id := h.addFault(map[string]any{"operation": "campaign/list", "kind": "error"})
	h.listAs(h.alpha).Status(http.StatusInternalServerError)
	var injected bool
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		switch rec["msg"] {
		case "internal error":
			t.Errorf("an injected fault was logged as an internal error: %s", line)
		case "injected fault":
			injected = rec["level"] == "INFO" && rec["fault_id"] == id && rec["kind"] == "error"
		case "request":
			if rec["level"] != "INFO" || rec["fault_id"] != id {
				t.Errorf("request line %s, want INFO naming fault %s", line, id)
			}
		}
	}
	if !injected {
		t.Errorf("no info line \"injected fault\" with id %s and kind error in:\n%s", id, logs.String())
	}
	e := h.admin().GET("/journal").WithQuery("limit", 1).Expect().Status(http.StatusOK).
		JSON().Object().Value("entries").Array().Value(0).Object()
	e.HasValue("fault", "error").HasValue("faultId", id).HasValue("status", 500)
}

// TestFaults_Probability: with an injected random source, a matching
// request is faulted exactly when its draw falls below the probability,
// and one not faulted consumes nothing.
func TestFaults_Probability(t *testing.T) {
	s, err := sim.New(context.Background(), sim.Config{Insecure: true, AdminToken: "tok", DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	draws := []float64{0.9, 0.1, 0.5, 0.49}
	s.Rand = func() float64 {
		d := draws[0]
		draws = draws[1:]
		return d
	}
	admin := func(method, path, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer tok")
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		s.AdminHandler().ServeHTTP(w, req)
		return w
	}
	if w := admin(http.MethodPost, "/faults", `{"operation":"*","kind":"error","count":5,"probability":0.5}`); w.Code != http.StatusCreated {
		t.Fatalf("POST /faults: %d %s", w.Code, w.Body)
	}
	a := s.Accounts[0]
	var got []int
	for range 4 {
		got = append(got, apitest.Serve(s.Handler(), a, spec.PathCampaignList, `{"limit":1,"page":1}`).Code)
	}
	if want := []int{200, 500, 200, 500}; !slices.Equal(got, want) {
		t.Errorf("statuses for draws 0.9, 0.1, 0.5, 0.49 = %v, want %v", got, want)
	}
	var list struct{ Faults []struct{ Remaining int } }
	if err := json.NewDecoder(admin(http.MethodGet, "/faults", "").Body).Decode(&list); err != nil || len(list.Faults) != 1 || list.Faults[0].Remaining != 3 {
		t.Errorf("faults = %+v (%v), want one with 3 left", list, err)
	}
}

// TestPprof: the profiler is on the control API, behind its token, and
// never on the partner listener.
func TestPprof(t *testing.T) {
	h := MustOpenServer(t, sim.Config{})
	noToken := h.expect(h.sim.AdminURL())
	for _, path := range []string{"/debug/pprof/", "/debug/pprof/goroutine", "/debug/pprof/profile"} {
		expectError(noToken.GET(path).Expect(), http.StatusUnauthorized, "Control API: missing or wrong bearer token")
	}
	body := h.admin().GET("/debug/pprof/goroutine").WithQuery("debug", 1).Expect().Status(http.StatusOK).Body().Raw()
	if !strings.Contains(body, "goroutine profile:") {
		t.Errorf("goroutine profile = %.200q", body)
	}
	resp := h.admin().GET("/debug/pprof/heap").Expect().Status(http.StatusOK).Raw()
	if b, _ := io.ReadAll(resp.Body); len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Errorf("heap profile is not gzipped protobuf: %.20q", b)
	}
	h.expect(strings.TrimSuffix(h.sim.URL(), spec.BasePath)).GET("/debug/pprof/").Expect().Status(http.StatusNotFound)
}

// TestGate_Fails: when the gate's backend fails, the request answers the
// spec §7 500, after authentication, and the gate was asked about the
// authenticated account and the operation.
func TestGate_Fails(t *testing.T) {
	accounts := []*simulator.Account{{APIKey: "k", APISecret: "s", AccountID: "a"}}
	var asked simulator.Arrival
	s := &partnerapi.API{Stores: partnerapi.Stores{
		Accounts: inmem.NewAccountStore(accounts), Contacts: inmem.NewContactStore(), Campaigns: inmem.NewCampaignStore(),
		Counter: inmem.NewRateCounter(100, time.Minute), Control: inmem.NewControlStore(),
		Gate: &mock.Gate{AdmitFn: func(_ context.Context, a simulator.Arrival) (simulator.Admission, error) {
			asked = a
			return simulator.Admission{}, errors.New("redis: connection refused")
		}},
	}}
	h := s.Handler()
	for _, tt := range []struct {
		name   string
		secret string
		status int
	}{
		{"a request refused at authentication never reaches the gate", "wrong", http.StatusUnauthorized},
		{"an authenticated request answers 500 when the gate fails", "s", http.StatusInternalServerError},
	} {
		t.Run(tt.name, func(t *testing.T) {
			asked = simulator.Arrival{}
			req := httptest.NewRequest(http.MethodPost, spec.BasePath+"/campaign/stats", strings.NewReader(`{"campaignId":1}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("x-api-key", "k")
			req.Header.Set("x-api-secret", tt.secret)
			req.Header.Set("x-account-id", "a")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tt.status, w.Body)
			}
			wantAsked := simulator.Arrival{}
			if tt.status == http.StatusInternalServerError {
				wantAsked = simulator.Arrival{AccountID: "a", Operation: spec.PathCampaignStats}
				if got := strings.TrimSpace(w.Body.String()); got != `{"error":"Internal server error"}` {
					t.Errorf("body %s", got)
				}
			}
			if asked.AccountID != wantAsked.AccountID || asked.Operation != wantAsked.Operation {
				t.Errorf("gate asked about %+v, want account %q and operation %q", asked, wantAsked.AccountID, wantAsked.Operation)
			}
		})
	}
}
