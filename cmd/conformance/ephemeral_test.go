package main

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"net/http"
	"os/exec"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/steps/result"
	"github.com/partner-v3/conformance-kit/steps/suite"
)

// TestEphemeralAccountsSideBySide runs two runner processes at once
// against one simulator, each with --ephemeral-accounts: each makes its own
// primary and second accounts, so neither spends the other's budget (spec
// §8: one counter per account), injects a fault the other's request takes,
// or moves the other's rate-limit window. Both must pass every normative
// and simulator scenario, none skipped; afterwards the throwaway accounts
// are gone and the configured ones were never used.
func TestEphemeralAccountsSideBySide(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the runner and runs it twice")
	}
	s := MustOpenSimulator(t)
	runner := buildBinary(t, t.TempDir(), "./cmd/conformance")
	type outcome struct {
		code           int
		stdout, stderr bytes.Buffer
		dir            string
	}
	runs := make([]*outcome, 2)
	var wg sync.WaitGroup
	for i := range runs {
		o := &outcome{dir: t.TempDir()}
		runs[i] = o
		cmd := exec.Command(runner,
			"--base-url", s.URL(), "--ca-cert", s.Cert.CertFile,
			"--admin-url", s.AdminURL(), "--admin-token", "test-admin-token",
			"--ephemeral-accounts", "--tags", "@normative,@simulator", "--random", "-1",
			"--format", "progress", "--report-dir", o.dir, "--no-colors")
		cmd.Stdout, cmd.Stderr = &o.stdout, &o.stderr
		wg.Go(func() {
			_ = cmd.Run()
			o.code = cmd.ProcessState.ExitCode()
		})
	}
	wg.Wait()
	made := regexp.MustCompile(`made throwaway (primary|second) account (\S+)`)
	seen := map[string]bool{}
	for i, o := range runs {
		if o.code != exitPass {
			t.Fatalf("run %d: exit status %d, want 0\nstdout:\n%s\nstderr:\n%s", i+1, o.code, o.stdout.String(), o.stderr.String())
		}
		r := readSummary(t, o.dir)
		if r.Verdict != suite.VerdictPass || r.Failed != 0 {
			t.Errorf("run %d: verdict %s with %d failed, want pass", i+1, r.Verdict, r.Failed)
		}
		for _, sc := range r.Scenarios {
			if sc.Status == result.StatusSkipped {
				t.Errorf("run %d: scenario %q skipped: %s", i+1, sc.Name, sc.Message)
			}
		}
		t.Logf("run %d: %d scenarios passed, %d requests, %s", i+1, r.Passed, r.Requests, r.Duration.Round(time.Millisecond))
		m := made.FindAllStringSubmatch(o.stderr.String(), -1)
		if len(m) != 2 {
			t.Fatalf("run %d: made %d throwaway accounts, want 2\nstderr:\n%s", i+1, len(m), o.stderr.String())
		}
		for _, mm := range m {
			if seen[mm[2]] {
				t.Errorf("account %s was made by both runs", mm[2])
			}
			seen[mm[2]] = true
		}
		if got := regexp.MustCompile(`deleted throwaway account`).FindAllString(o.stderr.String(), -1); len(got) != 2 {
			t.Errorf("run %d: deleted %d throwaway accounts, want 2\nstderr:\n%s", i+1, len(got), o.stderr.String())
		}
	}

	// What the simulator holds afterwards: the configured accounts only,
	// none of them used by either run.
	admin := func(path string, out any) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, s.AdminURL()+path, nil)
		req.Header.Set("Authorization", "Bearer test-admin-token")
		client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: certPool(t, s.Cert.CertFile)}}}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: status %d", path, resp.StatusCode)
		}
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
	}
	var accounts struct {
		Accounts []struct {
			AccountID string `json:"accountId"`
			Throwaway bool   `json:"throwaway"`
		} `json:"accounts"`
	}
	admin("/accounts", &accounts)
	configured := map[string]bool{}
	for _, a := range devAccounts(t) {
		configured[a.AccountID] = true
	}
	if len(accounts.Accounts) != len(configured) {
		t.Errorf("%d accounts left after the runs, want the %d configured ones: %+v", len(accounts.Accounts), len(configured), accounts.Accounts)
	}
	for _, a := range accounts.Accounts {
		if a.Throwaway || !configured[a.AccountID] {
			t.Errorf("account %s (throwaway %v) left after the runs", a.AccountID, a.Throwaway)
		}
	}
	var journal struct {
		Entries []struct {
			AccountID string `json:"accountId"`
		} `json:"entries"`
	}
	admin("/journal?limit=1000", &journal)
	for _, e := range journal.Entries {
		if configured[e.AccountID] {
			t.Fatalf("a configured account (%s) was used by a run with throwaway accounts", e.AccountID)
		}
	}
}
