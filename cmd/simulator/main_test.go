package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator/violation"
)

// mustParseFlags is a Main, writing to stdout, whose flags args parsed.
func mustParseFlags(t *testing.T, stdout io.Writer, args []string) *Main {
	t.Helper()
	m := NewMain(stdout, &bytes.Buffer{})
	if err := m.ParseFlags(context.Background(), args); err != nil {
		t.Fatal(err)
	}
	return m
}

// trustingClient is an HTTPS client that trusts the certificate in
// certFile, as a partner's client given the simulator's would.
func trustingClient(t *testing.T, certFile string) *http.Client {
	t.Helper()
	pem, err := os.ReadFile(certFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
}

func TestParseFlags_Precedence(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		env    map[string]string
		window time.Duration
		limit  int
		seed   int64
	}{
		{"defaults are the spec's", nil, nil, time.Minute, 100, 20260301},
		{"env fills what flags leave", nil, map[string]string{"SIM_RATE_WINDOW": "5s", "SIM_SEED": "7"}, 5 * time.Second, 100, 7},
		{"a flag beats its env", []string{"--rate-limit", "3"}, map[string]string{"SIM_RATE_LIMIT": "9"}, time.Minute, 3, 20260301},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			m := mustParseFlags(t, io.Discard, tt.args)
			c := m.Config
			if c.RateWindow != tt.window || c.RateLimit != tt.limit || c.Seed != tt.seed {
				t.Fatalf("window=%v limit=%d seed=%d, want %v %d %d", c.RateWindow, c.RateLimit, c.Seed, tt.window, tt.limit, tt.seed)
			}
		})
	}
}

func TestParseFlags_Contacts(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want int
	}{
		{"none by default", nil, nil, 0},
		{"from the environment", nil, map[string]string{"SIM_CONTACTS": "500000"}, 500000},
		{"the flag beats the environment", []string{"--contacts", "7"}, map[string]string{"SIM_CONTACTS": "9"}, 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			m := mustParseFlags(t, io.Discard, tt.args)
			if got := m.Config.ContactsPerAccount; got != tt.want {
				t.Fatalf("ContactsPerAccount = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestParseFlags_Refused(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"seed 0", []string{"--seed", "0"}, nil, "--seed 0"},
		{"zero limit", []string{"--rate-limit", "0"}, nil, "--rate-limit"},
		{"negative window", []string{"--rate-window", "-1s"}, nil, "--rate-window"},
		{"bad env value", nil, map[string]string{"SIM_RATE_LIMIT": "lots"}, "SIM_RATE_LIMIT"},
		{"negative contacts", []string{"--contacts", "-1"}, nil, "--contacts"},
		{"too many contacts", nil, map[string]string{"SIM_CONTACTS": "10000001"}, "--contacts"},
		{"memory limit not a size", []string{"--memory-limit", "300M"}, nil, "memory-limit"},
		{"memory limit too small", nil, map[string]string{"SIM_MEMORY_LIMIT": "1MiB"}, "SIM_MEMORY_LIMIT"},
		{"stray argument", []string{"serve"}, nil, "unexpected argument"},
		{"unknown flag", []string{"--colour"}, nil, "colour"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			err := NewMain(&bytes.Buffer{}, &bytes.Buffer{}).ParseFlags(context.Background(), tt.args)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}

// TestMain_Run starts the program as a user would and follows its banner:
// the printed URL, certificate and credentials work.
func TestMain_Run(t *testing.T) {
	var out bytes.Buffer
	args := []string{"--addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--campaigns", "0"}
	m := mustParseFlags(t, &out, args)
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
	}()
	s := m.Simulator
	banner := out.String()
	for _, want := range []string{s.URL(), s.AdminURL(), "Dashboard:    " + s.AdminURL() + "/ui/", s.Cert.CertFile, s.Cert.Fingerprint, s.Accounts[0].APISecret, "curl --cacert"} {
		if !strings.Contains(banner, want) {
			t.Fatalf("banner lacks %q:\n%s", want, banner)
		}
	}
	client := trustingClient(t, s.Cert.CertFile)
	req, _ := http.NewRequest(http.MethodPost, s.URL()+"/campaign/list", strings.NewReader(`{"limit":2,"page":1}`))
	a := s.Accounts[0]
	for k, v := range map[string]string{"Content-Type": "application/json", "x-api-key": a.APIKey, "x-api-secret": a.APISecret, "x-account-id": a.AccountID} {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
}

// TestListViolations: --list-violations prints the whole catalogue, sorted,
// each name with the rule it breaks.
func TestListViolations(t *testing.T) {
	var out bytes.Buffer
	m := mustParseFlags(t, &out, []string{"--list-violations"})
	if !m.listViolations {
		t.Fatal("--list-violations not set")
	}
	m.printViolations()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	all := violation.Catalogue()
	if len(lines) != len(all) {
		t.Fatalf("%d lines, want %d", len(lines), len(all))
	}
	names := make([]string, len(lines))
	for i, l := range lines {
		name, rule, _ := strings.Cut(l, " ")
		names[i] = name
		if want := all[i]; name != string(want.Name) || strings.TrimSpace(rule) != want.Rule {
			t.Fatalf("line %d = %q, want %s and %q", i, l, want.Name, want.Rule)
		}
	}
	if !slices.IsSorted(names) {
		t.Fatal("not sorted")
	}
}

// TestMain_RunViolating: the banner says a switch is on, and prints the
// base URL the simulator really serves.
func TestMain_RunViolating(t *testing.T) {
	t.Setenv("SIM_VIOLATE", "version-path-unversioned,list-total-pages-floor")
	var out bytes.Buffer
	args := []string{"--addr", "127.0.0.1:0", "--admin-addr", "", "--insecure", "--campaigns", "0"}
	m := mustParseFlags(t, &out, args)
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	banner := out.String()
	for _, want := range []string{"VIOLATING:    version-path-unversioned, list-total-pages-floor", "Base URL:     " + m.Simulator.URL() + "\n", "/partner/webhook\n"} {
		if !strings.Contains(banner, want) {
			t.Fatalf("banner lacks %q:\n%s", want, banner)
		}
	}
	if strings.Contains(m.Simulator.URL(), "/v3") {
		t.Fatalf("URL() = %s", m.Simulator.URL())
	}
}

// TestPortTakenNamesTheFlag: a listener whose port another process holds
// names the flag and the variable to change, for the partner API and for
// the control API (issue 27).
func TestPortTakenNamesTheFlag(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"the partner port", []string{"--addr", taken.Addr().String(), "--admin-addr", "127.0.0.1:0"}, []string{"--addr (the partner API) cannot listen on " + taken.Addr().String(), "--addr or SIM_ADDR"}},
		{"the control port", []string{"--addr", "127.0.0.1:0", "--admin-addr", taken.Addr().String()}, []string{"--admin-addr (the control API) cannot listen on " + taken.Addr().String(), "--admin-addr or SIM_ADMIN_ADDR"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := mustParseFlags(t, io.Discard, append(tt.args, "--data-dir", t.TempDir(), "--campaigns", "0"))
			err := m.Run(context.Background())
			if err == nil {
				m.Close()
				t.Fatal("the simulator started on a taken port")
			}
			defer m.Close()
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// TestDurationWithoutAUnit: --rate-window 10 says to write "10s".
func TestDurationWithoutAUnit(t *testing.T) {
	err := NewMain(&bytes.Buffer{}, &bytes.Buffer{}).ParseFlags(context.Background(), []string{"--rate-window", "10"})
	if err == nil || !strings.Contains(err.Error(), `--rate-window "10": a duration needs a unit: write "10s"`) {
		t.Fatalf("err = %v, want one saying to write \"10s\"", err)
	}
}
