package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/steps/result"
	"github.com/partner-v3/conformance-kit/steps/suite"
)

// buildBinary builds a command of this module into dir.
func buildBinary(tb testing.TB, dir, pkg string) string {
	tb.Helper()
	out := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, pkg)
	cmd.Dir = "../.."
	if b, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	return out
}

// startSimulator starts the simulator binary and returns its base URL and
// certificate path, read from its start banner.
func startSimulator(tb testing.TB, bin string, args ...string) (baseURL, certFile string) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatalf("simulator stdout: %v", err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start simulator: %v", err)
	}
	tb.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	found := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if v, ok := strings.CutPrefix(line, "Base URL:"); ok {
				baseURL = strings.TrimSpace(v)
			}
			if v, ok := strings.CutPrefix(line, "Certificate:"); ok {
				certFile = strings.TrimSpace(v)
			}
			if baseURL != "" && certFile != "" {
				close(found)
				_, _ = bufio.NewReader(stdout).WriteTo(discard{})
				return
			}
		}
	}()
	select {
	case <-found:
	case <-time.After(30 * time.Second):
		tb.Fatalf("the simulator printed no base URL and certificate\nstderr:\n%s", stderr.String())
	}
	return baseURL, certFile
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// TestBlackBox builds the simulator and the runner, starts the simulator as
// a process with a short rate-limit window, and runs the runner binary
// against it with the normative profile and no control API: the run must
// pass, having paced itself (it sends more requests than one window allows)
// and waited for windows in the rate-limit scenarios.
func TestBlackBox(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs two binaries")
	}
	// Mostly waiting for rate-limit windows: let the other waiting tests
	// run meanwhile.
	t.Parallel()
	bin := t.TempDir()
	simBin := buildBinary(t, bin, "./cmd/simulator")
	runner := buildBinary(t, bin, "./cmd/conformance")
	baseURL, cert := startSimulator(t, simBin,
		"--addr", "127.0.0.1:0", "--admin-addr", "", "--data-dir", t.TempDir(),
		"--rate-limit", "100", "--rate-window", "2s", "--log-level", "error")

	as := devAccounts(t)
	report := t.TempDir()
	cmd := exec.Command(runner,
		"--base-url", baseURL, "--ca-cert", cert,
		"--second-api-key", as[1].APIKey, "--second-api-secret", as[1].APISecret, "--second-account-id", as[1].AccountID,
		"--rate-limit", "100", "--rate-window", "2s",
		"--format", "progress,junit", "--report-dir", report, "--no-colors")
	// The primary account comes from the environment, as a CI job would
	// pass secrets.
	cmd.Env = append(os.Environ(),
		"CONFORMANCE_API_KEY="+as[0].APIKey,
		"CONFORMANCE_API_SECRET="+as[0].APISecret,
		"CONFORMANCE_ACCOUNT_ID="+as[0].AccountID,
	)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != exitPass {
		t.Fatalf("runner exit status %d (%v), want 0\nstdout:\n%s\nstderr:\n%s", code, err, stdout.String(), stderr.String())
	}
	r := readSummary(t, report)
	if r.Verdict != suite.VerdictPass {
		t.Fatalf("verdict %q, want pass", r.Verdict)
	}
	if r.Certification {
		t.Errorf("a run with --rate-limit 100 --rate-window 2s reported itself a certification")
	}
	for _, sc := range r.Scenarios {
		if sc.Status == result.StatusSkipped {
			t.Errorf("normative scenario %q skipped: %s", sc.Name, sc.Message)
		}
	}
	if r.Requests <= 20 {
		t.Fatalf("%d requests: too few to exercise pacing at 20 per window", r.Requests)
	}
	if !strings.Contains(stderr.String(), "conformance: pacing: waiting") {
		t.Errorf("the runner never paced itself although it sent %d requests at 20 per 2s\nstderr:\n%s", r.Requests, stderr.String())
	}
	// The deployment profile (issue 20), learned without the control API:
	// windows waited for.
	p, err := profile.Load(filepath.Join(report, "profile.json"))
	switch {
	case err != nil:
		t.Errorf("profile.json: %v", err)
	case p.Rate.Window.Value != profile.WindowSliding || r.ProfileDigest == "":
		t.Errorf("learned window %+v, digest %q: want sliding, and the digest in the summary", p.Rate.Window, r.ProfileDigest)
	}
	t.Logf("black box: %d scenarios passed, %d requests, %s, waited %s", r.Passed, r.Requests, r.Duration.Round(time.Millisecond), r.Waited.Round(time.Millisecond))
}
