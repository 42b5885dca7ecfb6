package main

import (
	"context"
	"crypto/tls"
	"errors"
	"os"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/partner-v3/conformance-kit/simulator/sim"
	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/simulator/violation"
	"github.com/partner-v3/conformance-kit/steps/matrix"
	"github.com/partner-v3/conformance-kit/steps/result"
	"github.com/partner-v3/conformance-kit/steps/suite"
)

// runRule runs the normative scenarios of one matrix rule against an
// in-process simulator with the given switches on.
func runRule(t *testing.T, rule string, violations ...string) *suite.Result {
	t.Helper()
	r, err := tryRule(t, rule, violations...)
	if err != nil {
		t.Fatalf("run the suite: %v", err)
	}
	return r
}

// tryRule is runRule that returns the run's error.
func tryRule(t *testing.T, rule string, violations ...string) (*suite.Result, error) {
	t.Helper()
	network := matrix.RuleByID(rule).Network
	cfg := sim.Config{Insecure: !network, DataDir: t.TempDir(), AdminToken: "test-admin-token", Violations: violations}
	if network {
		cfg.Addr, cfg.AdminAddr = "127.0.0.1:0", "127.0.0.1:0"
	}
	s, err := sim.New(context.Background(), cfg)
	if err != nil {
		t.Fatalf("new simulator: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	as := devAccounts(t)
	run := suite.Config{
		AdminToken: "test-admin-token",
		Primary:    as[0].credentials(),
		Second:     as[1].credentials(),
		Tags:       "@normative && " + matrix.Tag(rule),
		NoProfile:  true,
	}
	if network {
		// The rule's cells live in connections: over HTTPS on loopback.
		if err := s.Open(); err != nil {
			t.Fatalf("open simulator: %v", err)
		}
		run.BaseURL, run.AdminURL = s.URL(), s.AdminURL()
		run.TLSConfig = &tls.Config{RootCAs: certPool(t, s.Cert.CertFile)}
	} else {
		run.Handler, run.AdminHandler = s.Handler(), s.AdminHandler()
	}
	return suite.Run(context.Background(), run)
}

// TestMatrixCellsHaveSwitches: every cell of the matrix has a violation
// switch of its own, and every generated switch is a cell's.
func TestMatrixCellsHaveSwitches(t *testing.T) {
	want := map[string]bool{}
	n := 0
	for _, r := range matrix.Matrix() {
		for _, c := range r.Cells() {
			n++
			name := matrix.CellSwitch(c)
			want[name] = true
			v, ok := violation.Lookup(name)
			if !ok {
				t.Errorf("cell %s has no switch %s", c, name)
				continue
			}
			if !slices.Equal(v.Sections, r.Sections) {
				t.Errorf("switch %s breaks sections %v, its rule is of %v", name, v.Sections, r.Sections)
			}
		}
	}
	for _, v := range violation.Cells() {
		if !want[string(v.Name)] {
			t.Errorf("switch %s is no cell of the matrix", v.Name)
		}
	}
	t.Logf("%d cells, each with its switch", n)
}

// TestMatrixCellsAreCaught proves every cell of the matrix: the rule's
// scenarios pass against a faithful simulator, and fail, in a section of
// the rule, against a simulator that breaks the rule in that cell alone.
// MATRIX_SAMPLE=N proves every Nth cell of each rule (and always its first
// and last), for a quicker run; unset, every cell, or every
// matrixSampleRace-th under the race detector (make matrix proves them
// all without it).
func TestMatrixCellsAreCaught(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite once per matrix cell")
	}
	every := matrixSample
	if v, err := strconv.Atoi(os.Getenv("MATRIX_SAMPLE")); err == nil && v >= 1 {
		every = v
	}
	var proved, total atomic.Int32
	t.Cleanup(func() { t.Logf("matrix: %d of %d cells proved by their switch", proved.Load(), total.Load()) })
	for _, r := range matrix.Matrix() {
		t.Run(r.ID, func(t *testing.T) {
			t.Parallel()
			if res := runRule(t, r.ID); res.Verdict != suite.VerdictPass {
				t.Fatalf("the faithful simulator fails rule %s (%d failed): %v", r.ID, res.Failed, failures(res))
			}
			cells := r.Cells()
			for i, c := range cells {
				if i%every != 0 && i != len(cells)-1 {
					continue
				}
				total.Add(1)
				name := matrix.CellSwitch(c)
				res, err := tryRule(t, r.ID, name)
				if errors.Is(err, suite.ErrPreflight) && c.Rule == "auth-served" && c.Operation == spec.OpCampaignList {
					// The preflight reads Campaign List with each account's
					// credentials: refused there, they are the user's to
					// check (exit 2), never a pass.
					proved.Add(1)
					continue
				}
				if err != nil {
					t.Errorf("%s (switch %s): %v", c, name, err)
					continue
				}
				if res.Verdict != suite.VerdictFail {
					t.Errorf("NOT CAUGHT: %s (switch %s): verdict %s", c, name, res.Verdict)
					continue
				}
				right := false
				for _, sc := range res.FailedScenarios() {
					right = right || slices.ContainsFunc(sc.FailureSections(), func(s string) bool { return slices.Contains(r.Sections, s) })
				}
				if !right {
					t.Errorf("caught for the wrong reason: %s broken, failures %v", c, failures(res))
					continue
				}
				proved.Add(1)
			}
		})
	}
}

func failures(r *suite.Result) []string {
	var out []string
	for _, sc := range r.FailedScenarios() {
		msg := sc.Message
		if len(msg) > 300 {
			msg = msg[:300] + "…"
		}
		out = append(out, sc.Title()+" ["+result.SectionList(sc.FailureSections())+"]: "+msg)
	}
	return out
}
