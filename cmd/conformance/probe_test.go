package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/simulator/sim"
	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/probe"
	"github.com/partner-v3/conformance-kit/steps/suite"
)

// TestDiffProbe is the client-eye comparison (issue 28) end to end with
// the real command, on each fidelity target: learn its profile, start a
// simulator playing it, and run conformance diff --probe TARGET SIMULATOR:
// every request class must be answered alike (docs/fidelity.md). And the
// instrument itself: a second simulator playing the same profile answers
// every probe as the first does (exit 0), and one playing it with a
// message changed on purpose is caught there, and only there (exit 1).
func TestDiffProbe(t *testing.T) {
	waitsForWindows(t)
	accounts := altAccounts(t)
	for _, tg := range fidelityTargets(accounts) {
		t.Run(tg.name, func(t *testing.T) {
			t.Parallel()
			srv := serveTLS(t, tg.h, tg.http2)
			targetURL := srv.URL + spec.BasePath
			p := learnTargetProfile(t, suite.Config{BaseURL: targetURL, TLSConfig: trust(srv.Certificate()),
				Primary: accounts[0], RateLimit: altLimit, RateWindow: fidelityWindow})
			s := openProfiled(t, p)
			// The second account: learning spent the first one's budget.
			a := accounts[1]
			code, rep, out := probeRun(t, []string{targetURL, "--ca-cert", writeCert(t, srv)}, s, a)
			if code != diffAgree && code != diffDiffer {
				t.Fatalf("diff --probe TARGET SIMULATOR: exit %d, want 0 or 1\n%s", code, out)
			}
			if got, want := rep.Total, len(probe.Probes()); got != want {
				t.Fatalf("diff --probe compared %d request classes, want %d", got, want)
			}
			la, l, oa, o := rep.Counts()
			t.Logf("client-eye agreement of the simulator playing the target's profile: %d/%d (learned from %d/%d, others %d/%d); exit %d; %d requests per side",
				rep.Agree, rep.Total, la, l, oa, o, code, rep.Sides[0].Sent)
			for _, res := range rep.Results {
				if len(res.Differences) > 0 {
					t.Logf("  differs: %s: %s", res.Name, strings.Join(res.Differences, "; "))
				}
			}
			if (code == diffAgree) != rep.Agreed() {
				t.Errorf("exit %d with agreement %d/%d", code, rep.Agree, rep.Total)
			}
			// Issue 28: the simulator playing a deployment's profile
			// answers every request class as the deployment does.
			if !rep.Agreed() {
				t.Errorf("the simulator playing the target's profile agrees on %d of %d request classes, want every one (the differences are logged above)", rep.Agree, rep.Total)
			}

			twin := openProfiled(t, p)
			code, rep, out = probeRun(t, simSide(twin), s, a)
			if code != diffAgree || !rep.Agreed() {
				t.Errorf("two simulators playing one profile: exit %d, agreement %d/%d, want every request alike\n%s", code, rep.Agree, rep.Total, out)
			}

			planted := clone(t, p)
			const msg = "planted: the instrument must see this message"
			planted.HTTP.UnknownPath.Value.Message = msg
			changed := openProfiled(t, planted)
			code, rep, out = probeRun(t, simSide(changed), s, a)
			if code != diffDiffer {
				t.Fatalf("a simulator with a message changed on purpose: exit %d, want %d\n%s", code, diffDiffer, out)
			}
			for _, res := range rep.Results {
				d := strings.Join(res.Differences, "; ")
				switch {
				case res.Name == "http.unknownPath" && !strings.Contains(d, msg):
					t.Errorf("the planted message is not among http.unknownPath's differences: %q", d)
				case d != "" && (len(res.Differences) != 1 || !strings.HasPrefix(d, "message: A \""+msg)):
					t.Errorf("%s differs otherwise than in the planted message: %s", res.Name, d)
				}
			}
		})
	}
}

// TestDiffProbeUsage: --probe needs two live sides that answer with the
// credentials given; anything else is exit 2 saying what to fix.
func TestDiffProbeUsage(t *testing.T) {
	t.Parallel()
	s := MustOpenSimulator(t)
	a := devAccounts(t)[0]
	creds := func(prefix string, key string) []string {
		return []string{"--" + prefix + "api-key", key, "--" + prefix + "api-secret", a.APISecret, "--" + prefix + "account-id", a.AccountID,
			"--" + prefix + "ca-cert", s.Cert.CertFile}
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"a profile file is no live side", append([]string{"diff", "--probe", "default", s.URL()}, creds("", a.APIKey)...), "two base URLs"},
		{"no HTML page", append(append([]string{"diff", "--probe", "--html", "x.html", s.URL(), s.URL()}, creds("", a.APIKey)...), creds("b-", a.APIKey)...), "--json or --report-dir"},
		{"side B without credentials", append([]string{"diff", "--probe", s.URL(), s.URL()}, creds("", a.APIKey)...), "--b-api-key"},
		{"side B's key refused", append(append([]string{"diff", "--probe", s.URL(), s.URL()}, creds("", a.APIKey)...), creds("b-", "not-a-key")...), "side B"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tt.args, &stdout, &stderr)
			if code != diffNotRun || !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("exit %d, want %d with %q in\n%s", code, diffNotRun, tt.want, stderr.String())
			}
		})
	}
}

// probeRun runs conformance diff --probe A SIMULATOR as account a, where
// a is A's base URL and its TLS flags, and reads its probe.json.
func probeRun(t *testing.T, a []string, b *sim.Simulator, acct control.Credentials) (int, *probe.Report, string) {
	t.Helper()
	dir := t.TempDir()
	args := append([]string{"diff", "--probe", "--all", "--report-dir", dir}, a...)
	args = append(args, b.URL(), "--b-ca-cert", b.Cert.CertFile,
		"--api-key", acct.APIKey, "--api-secret", acct.APISecret, "--account-id", acct.AccountID,
		"--b-api-key", acct.APIKey, "--b-api-secret", acct.APISecret, "--b-account-id", acct.AccountID,
		"--rate-limit", fmt.Sprint(altLimit), "--rate-window", fidelityWindow.String(),
		"--b-rate-limit", fmt.Sprint(altLimit), "--b-rate-window", fidelityWindow.String())
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, &stdout, &stderr)
	out := stdout.String() + stderr.String()
	rep := &probe.Report{}
	if code == diffNotRun {
		return code, rep, out
	}
	b2, err := os.ReadFile(filepath.Join(dir, "probe.json"))
	if err != nil {
		t.Fatalf("probe.json: %v\n%s", err, out)
	}
	if err := json.Unmarshal(b2, rep); err != nil {
		t.Fatalf("probe.json: %v", err)
	}
	if !strings.Contains(stdout.String(), fmt.Sprintf("agreement %d/%d", rep.Agree, rep.Total)) {
		t.Errorf("stdout does not state the agreement %d/%d:\n%s", rep.Agree, rep.Total, stdout.String())
	}
	return code, rep, out
}

// simSide is a simulator as side A of probeRun.
func simSide(s *sim.Simulator) []string {
	return []string{s.URL(), "--ca-cert", s.Cert.CertFile}
}

// clone is a deep copy of p.
func clone(t *testing.T, p *profile.Profile) *profile.Profile {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var c profile.Profile
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return &c
}
