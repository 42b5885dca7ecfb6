// Package apitest holds what the simulator's tests share when they talk to
// its two HTTP APIs: a partner request (spec §4) with an account's
// credentials (spec §5), in-process or through a client, and the check
// that an answer is the JSON object every refusal must be (spec §7). It
// imports no part of the simulator but the domain and the spec's facts, so
// that any package's tests, partnerapi's own included, can use it.
package apitest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// SetCredentials sets h's Content-Type to JSON (spec §1) and a's three
// headers of spec §5.
func SetCredentials(h http.Header, a *simulator.Account) {
	h.Set("Content-Type", spec.ContentType)
	h.Set(spec.HeaderAPIKey, a.APIKey)
	h.Set(spec.HeaderAPISecret, a.APISecret)
	h.Set(spec.HeaderAccountID, a.AccountID)
}

// Serve sends h, in-process, a partner request for op (a path under
// spec.BasePath, such as spec.PathCampaignList) with body and a's
// credentials, and returns what h answered.
func Serve(h http.Handler, a *simulator.Account, op, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, spec.BasePath+"/"+op, strings.NewReader(body))
	SetCredentials(req.Header, a)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

// Post sends a partner request for op with body and a's credentials
// through client to baseURL (which ends in spec.BasePath) and returns the
// status and body; an exchange that fails fails the test.
func Post(tb testing.TB, client *http.Client, baseURL string, a *simulator.Account, op, body string) (int, []byte) {
	tb.Helper()
	req, err := http.NewRequest(http.MethodPost, baseURL+"/"+op, strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	SetCredentials(req.Header, a)
	resp, err := client.Do(req)
	if err != nil {
		tb.Fatalf("POST %s: %v", op, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatalf("read %s response: %v", op, err)
	}
	return resp.StatusCode, b
}

// MustBeJSONAnswer fails the test unless w is a 2xx or 4xx JSON object,
// and a refusal (4xx) is {"error": "<message>"} alone; body is the request
// body, named in the failure. The fuzz targets of both APIs hold every
// answer to it.
func MustBeJSONAnswer(tb testing.TB, w *httptest.ResponseRecorder, body []byte) {
	tb.Helper()
	if w.Code >= 500 || w.Code < 200 || (w.Code >= 300 && w.Code < 400) {
		tb.Fatalf("status %d for %q: %s", w.Code, body, w.Body)
	}
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		tb.Fatalf("Content-Type %q for %q", ct, body)
	}
	var obj map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &obj); err != nil {
		tb.Fatalf("answer %q is not a JSON object: %v", w.Body, err)
	}
	if w.Code >= 400 {
		if msg, ok := obj["error"].(string); !ok || msg == "" || len(obj) != 1 {
			tb.Fatalf(`%d answer %s, want {"error": "<message>"}`, w.Code, w.Body)
		}
	}
}

// Clock is a test simulator's real-time source (sim.Config.Now): it moves
// only when the test moves it. Safe for concurrent use.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a Clock standing at now.
func NewClock(now time.Time) *Clock { return &Clock{now: now} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
