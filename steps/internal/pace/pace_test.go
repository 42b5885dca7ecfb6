package pace

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator/control"
)

// TestPacerResetsThroughControlAPI checks that, with a control API, the
// pacer resets an account's counter instead of exceeding its budget, and
// that deliberate requests are never held back.
func TestPacerResetsThroughControlAPI(t *testing.T) {
	p := New(5, 1<<40, io.Discard) // a window so long that only resets free it
	var resets []string
	p.Reset = func(_ context.Context, id string) error { resets = append(resets, id); return nil }
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
		if err := p.acquire(Deliberate(ctx), []string{"a"}); err != nil {
			t.Fatalf("deliberate request %d: %v", i, err)
		}
	}
	if got, want := len(resets), 2; got != want {
		t.Fatalf("deliberate requests caused resets: %d, want %d", got, want)
	}
	if got, want := p.Requests(), int64(22); got != want {
		t.Fatalf("requests=%d, want %d", got, want)
	}
}

// TestTransportAttributesRequestsToAccounts checks that a request counts for
// every account whose credentials it carries, and anything else for the
// primary.
func TestTransportAttributesRequestsToAccounts(t *testing.T) {
	tr := &Transport{Primary: control.Credentials{APIKey: "k1", AccountID: "a1"}, Second: control.Credentials{APIKey: "k2", AccountID: "a2"}}
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

// script answers each request with the next status (and Retry-After) of
// its list, and keeps the bodies it received.
type script struct {
	mu     sync.Mutex
	steps  []struct{ status, retryAfter string }
	bodies []string
}

func (s *script) RoundTrip(r *http.Request) (*http.Response, error) {
	b, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bodies = append(s.bodies, string(b))
	st := s.steps[0]
	if len(s.steps) > 1 {
		s.steps = s.steps[1:]
	}
	resp := &http.Response{StatusCode: map[string]int{"200": 200, "429": 429}[st.status], Header: http.Header{}, Body: io.NopCloser(strings.NewReader(`{}`)), Request: r}
	if st.retryAfter != "" {
		resp.Header.Set("Retry-After", st.retryAfter)
	}
	return resp, nil
}

func newScript(steps ...string) *script {
	s := &script{}
	for _, st := range steps {
		status, ra, _ := strings.Cut(st, "/")
		s.steps = append(s.steps, struct{ status, retryAfter string }{status, ra})
	}
	return s
}

// TestTransportWaitsOutABudgetSpentBeforeTheRun covers the budget-aware
// retry: a 429 to a request that does not test §8 is waited out (the
// target's Retry-After, then a full quiet window) and the request sent
// again with its body; only a 429 after a quiet window is a finding;
// deliberate requests are never retried.
func TestTransportWaitsOutABudgetSpentBeforeTheRun(t *testing.T) {
	tests := []struct {
		name       string
		steps      []string
		deliberate bool
		reset      bool
		status     int
		attempts   int
		reasons    string
		finding    bool
	}{
		{"a 429 with Retry-After is waited out", []string{"429/0", "200"}, false, false, 200, 2, "Retry-After: 0", false},
		{"a 429 without Retry-After waits a quiet window", []string{"429", "200"}, false, false, 200, 2, "a full quiet window", false},
		{"a Retry-After longer than a window is not trusted", []string{"429/3600", "200"}, false, false, 200, 2, "a full quiet window", false},
		{"a second 429 after Retry-After waits a quiet window", []string{"429/0", "429/0", "200"}, false, false, 200, 3, "Retry-After: 0|a full quiet window", false},
		{"a 429 after a quiet window is a finding of §8", []string{"429/0", "429/0", "429/0"}, false, false, 429, 3, "Retry-After: 0|a full quiet window", true},
		{"a deliberate request is never retried", []string{"429/0", "200"}, true, false, 429, 1, "", false},
		{"with a control API the counter is reset", []string{"429", "200"}, false, true, 200, 2, "control API reset", false},
		{"a 429 after a reset is a finding", []string{"429", "429"}, false, true, 429, 2, "control API reset", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := newScript(tt.steps...)
			p := New(10, 100*time.Millisecond, io.Discard)
			var resets int
			if tt.reset {
				p.Reset = func(context.Context, string) error { resets++; return nil }
			}
			client := &http.Client{Transport: &Transport{Base: sc, Pacer: p, Primary: control.Credentials{APIKey: "k", AccountID: "a"}}}
			ctx, note := WithNote(context.Background())
			if tt.deliberate {
				ctx = Deliberate(ctx)
			}
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "https://x/v3/partner/webhook/campaign/list", strings.NewReader(`{"limit": 1, "page": 1}`))
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.status)
			}
			if note.Attempts != tt.attempts || len(sc.bodies) != tt.attempts {
				t.Errorf("attempts %d (target saw %d), want %d", note.Attempts, len(sc.bodies), tt.attempts)
			}
			for i, b := range sc.bodies {
				if b != `{"limit": 1, "page": 1}` {
					t.Errorf("attempt %d sent body %q", i+1, b)
				}
			}
			var reasons []string
			for _, w := range note.Waits {
				reasons = append(reasons, w.Reason)
			}
			if got := strings.Join(reasons, "|"); got != tt.reasons {
				t.Errorf("waits %q, want %q", got, tt.reasons)
			}
			if len(p.Waits()) != len(note.Waits) {
				t.Errorf("the pacer recorded %d waits, the note %d", len(p.Waits()), len(note.Waits))
			}
			if (note.Finding != "") != tt.finding {
				t.Errorf("finding %q, want one: %v", note.Finding, tt.finding)
			}
			if tt.reset && resets == 0 {
				t.Error("the control API was not asked to reset the counter")
			}
			for _, w := range note.Waits {
				if w.Reason == "a full quiet window" && w.Duration < p.Window() {
					t.Errorf("a quiet window of %s is shorter than the %s window", w.Duration, p.Window())
				}
			}
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"3", 3 * time.Second, true},
		{"0", 0, true},
		{"-1", 0, false},
		{"", 0, false},
		{"soon", 0, false},
		{"Sun, 22 Nov 2026 10:00:05 GMT", 5 * time.Second, true},
		{"Sun, 22 Nov 2026 09:59:00 GMT", 0, true},
	}
	for _, tt := range tests {
		got, ok := parseRetryAfter(tt.in, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseRetryAfter(%q) = %s, %v; want %s, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// TestTimeoutCountsNoPacingWait: the suite's own wait for the rate-limit
// window is not the target's time to answer. A request held back longer
// than the per-request timeout still gets its answer; an answer slower
// than the timeout is still cut.
func TestTimeoutCountsNoPacingWait(t *testing.T) {
	p := New(2, 300*time.Millisecond, io.Discard) // one request per window plus margin
	slow := 0 * time.Millisecond
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		select {
		case <-time.After(slow):
		case <-r.Context().Done():
			return nil, r.Context().Err()
		}
		return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader("{}")), Header: http.Header{}, Request: r}, nil
	})
	client := &http.Client{Transport: &Transport{Base: base, Pacer: p, Primary: control.Credentials{APIKey: "k", AccountID: "a"}, Timeout: 100 * time.Millisecond}}
	send := func() (time.Duration, error) {
		start := time.Now()
		req, _ := http.NewRequest(http.MethodPost, "https://target.invalid/op", strings.NewReader("{}"))
		req.Header.Set("x-api-key", "k")
		resp, err := client.Do(req)
		if err == nil {
			_, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		return time.Since(start), err
	}
	if _, err := send(); err != nil {
		t.Fatalf("first request: %v", err)
	}
	took, err := send()
	if err != nil {
		t.Fatalf("a request held back by the pacer failed: %v", err)
	}
	if took < 250*time.Millisecond {
		t.Fatalf("the second request took %s: the pacer did not hold it back, the test proves nothing", took)
	}
	slow = 300 * time.Millisecond
	p.Forget("a")
	if _, err := send(); err == nil {
		t.Fatal("an answer slower than the timeout was not cut")
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// slow answers every request after a delay, as a loaded target takes a
// request in late.
type slow time.Duration

func (d slow) RoundTrip(r *http.Request) (*http.Response, error) {
	time.Sleep(time.Duration(d))
	return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(`{}`)), Request: r}, nil
}

// TestWaitFreshCountsFromTheAnswer: a request answered later than the
// margin after it was sent may have been counted by the target just before
// its answer, so a fresh window is waited for from the answer, not from the
// send (a burst started a window after the send alone was refused early on
// a loaded machine: the suite's miscount, blamed on the target).
func TestWaitFreshCountsFromTheAnswer(t *testing.T) {
	p := New(100, time.Second, io.Discard) // margin 250 ms
	tr := &Transport{Pacer: p, Base: slow(400 * time.Millisecond), Primary: control.Credentials{APIKey: "k", AccountID: "a"}}
	r, _ := http.NewRequest(http.MethodPost, "https://x/", nil)
	r.Header.Set("x-api-key", "k")
	r.Header.Set("x-account-id", "a")
	resp, err := tr.RoundTrip(r)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	answered := time.Now()
	if err := p.WaitFresh(context.Background(), "a", 1); err != nil {
		t.Fatal(err)
	}
	if got, want := time.Since(answered), time.Second+p.Margin(); got < want {
		t.Fatalf("WaitFresh returned %s after the answer, want at least the window and margin, %s", got, want)
	}
}
