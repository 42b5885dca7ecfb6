package main

// The verdicts every test of a run against an independent implementation
// asks for: a correct one must pass (wantPass), a defect must be caught in
// the right scenario (wantCaught). A run that proved nothing of §8 (exit 3,
// every try's burst crossed a window boundary) skips a test of a correct
// implementation or of a defect of §8, and misses any other defect.

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/steps/matrix"
	"github.com/partner-v3/conformance-kit/steps/result"
)

// altTable runs a table of n rows against alternative implementations:
// one run per row, all started at once (startAltRuns), each checked in a
// parallel subtest. row gives row i's subtest name and target; check gets
// the row's index and its run.
func altTable(t *testing.T, n int, row func(i int) (string, altTarget), check func(t *testing.T, i int, r altRun)) {
	t.Helper()
	names, targets := make([]string, n), make([]altTarget, n)
	for i := range n {
		names[i], targets[i] = row(i)
	}
	runs := startAltRuns(t, targets)
	for i, name := range names {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			check(t, i, <-runs[i])
		})
	}
}

// wantPass: r is a run against a correct implementation. It must pass
// (exit 0) with no scenario skipped.
func wantPass(t *testing.T, r altRun) {
	t.Helper()
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.code == exitIncomplete {
		t.Skipf("a burst crossed a window boundary %d times, nothing proven: %s", r.attempts, r.inconclusive())
	}
	if r.code != exitPass {
		var why []string
		for _, sc := range r.res.FailedScenarios() {
			why = append(why, fmt.Sprintf("%s (%s): %s", sc.Title(), result.SectionList(sc.FailureSections()), firstLine(sc.Message)))
		}
		t.Fatalf("exit status %d, want 0: the suite failed a correct implementation in:\n  %s", r.code, strings.Join(why, "\n  "))
	}
	for _, sc := range r.res.Scenarios {
		if sc.Status == result.StatusSkipped {
			t.Errorf("scenario %q skipped: %s", sc.Title(), sc.Message)
		}
	}
}

// altCatch is where a defect must be caught: in a failed scenario of rule
// (any rule when empty) that fails in one of sections (any section when
// empty).
type altCatch struct {
	rule     string
	sections []string
}

// catches says whether the failed scenario sc is one where the defect
// must be caught.
func (c altCatch) catches(sc *result.ScenarioResult) bool {
	if c.rule != "" && !slices.Contains(sc.Tags, matrix.Tag(c.rule)) {
		return false
	}
	return len(c.sections) == 0 || slices.ContainsFunc(sc.FailureSections(), func(s string) bool { return slices.Contains(c.sections, s) })
}

// ofSection8 says whether the defect is one of §8, which a run that could
// not decide §8 (exit 3) neither catches nor misses.
func (c altCatch) ofSection8() bool {
	return slices.Contains(c.sections, "8") || strings.HasPrefix(c.rule, "rate-")
}

// String says where, in words ("the scenario of rule framing failing in
// §4").
func (c altCatch) String() string {
	where := "a scenario"
	if c.rule != "" {
		where = "the scenario of rule " + c.rule
	}
	if len(c.sections) > 0 {
		where += " failing in " + result.SectionList(c.sections)
	}
	return where
}

// wantCaught: r is a run against an implementation with a defect (defect
// says which, and the sentence it breaks). It must fail (exit 1), and in a
// scenario where c says it is caught; the other failures are logged. It
// returns the scenarios that caught it ("title (sections)"), none when the
// test failed.
func wantCaught(t *testing.T, r altRun, defect string, c altCatch) []string {
	t.Helper()
	if r.err != nil {
		t.Fatal(r.err)
	}
	if n := len(r.res.BudgetWaits); n > 0 {
		t.Logf("the run met %d 429s it did not expect and waited them out as a budget spent before the request", n)
	}
	if r.code == exitIncomplete {
		if c.ofSection8() {
			t.Skipf("a burst crossed a window boundary on every try, nothing proven: %s", r.inconclusive())
		}
		// Exit 3 is "nothing failed": a defect outside §8 was let through
		// whatever became of the §8 proof.
		t.Errorf("NOT CAUGHT: %s; no scenario failed (the run was incomplete: %s)", defect, r.inconclusive())
		return nil
	}
	if r.code == exitPass {
		t.Errorf("NOT CAUGHT: %s; the run passed (%d scenarios, %s, attempt %d)", defect, r.res.Passed, r.took.Round(time.Millisecond), r.attempts)
		return nil
	}
	if r.code != exitFail {
		t.Fatalf("exit status %d, want 1\n%s", r.code, r.out)
	}
	var by, other []string
	for _, sc := range r.res.FailedScenarios() {
		line := fmt.Sprintf("%s (%s)", sc.Title(), result.SectionList(sc.FailureSections()))
		if c.catches(sc) {
			by = append(by, line)
		} else {
			other = append(other, line+": "+firstLine(sc.Message))
		}
	}
	if len(other) > 0 {
		t.Logf("failed for other reasons too:\n  %s", strings.Join(other, "\n  "))
	}
	if len(by) == 0 {
		t.Errorf("NOT CAUGHT: %s; the run failed, but not in %s", defect, c)
		return nil
	}
	t.Logf("caught in %s (attempt %d) by:\n  %s", r.took.Round(time.Millisecond), r.attempts, strings.Join(by, "\n  "))
	return by
}
