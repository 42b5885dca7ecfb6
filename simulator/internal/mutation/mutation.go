//go:build mutation

// Package mutation makes the conformance suite the test of a mutation
// testing run (make mutation, docs/mutation.md). Gremlins mutates one
// package of the simulator at a time and runs `go test -tags mutation` on
// that package; the only test the tag adds there, and the only one the run
// selects (GOFLAGS=-run=^TestMutationSuite$), calls Suite. A mutant is
// killed when the suite, run against the mutated simulator, does not pass.
//
// It is the one package under simulator/ that imports the suite (steps):
// a test harness that joins the two halves, as cmd/conformance's tests do,
// but which the mutated packages' own tests must be able to import (gremlins
// runs `go test` on the package it mutates). It is behind the mutation
// build tag, so no build of the simulator ever links it; make mutation vets
// it with the tag.
package mutation

import (
	"context"
	"strings"
	"testing"

	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/simulator/simtest"
	"github.com/partner-v3/conformance-kit/steps/result"
	"github.com/partner-v3/conformance-kit/steps/suite"
)

// Tags selects what TestRunSimulator in cmd/conformance runs: the normative
// scenarios and the simulator's own (the control API's faults, throwaway
// accounts, its stated choices where the spec is silent).
const Tags = "@normative,@simulator"

// Suite starts a simulator in-process over HTTPS on 127.0.0.1 (simtest, the
// same code as the simulator binary, in memory) and runs the suite's
// normative and simulator scenarios against it, in file order so that a
// mutant meets the same requests every time. It fails t when the suite does
// not run, does not pass, or skips a scenario: TestRunSimulator's standard,
// since against the simulator nothing should skip, and a skipped normative
// scenario withholds the certification.
func Suite(t *testing.T) {
	t.Helper()
	s := simtest.New(t)
	if len(s.Accounts) < 2 {
		t.Fatalf("the simulator has %d accounts, the suite needs 2", len(s.Accounts))
	}
	a, b := s.Accounts[0], s.Accounts[1]
	r, err := suite.Run(context.Background(), suite.Config{
		BaseURL:    s.URL,
		TLSConfig:  s.TLSConfig(),
		Primary:    control.Credentials{APIKey: a.APIKey, APISecret: a.APISecret, AccountID: a.AccountID},
		Second:     control.Credentials{APIKey: b.APIKey, APISecret: b.APISecret, AccountID: b.AccountID},
		AdminURL:   s.AdminURL,
		AdminToken: s.AdminToken,
		Tags:       Tags,
	})
	if err != nil {
		t.Fatalf("the suite did not run: %v", err)
	}
	if r.Verdict != suite.VerdictPass {
		var failed []string
		for _, sc := range r.FailedScenarios() {
			failed = append(failed, sc.Name+" [§"+strings.Join(sc.Sections, ", §")+"]")
		}
		t.Fatalf("verdict %s: %d scenarios failed: %s", r.Verdict, r.Failed, strings.Join(failed, "; "))
	}
	var skipped []string
	for _, sc := range r.Scenarios {
		if sc.Status == result.StatusSkipped {
			skipped = append(skipped, sc.Name+": "+sc.Message)
		}
	}
	if len(skipped) > 0 {
		t.Fatalf("verdict %s, but %d scenarios skipped: %s", r.Verdict, len(skipped), strings.Join(skipped, "; "))
	}
	t.Logf("%d scenarios passed, %d requests, %s", r.Passed, r.Requests, r.Duration)
}
