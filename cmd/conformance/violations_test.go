package main

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/partner-v3/conformance-kit/simulator/sim"
	"github.com/partner-v3/conformance-kit/simulator/violation"
	"github.com/partner-v3/conformance-kit/steps/result"
	"github.com/partner-v3/conformance-kit/steps/suite"
)

// runNormative runs the certification profile (the default tags, what a
// vendor runs) against a simulator over its real HTTPS listener; with
// sections, only its scenarios of those sections.
func runNormative(t *testing.T, s *sim.Simulator, sections ...string) *suite.Result {
	t.Helper()
	tags := ""
	if len(sections) > 0 {
		var of []string
		for _, sec := range sections {
			of = append(of, "@spec-"+sec)
		}
		tags = "@normative && " + strings.Join(of, ",")
	}
	cfg := simulatorSuiteConfig(t, s)
	cfg.Tags = tags
	r, err := suite.Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("run the suite: %v", err)
	}
	return r
}

// TestViolationsAreCaught is the suite's self-verification (issue 3): the
// simulator breaks one normative rule at a time (--violate), and the
// certification profile must fail, in a scenario tagged with the section
// the rule belongs to, so that it fails for the right reason. A faithful
// simulator run the same way must pass, or catching would prove nothing.
func TestViolationsAreCaught(t *testing.T) {
	if r := runNormative(t, MustOpenSimulator(t)); r.Verdict != suite.VerdictPass {
		t.Fatalf("the faithful simulator fails the normative profile (%d failed): %v", r.Failed, names(r.FailedScenarios()))
	}
	violations := violation.Catalogue()
	// Issue 9 asks for a catalogue derived systematically, at least 90.
	if len(violations) < 90 {
		t.Fatalf("the catalogue has %d switches, want at least 90", len(violations))
	}
	var caught atomic.Int32
	t.Cleanup(func() { t.Logf("self-verification score: %d/%d violations caught", caught.Load(), len(violations)) })
	for _, vi := range violations {
		v, rule, want := string(vi.Name), vi.Rule, vi.Sections
		t.Run(v, func(t *testing.T) {
			// Each switch has a simulator of its own: they may run side by
			// side.
			t.Parallel()
			if len(want) == 0 {
				t.Fatalf("violation %s names no spec section: %q", v, rule)
			}
			// Only the scenarios of the switch's sections: the ones that must
			// catch it.
			r := runNormative(t, MustOpenSimulator(t, v), want...)
			if r.Verdict != suite.VerdictFail {
				t.Fatalf("NOT CAUGHT: the suite passes a simulator that breaks %s", rule)
			}
			var right []*result.ScenarioResult
			for _, sc := range r.FailedScenarios() {
				if slices.ContainsFunc(sc.FailureSections(), func(s string) bool { return slices.Contains(want, s) }) {
					right = append(right, sc)
				}
			}
			if len(right) == 0 {
				t.Fatalf("caught for the wrong reason: %s broken, but the failed scenarios are of other sections: %v",
					rule, names(r.FailedScenarios()))
			}
			caught.Add(1)
			t.Logf("caught %s by %q (%s)", rule, right[0].Title(), result.SectionList(right[0].FailureSections()))
		})
	}
}

func names(scs []*result.ScenarioResult) []string {
	out := make([]string, 0, len(scs))
	for _, sc := range scs {
		out = append(out, sc.Name+" [§"+strings.Join(sc.Sections, ", §")+"]")
	}
	return out
}
