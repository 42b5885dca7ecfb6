package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/partner-v3/conformance-kit/fixtures"
	"github.com/partner-v3/conformance-kit/simulator/sim"
	"github.com/partner-v3/conformance-kit/steps"
)

// devAccount is one entry of fixtures/accounts.json.
type devAccount struct {
	APIKey    string `json:"apiKey"`
	APISecret string `json:"apiSecret"`
	AccountID string `json:"accountId"`
}

func devAccounts(tb testing.TB) []devAccount {
	tb.Helper()
	var as []devAccount
	if err := json.Unmarshal(fixtures.Accounts, &as); err != nil {
		tb.Fatalf("decode fixtures/accounts.json: %v", err)
	}
	if len(as) < 2 {
		tb.Fatalf("fixtures/accounts.json has %d accounts, the suite's tests need 2", len(as))
	}
	return as
}

// MustOpenSimulator starts a simulator over HTTPS on 127.0.0.1 with its
// control API, and closes it when the test ends.
func MustOpenSimulator(tb testing.TB, violations ...string) *sim.Simulator {
	tb.Helper()
	s, err := sim.New(context.Background(), sim.Config{
		Addr:       "127.0.0.1:0",
		AdminAddr:  "127.0.0.1:0",
		DataDir:    tb.TempDir(),
		AdminToken: "test-admin-token",
		Violations: violations,
	})
	if err != nil {
		tb.Fatalf("new simulator: %v", err)
	}
	if err := s.Open(); err != nil {
		tb.Fatalf("open simulator: %v", err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("close simulator: %v", err)
		}
	})
	return s
}

// simulatorArgs are the runner flags for a simulator: both accounts, its
// certificate, its control API.
func simulatorArgs(tb testing.TB, s *sim.Simulator) []string {
	as := devAccounts(tb)
	return []string{
		"--base-url", s.URL(),
		"--api-key", as[0].APIKey, "--api-secret", as[0].APISecret, "--account-id", as[0].AccountID,
		"--second-api-key", as[1].APIKey, "--second-api-secret", as[1].APISecret, "--second-account-id", as[1].AccountID,
		"--ca-cert", s.Cert.CertFile,
		"--admin-url", s.AdminURL(), "--admin-token", "test-admin-token",
		"--no-colors",
	}
}

func readSummary(tb testing.TB, dir string) *steps.Result {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		tb.Fatalf("read summary: %v", err)
	}
	var r steps.Result
	if err := json.Unmarshal(b, &r); err != nil {
		tb.Fatalf("decode summary: %v", err)
	}
	return &r
}

// TestRunSimulator runs every normative and simulator-choice scenario
// against a spec-faithful simulator: all must pass, none may skip (the
// simulator has campaigns, two accounts and a control API).
func TestRunSimulator(t *testing.T) {
	s := MustOpenSimulator(t)
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	args := append(simulatorArgs(t, s), "--tags", "@normative,@simulator", "--format", "progress,junit,cucumber", "--report-dir", dir)
	code := run(context.Background(), args, &stdout, &stderr)
	if code != exitPass {
		t.Fatalf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitPass, stdout.String(), stderr.String())
	}
	r := readSummary(t, dir)
	if r.Verdict != steps.VerdictPass || r.Failed != 0 {
		t.Fatalf("verdict %s with %d failed, want pass", r.Verdict, r.Failed)
	}
	for _, sc := range r.Scenarios {
		if sc.Status == steps.StatusSkipped {
			t.Errorf("scenario %q skipped against the simulator: %s", sc.Name, sc.Message)
		}
	}
	for _, f := range []string{"junit.xml", "cucumber.json", "progress.txt", "summary.md"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("report file %s missing or empty: %v", f, err)
		}
	}
	t.Logf("%d scenarios passed, %d requests, %s", r.Passed, r.Requests, r.Duration)
	if !strings.Contains(stdout.String(), "PASS") {
		t.Errorf("stdout does not end with the verdict:\n%s", stdout.String())
	}
}
