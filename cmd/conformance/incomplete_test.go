package main

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator/sim"
	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps"
	"github.com/partner-v3/conformance-kit/steps/result"
	"github.com/partner-v3/conformance-kit/steps/suite"
)

// TestUndecidedRateLimitIsIncomplete: a target so slow that the bursts of
// §8 always take longer than its window cannot show whether it enforces
// the limit. The suite tries again after a fresh window, then says the rule
// was not verified: verdict incomplete, exit status 3, never a pass.
func TestUndecidedRateLimitIsIncomplete(t *testing.T) {
	s, err := sim.New(context.Background(), sim.Config{Insecure: true, DataDir: t.TempDir(), AdminToken: "test-admin-token",
		RateLimit: 10, RateWindow: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	h := s.Handler()
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(20 * time.Millisecond) // 26 requests a try: 0.5 s, longer than the window
		h.ServeHTTP(w, r)
	})
	as := devAccounts(t)
	res, err := suite.Run(context.Background(), suite.Config{
		Handler: slow, AdminHandler: s.AdminHandler(), AdminToken: "test-admin-token",
		Primary:   as[0].credentials(),
		Second:    as[1].credentials(),
		Tags:      "@normative && @rule-rate-shared",
		NoProfile: true,
	})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if res.Verdict != suite.VerdictIncomplete || exitStatus(res) != exitIncomplete {
		t.Fatalf("verdict %s (exit %d), want %s (exit %d)", res.Verdict, exitStatus(res), suite.VerdictIncomplete, exitIncomplete)
	}
	if res.Certification {
		t.Error("an incomplete run is a certification")
	}
	sc := res.Scenarios[0]
	if sc.Status != result.StatusInconclusive || sc.Retries != steps.MaxBurstAttempts-1 {
		t.Fatalf("scenario %s after %d retries, want inconclusive after %d: %s", sc.Status, sc.Retries, steps.MaxBurstAttempts-1, sc.Message)
	}
	if !strings.Contains(sc.Message, "longer than the") || !strings.Contains(strings.Join(res.Caveats, "\n"), "not verified") {
		t.Errorf("message %q, caveats %q: want why, and that the rule was not verified", sc.Message, res.Caveats)
	}
	var md strings.Builder
	if err := res.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "INCOMPLETE") {
		t.Errorf("the summary does not say INCOMPLETE:\n%s", md.String())
	}
}

// TestExitStatusOfEachVerdict: the runner's exit statuses, as --help
// documents them.
func TestExitStatusOfEachVerdict(t *testing.T) {
	for verdict, want := range map[string]int{suite.VerdictPass: exitPass, suite.VerdictFail: exitFail, suite.VerdictIncomplete: exitIncomplete} {
		if got := exitStatus(&suite.Result{Verdict: verdict}); got != want {
			t.Errorf("verdict %s: exit %d, want %d", verdict, got, want)
		}
	}
}

// TestWithoutSecondAccountCellsAreUnverified: a run without a second
// account checks every cell of the primary's, lists the second account's
// as not checked, and is no certification for it.
func TestWithoutSecondAccountCellsAreUnverified(t *testing.T) {
	res := runInProcess(t, 0, "@normative && @rule-auth-key", false)
	if res.Verdict != suite.VerdictPass || res.Certification {
		t.Fatalf("verdict %s, certification %v: want a pass that is no certification", res.Verdict, res.Certification)
	}
	// The second account's 3 × 18 cells, and the primary's 3 with the
	// other account's value.
	u := res.Scenarios[0].Unverified
	if len(u) != 3*18+3 {
		t.Fatalf("%d unverified cells, want 57: %q", len(u), u)
	}
	for _, c := range u {
		if !strings.Contains(c, "second account") && !strings.Contains(c, "no other account") {
			t.Errorf("unverified cell %q is not for want of a second account", c)
		}
	}
	if !strings.Contains(strings.Join(res.Caveats, "\n"), "57 cells of the matrix were not checked") {
		t.Errorf("caveats %q do not count the unverified cells", res.Caveats)
	}
	var md strings.Builder
	if err := res.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "## Cells of the matrix not checked") {
		t.Error("the summary does not list the cells not checked")
	}
}

// TestTinyLimitLeavesInFlightCellsUnverified: a limit too small to leave
// room for requests in flight together in the second proof's window sends
// none of the primary account's: its cells of rule rate-concurrent are
// listed as not checked, never passed in silence.
func TestTinyLimitLeavesInFlightCellsUnverified(t *testing.T) {
	res := runInProcess(t, 8, "@normative && @rule-rate-concurrent", true)
	var u []string
	for _, sc := range res.Scenarios {
		u = append(u, sc.Unverified...)
	}
	for _, op := range spec.Names() {
		want := "rate-concurrent: " + op + ", primary account, requests in flight at the same time: the run's limit of 8"
		if !slices.ContainsFunc(u, func(c string) bool { return strings.HasPrefix(c, want) }) {
			t.Errorf("no unverified cell %q among %q", want, u)
		}
	}
	if res.Certification {
		t.Error("a run that left cells unchecked is a certification")
	}
}

// runInProcess runs the scenarios tags selects against an in-process
// simulator with its control API, whose limit is limit per window (0: the
// spec's), with the primary development account and, when second, the
// other one too.
func runInProcess(t *testing.T, limit int, tags string, second bool) *suite.Result {
	t.Helper()
	s, err := sim.New(context.Background(), sim.Config{Insecure: true, DataDir: t.TempDir(), AdminToken: "test-admin-token", RateLimit: limit})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	as := devAccounts(t)
	cfg := suite.Config{
		Handler: s.Handler(), AdminHandler: s.AdminHandler(), AdminToken: "test-admin-token",
		Primary:   as[0].credentials(),
		Tags:      tags,
		NoProfile: true,
	}
	if second {
		cfg.Second = as[1].credentials()
	}
	res, err := suite.Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return res
}
