package simtest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/simulator/internal/apitest"
	"github.com/partner-v3/conformance-kit/simulator/simtest"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// listCampaigns calls Campaign List (spec §4.2) for the primary account.
func listCampaigns(tb testing.TB, s *simtest.Simulator, limit int) (int, []byte) {
	tb.Helper()
	return apitest.Post(tb, s.HTTPClient(), s.URL, &s.Accounts[0], spec.PathCampaignList, fmt.Sprintf(`{"limit": %d, "page": 1}`, limit))
}

func totalRecords(tb testing.TB, body []byte) int {
	tb.Helper()
	var page struct {
		TotalRecords int `json:"totalRecords"`
	}
	if err := json.Unmarshal(body, &page); err != nil {
		tb.Fatalf("campaign/list body %s: %v", body, err)
	}
	return page.TotalRecords
}

func TestNewServesThePartnerAPIOverHTTPS(t *testing.T) {
	t.Parallel()
	s := simtest.New(t)
	if !strings.HasPrefix(s.URL, "https://127.0.0.1:") || !strings.HasSuffix(s.URL, spec.BasePath) {
		t.Errorf("URL = %q, want https://127.0.0.1:PORT%s (spec §1)", s.URL, spec.BasePath)
	}
	if !strings.HasPrefix(s.AdminURL, "https://127.0.0.1:") {
		t.Errorf("AdminURL = %q, want https://127.0.0.1:PORT", s.AdminURL)
	}
	if len(s.Accounts) != 2 || s.Accounts[0].APISecret == "" {
		t.Fatalf("Accounts = %+v, want the two development accounts with their secrets", s.Accounts)
	}
	status, body := listCampaigns(t, s, 50)
	if status != http.StatusOK {
		t.Fatalf("campaign/list: status %d, body %s", status, body)
	}
	if got, want := totalRecords(t, body), 120; got != want {
		t.Errorf("totalRecords = %d, want %d (sim.DefaultCampaigns)", got, want)
	}
	if err := s.Control.Health(context.Background()); err != nil {
		t.Errorf("Control.Health: %v", err)
	}
}

// HTTPClient trusts the simulator's own certificate and nothing else: a
// client that trusts the system's roots fails the handshake, and one
// simulator's client fails against another (each makes its own).
func TestHTTPClientTrustsOnlyItsSimulator(t *testing.T) {
	t.Parallel()
	a, b := simtest.New(t), simtest.New(t)
	if bytes.Equal(a.CACertPEM, b.CACertPEM) {
		t.Fatal("two simulators share a certificate")
	}
	for name, client := range map[string]*http.Client{
		"the system's roots":          {Timeout: 10 * time.Second},
		"another simulator's client":  b.HTTPClient(),
		"another simulator's TLSConf": {Transport: &http.Transport{TLSClientConfig: b.TLSConfig()}, Timeout: 10 * time.Second},
	} {
		resp, err := client.Post(a.URL+"/campaign/list", "application/json", strings.NewReader(`{}`))
		if err == nil {
			resp.Body.Close()
			t.Errorf("%s reached the simulator: status %d, want a certificate error", name, resp.StatusCode)
		} else if !strings.Contains(err.Error(), "certificate") {
			t.Errorf("%s: %v, want a certificate error", name, err)
		}
	}
	if got := a.HTTPClient(); got != a.HTTPClient() {
		t.Error("HTTPClient returns a new client at each call")
	}
}

// Parallel tests each get a simulator of their own: a fault, a contact or
// a spent rate budget in one is not seen by another.
func TestParallelSimulatorsKeepSeparateState(t *testing.T) {
	for i := range 4 {
		faulted := i%2 == 0
		t.Run(fmt.Sprintf("simulator %d, faulted %v", i, faulted), func(t *testing.T) {
			t.Parallel()
			var opts []simtest.Option
			if faulted {
				opts = append(opts, simtest.WithFaults(control.FaultSpec{
					Operation: spec.PathCampaignList, Kind: simulator.FaultError, Status: 503}))
			}
			s := simtest.New(t, opts...)
			faults, err := s.Control.Faults(context.Background(), "")
			if err != nil {
				t.Fatal(err)
			}
			if want := map[bool]int{true: 1, false: 0}[faulted]; len(faults) != want {
				t.Fatalf("%d pending faults, want %d: %+v", len(faults), want, faults)
			}
			want := map[bool]int{true: http.StatusServiceUnavailable, false: http.StatusOK}[faulted]
			if status, body := listCampaigns(t, s, 1); status != want {
				t.Fatalf("first campaign/list: status %d, want %d; body %s", status, want, body)
			}
			if status, body := apitest.Post(t, s.HTTPClient(), s.URL, &s.Accounts[0], spec.PathContactAdd, fmt.Sprintf(`{"email": "p%d@example.com"}`, i)); status != http.StatusOK {
				t.Fatalf("contact/add: status %d, body %s", status, body)
			}
			contacts, total, err := s.Control.Contacts(context.Background(), control.ContactFilter{})
			if err != nil {
				t.Fatal(err)
			}
			if total != 1 || len(contacts) != 1 || contacts[0].Email != fmt.Sprintf("p%d@example.com", i) {
				t.Fatalf("contacts %d (%+v), want only this test's one", total, contacts)
			}
		})
	}
}

func TestOptions(t *testing.T) {
	t.Parallel()
	custom := simulator.Account{APIKey: "k-test", APISecret: "s-test", AccountID: "acc_test_1", Name: "Test"}
	tests := []struct {
		name  string
		opts  []simtest.Option
		check func(t *testing.T, s *simtest.Simulator)
	}{
		{"WithCampaigns(3) gives each account three campaigns", []simtest.Option{simtest.WithCampaigns(3)},
			func(t *testing.T, s *simtest.Simulator) {
				_, body := listCampaigns(t, s, 50)
				if got := totalRecords(t, body); got != 3 {
					t.Errorf("totalRecords = %d, want 3", got)
				}
			}},
		{"WithCampaigns(0) gives no campaign", []simtest.Option{simtest.WithCampaigns(0)},
			func(t *testing.T, s *simtest.Simulator) {
				_, body := listCampaigns(t, s, 50)
				if got := totalRecords(t, body); got != 0 {
					t.Errorf("totalRecords = %d, want 0", got)
				}
			}},
		{"WithContacts(2) seeds two contacts per account", []simtest.Option{simtest.WithContacts(2)},
			func(t *testing.T, s *simtest.Simulator) {
				for _, a := range s.Accounts {
					_, total, err := s.Control.Contacts(context.Background(), control.ContactFilter{AccountID: a.AccountID})
					if err != nil || total != 2 {
						t.Errorf("account %s: %d contacts (%v), want 2", a.AccountID, total, err)
					}
				}
			}},
		{"WithRateLimit(2, 1m) refuses the third request with the 429 of spec §7",
			[]simtest.Option{simtest.WithRateLimit(2, time.Minute)},
			func(t *testing.T, s *simtest.Simulator) {
				for i := 1; i <= 3; i++ {
					status, body := listCampaigns(t, s, 1)
					want := http.StatusOK
					if i == 3 {
						want = http.StatusTooManyRequests
					}
					if status != want {
						t.Fatalf("request %d: status %d, want %d; body %s", i, status, want, body)
					}
				}
				cfg, err := s.Control.Config(context.Background())
				if err != nil || cfg.RateLimit != 2 || cfg.RateWindow != time.Minute {
					t.Errorf("Config = %+v, %v; want 2 per 1m", cfg, err)
				}
			}},
		{"WithAccounts replaces the development accounts", []simtest.Option{simtest.WithAccounts(custom)},
			func(t *testing.T, s *simtest.Simulator) {
				if len(s.Accounts) != 1 || s.Accounts[0] != custom {
					t.Fatalf("Accounts = %+v, want only %+v", s.Accounts, custom)
				}
				if status, _ := listCampaigns(t, s, 1); status != http.StatusOK {
					t.Errorf("custom account: status %d, want 200", status)
				}
				dev := simulator.Account{APIKey: "dev-key-alpha-7f3c2b9e", APISecret: "dev-secret-alpha-9d41e6a0c58b", AccountID: "acc_enc_QWxwaGFQYXJ0bmVyMDAx"}
				if status, _ := apitest.Post(t, s.HTTPClient(), s.URL, &dev, spec.PathCampaignList, `{"limit": 1, "page": 1}`); status != http.StatusUnauthorized {
					t.Errorf("development account: status %d, want 401 (spec §5)", status)
				}
			}},
		{"WithSeed gives the campaigns of that seed", []simtest.Option{simtest.WithSeed(7), simtest.WithCampaigns(5)},
			func(t *testing.T, s *simtest.Simulator) {
				cfg, err := s.Control.Config(context.Background())
				if err != nil || cfg.Seed != 7 || cfg.CampaignsPerAccount != 5 {
					t.Fatalf("Config = %+v, %v; want seed 7, 5 campaigns", cfg, err)
				}
				_, same := listCampaigns(t, simtest.New(t, simtest.WithSeed(7), simtest.WithCampaigns(5)), 50)
				_, other := listCampaigns(t, simtest.New(t, simtest.WithSeed(8), simtest.WithCampaigns(5)), 50)
				_, mine := listCampaigns(t, s, 50)
				if !bytes.Equal(mine, same) {
					t.Error("the same seed gave other campaigns")
				}
				if bytes.Equal(mine, other) {
					t.Error("another seed gave the same campaigns")
				}
			}},
		{"WithAdminToken sets the control API's token", []simtest.Option{simtest.WithAdminToken("secret-token")},
			func(t *testing.T, s *simtest.Simulator) {
				if s.AdminToken != "secret-token" || s.Control.Token != "secret-token" {
					t.Fatalf("AdminToken %q, Control.Token %q", s.AdminToken, s.Control.Token)
				}
				wrong := &control.Client{BaseURL: s.AdminURL, Token: "other", HTTP: s.HTTPClient()}
				var cerr *control.Error
				if err := wrong.Reset(context.Background()); !errors.As(err, &cerr) || cerr.Status != http.StatusUnauthorized {
					t.Errorf("Reset with another token: %v, want a 401 *control.Error", err)
				}
			}},
		{"WithFaults injects before the first request",
			[]simtest.Option{simtest.WithFaults(
				control.FaultSpec{Operation: "*", Kind: simulator.FaultError},
				control.FaultSpec{Operation: spec.PathCampaignList, Kind: simulator.FaultRateLimit, RetryAfter: 3 * time.Second})},
			func(t *testing.T, s *simtest.Simulator) {
				if status, _ := listCampaigns(t, s, 1); status != http.StatusInternalServerError {
					t.Errorf("first request: status %d, want the injected 500", status)
				}
				if status, _ := listCampaigns(t, s, 1); status != http.StatusTooManyRequests {
					t.Errorf("second request: status %d, want the injected 429", status)
				}
				if status, _ := listCampaigns(t, s, 1); status != http.StatusOK {
					t.Errorf("third request: status %d, want 200: both faults are spent", status)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.check(t, simtest.New(t, tt.opts...))
		})
	}
}

func TestWithLoggerLogsTheSimulator(t *testing.T) {
	t.Parallel()
	var buf syncBuffer
	s := simtest.New(t, simtest.WithLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	listCampaigns(t, s, 1)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "campaign/list") {
		t.Errorf("log has no line about the request:\n%s", buf.String())
	}
}

func TestStartRefusesBadOptions(t *testing.T) {
	t.Parallel()
	dup := simulator.Account{APIKey: "k", APISecret: "s", AccountID: "a"}
	tests := []struct {
		name string
		opt  simtest.Option
		want string
	}{
		{"no account at all", simtest.WithAccounts(), "at least one account"},
		{"two accounts with one key", simtest.WithAccounts(dup, simulator.Account{APIKey: "k", APISecret: "s2", AccountID: "b"}), "apiKey"},
		{"a fault of an unknown kind", simtest.WithFaults(control.FaultSpec{Operation: "*", Kind: "explode"}), "kind must be one of"},
		{"a fault for an unknown account", simtest.WithFaults(control.FaultSpec{Operation: "*", Kind: simulator.FaultDrop, AccountID: "nobody"}), "names no account"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := simtest.Start(tt.opt)
			if err == nil {
				s.Close()
				t.Fatalf("Start succeeded, want an error with %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Start: %v, want %q", err, tt.want)
			}
		})
	}
}

func TestCloseStopsTheSimulatorAndRemovesItsFiles(t *testing.T) {
	t.Parallel()
	s, err := simtest.Start()
	if err != nil {
		t.Fatal(err)
	}
	client := s.HTTPClient()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	resp, err := client.Post(s.URL+"/campaign/list", "application/json", strings.NewReader(`{}`))
	if err == nil {
		resp.Body.Close()
		t.Fatalf("after Close: status %d, want no answer", resp.StatusCode)
	}
	// Start's temporary directory held the certificate; it is gone.
	dirs, err := filepath.Glob(filepath.Join(os.TempDir(), "simtest-*", "cert.pem"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range dirs {
		if pem, err := os.ReadFile(f); err == nil && bytes.Equal(pem, s.CACertPEM) {
			t.Errorf("%s still holds the closed simulator's certificate", f)
		}
	}
}

// simtest must not drag Docker into a partner's test binary: its
// dependencies name no container package.
func TestNoDockerDependency(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", "-test", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	pkgs := strings.Fields(string(out))
	if len(pkgs) < 10 {
		t.Fatalf("go list -deps named %d packages: %s", len(pkgs), out)
	}
	for _, p := range pkgs {
		for _, bad := range []string{"testcontainers", "docker", "moby", "containerd"} {
			if strings.Contains(p, bad) {
				t.Errorf("simtest depends on %s", p)
			}
		}
	}
}

// syncBuffer is a bytes.Buffer the simulator's goroutines may log into.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
