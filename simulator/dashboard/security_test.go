package dashboard_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator/dashboard"
	"github.com/partner-v3/conformance-kit/simulator/simtest"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// session logs in to the dashboard with the Go client and answers a
// client that keeps the session's cookie, and the page's CSRF token.
func session(t testing.TB, s *simtest.Simulator) (*http.Client, string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Transport: s.HTTPClient().Transport,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest(http.MethodPost, s.AdminURL+"/ui/login", strings.NewReader(url.Values{"token": {s.AdminToken}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", s.AdminURL)
	res, err := c.Do(req)
	if err != nil {
		t.Fatalf("log in: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("log in: %d, want 303", res.StatusCode)
	}
	var cookie *http.Cookie
	for _, ck := range res.Cookies() {
		if ck.Name == dashboard.CookieName {
			cookie = ck
		}
	}
	if cookie == nil || !cookie.Secure || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || cookie.Path != dashboard.Prefix {
		t.Fatalf("session cookie %+v: want Secure, HttpOnly, SameSite=Strict, Path=/ui/", cookie)
	}
	if strings.Contains(cookie.Value, s.AdminToken) {
		t.Fatal("the session cookie holds the token")
	}
	page := get(t, c, s.AdminURL+"/ui/", http.StatusOK)
	_, rest, ok := strings.Cut(page, `name="csrf-token" content="`)
	csrf, _, _ := strings.Cut(rest, `"`)
	if !ok || csrf == "" {
		t.Fatal("the page carries no CSRF token")
	}
	return c, csrf
}

func get(t testing.TB, c *http.Client, u string, want int) string {
	t.Helper()
	res, err := c.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		t.Fatalf("GET %s: %d %s, want %d", u, res.StatusCode, b, want)
	}
	return string(b)
}

func send(t *testing.T, c *http.Client, method, u, body string, header map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, u, strings.NewReader(body))
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// dashboardReads are the dashboard's reads: its pages, its own calls and
// the control API calls it passes on.
func dashboardReads(accountID string) []string {
	return []string{"/ui/", "/ui/journal", "/ui/report", "/ui/faults", "/ui/profile", "/ui/spec",
		"/ui/api/overview", "/ui/api/profiles", "/ui/api/spec", "/ui/api/config", "/ui/api/clock", "/ui/api/faults",
		"/ui/api/journal", "/ui/api/accounts/" + accountID + "/budget", "/ui/api/accounts/" + accountID + "/report"}
}

// TestDashboardNeedsTheToken: without a session every page sends to the
// login form and every call answers 401; a wrong token starts none; the
// partner listener serves no part of the dashboard (issue 30).
func TestDashboardNeedsTheToken(t *testing.T) {
	s := simtest.New(t)
	anon := &http.Client{Transport: s.HTTPClient().Transport,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, p := range append(dashboardReads(s.Accounts[0].AccountID), "/ui/events") {
		res, err := anon.Get(s.AdminURL + p)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if strings.HasPrefix(p, "/ui/api/") || p == "/ui/events" {
			if res.StatusCode != http.StatusUnauthorized {
				t.Errorf("GET %s without a session: %d, want 401", p, res.StatusCode)
			}
		} else if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/ui/login" {
			t.Errorf("GET %s without a session: %d to %q, want 303 to /ui/login", p, res.StatusCode, res.Header.Get("Location"))
		}
	}
	for _, p := range []string{"/ui/api/faults", "/ui/api/reset", "/ui/api/clock"} {
		if st, _ := send(t, anon, http.MethodPost, s.AdminURL+p, `{}`, map[string]string{"Origin": s.AdminURL}); st != http.StatusUnauthorized {
			t.Errorf("POST %s without a session: %d, want 401", p, st)
		}
	}
	st, body := send(t, anon, http.MethodPost, s.AdminURL+"/ui/login", "token=wrong",
		map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": s.AdminURL})
	if st != http.StatusUnauthorized || !strings.Contains(body, "Wrong token") {
		t.Errorf("a wrong token: %d, want 401 with the login form saying so", st)
	}
	// The token in a URL starts no session either.
	if st, _ := send(t, anon, http.MethodPost, s.AdminURL+"/ui/login?token="+s.AdminToken, "",
		map[string]string{"Origin": s.AdminURL}); st != http.StatusUnauthorized {
		t.Errorf("the token in the URL: %d, want 401", st)
	}
	partnerOrigin := strings.TrimSuffix(s.URL, spec.BasePath)
	for _, p := range []string{"/ui/", "/ui/login", "/ui/static/app.js", "/ui/api/overview"} {
		res, err := anon.Get(partnerOrigin + p)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusNotFound || strings.Contains(string(b), "<html") || !strings.Contains(string(b), s.AdminURL) {
			t.Errorf("partner listener GET %s: %d %s, want a JSON 404 that says where the control listener is", p, res.StatusCode, b)
		}
	}
}

// TestDashboardChangesNeedSameOriginAndCSRF: a state change needs the
// session, the same origin and the session's CSRF token; with them, it is
// the control API's own call: the same answer, the same refusals.
func TestDashboardChangesNeedSameOriginAndCSRF(t *testing.T) {
	s := simtest.New(t)
	c, csrf := session(t, s)
	fault := `{"operation": "campaign/list", "kind": "error", "status": 404}`
	json := "application/json"
	tests := []struct {
		name   string
		header map[string]string
		want   int
	}{
		{"no CSRF token", map[string]string{"Content-Type": json, "Origin": s.AdminURL}, http.StatusForbidden},
		{"a wrong CSRF token", map[string]string{"Content-Type": json, "Origin": s.AdminURL, dashboard.CSRFHeader: strings.Repeat("0", 64)}, http.StatusForbidden},
		{"another origin", map[string]string{"Content-Type": json, "Origin": "https://evil.example", dashboard.CSRFHeader: csrf}, http.StatusForbidden},
		{"a cross-site fetch", map[string]string{"Content-Type": json, "Sec-Fetch-Site": "cross-site", dashboard.CSRFHeader: csrf}, http.StatusForbidden},
		{"same origin with the token: the control API's own refusal", map[string]string{"Content-Type": json, "Origin": s.AdminURL, dashboard.CSRFHeader: csrf}, http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, body := send(t, c, http.MethodPost, s.AdminURL+"/ui/api/faults", fault, tt.header)
			if st != tt.want {
				t.Fatalf("POST /ui/api/faults: %d %s, want %d", st, body, tt.want)
			}
		})
	}
	// The same body to the control API answers the same words.
	_, viaDash := send(t, c, http.MethodPost, s.AdminURL+"/ui/api/faults", fault,
		map[string]string{"Content-Type": json, "Origin": s.AdminURL, dashboard.CSRFHeader: csrf})
	_, viaAPI := send(t, s.HTTPClient(), http.MethodPost, s.AdminURL+"/faults", fault,
		map[string]string{"Content-Type": json, "Authorization": "Bearer " + s.AdminToken})
	if viaDash != viaAPI || !strings.Contains(viaAPI, "status must be a 5xx status") {
		t.Fatalf("dashboard answered %s, control API %s: want the same refusal", viaDash, viaAPI)
	}
	st, body := send(t, c, http.MethodPost, s.AdminURL+"/ui/api/faults", `{"operation": "campaign/list", "kind": "error", "status": 503}`,
		map[string]string{"Content-Type": json, "Origin": s.AdminURL, dashboard.CSRFHeader: csrf})
	if st != http.StatusCreated || !strings.Contains(body, `"status":503`) {
		t.Fatalf("a good fault: %d %s, want 201", st, body)
	}
	// A call the dashboard does not pass on stays out of reach: POST
	// /accounts answers a new account's secret.
	if st, _ := send(t, c, http.MethodPost, s.AdminURL+"/ui/api/accounts", `{}`,
		map[string]string{"Content-Type": json, "Origin": s.AdminURL, dashboard.CSRFHeader: csrf}); st != http.StatusNotFound && st != http.StatusMethodNotAllowed {
		t.Fatalf("POST /ui/api/accounts: %d, want it refused", st)
	}
	// Logging out ends the session.
	if st, _ := send(t, c, http.MethodPost, s.AdminURL+"/ui/logout", "", map[string]string{"Origin": s.AdminURL, dashboard.CSRFHeader: csrf}); st != http.StatusOK {
		t.Fatalf("log out: %d", st)
	}
	get(t, c, s.AdminURL+"/ui/api/overview", http.StatusUnauthorized)
}

// readStream reads the journal stream until it has want entries or the
// deadline passes, and answers what it read.
func readStream(t *testing.T, c *http.Client, u string, want int, within time.Duration) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	res, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); res.StatusCode != http.StatusOK || ct != "text/event-stream" {
		t.Fatalf("GET %s: %d %s", u, res.StatusCode, ct)
	}
	var b strings.Builder
	sc := bufio.NewScanner(res.Body)
	n := 0
	for sc.Scan() {
		b.WriteString(sc.Text() + "\n")
		if sc.Text() == "event: entry" {
			if n++; n >= want {
				break
			}
		}
	}
	return b.String()
}
