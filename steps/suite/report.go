package suite

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/partner-v3/conformance-kit/steps/result"
)

// WriteJSON writes the conformance summary as indented JSON.
func (r *Result) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("write JSON summary: %w", err)
	}
	return nil
}

// Headline is the verdict in words: what a reader must take away first.
func (r *Result) Headline() string {
	switch {
	case r.Verdict == VerdictNotRun:
		return "NOT RUN: the suite did not run, so it says nothing of the target"
	case r.Certification:
		return "PASS: certification"
	case r.Verdict == VerdictPass:
		return "PASS (not a certification, see caveats)"
	case r.Verdict == VerdictIncomplete:
		return "INCOMPLETE: a normative rule could not be verified; run again"
	}
	return "FAIL: the target does not conform"
}

// WriteMarkdown writes the conformance summary for people: the verdict, the
// caveats, a table of spec sections, then each failure, warning and skip.
func (r *Result) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Conformance summary: %s\n\n", r.Spec)
	fmt.Fprintf(&b, "| | |\n|---|---|\n")
	rows := [][2]string{
		{"Verdict", r.Headline()},
		{"Target", r.Target},
		{"Spec version", "v" + r.SpecVersion},
		{"Suite version", r.SuiteVersion},
		{"Suite commit", commitText(r.SuiteCommit)},
		{"Suite source (SHA-256)", "`" + r.Digests.Source + "`"},
		{"Started", r.Started.UTC().Format(time.RFC3339)},
		{"Duration", r.Duration.Round(time.Millisecond).String()},
		{"Tags", "`" + r.Tags + "`"},
		{"Rate limit assumed", fmt.Sprintf("%d per %s", r.RateLimit, r.RateWindow)},
		{"Control API", fmt.Sprint(r.ControlAPI)},
		{"Requests sent", fmt.Sprint(r.Requests)},
		{"Waited for rate-limit windows", r.Waited.Round(time.Second).String()},
		{"Waits for a budget spent before the run", fmt.Sprint(len(r.BudgetWaits))},
		{"Scenarios", fmt.Sprintf("%d passed, %d failed, %d skipped, %d inconclusive; %d warnings", r.Passed, r.Failed, r.Skipped, r.Inconclusive, r.Warnings)},
	}
	if r.NotRun != "" {
		rows = append(rows[:1], append([][2]string{{"Why", r.NotRun}}, rows[1:]...)...)
	}
	for _, kv := range rows {
		fmt.Fprintf(&b, "| %s | %s |\n", kv[0], strings.ReplaceAll(kv[1], "|", `\|`))
	}
	if len(r.Caveats) > 0 {
		b.WriteString("\n## Caveats\n\n")
		for _, c := range r.Caveats {
			fmt.Fprintf(&b, "- %s\n", c)
		}
	}
	if r.Verdict == VerdictNotRun {
		_, err := io.WriteString(w, b.String())
		return err
	}
	b.WriteString("\n## Spec sections\n\n| Section | Title | Passed | Failed | Warnings | Skipped |\n|---|---|---|---|---|---|\n")
	for _, s := range r.Sections {
		fmt.Fprintf(&b, "| §%s | %s | %d | %d | %d | %d |\n", s.ID, sectionTitle(s), s.Passed, s.Failed, s.Warnings, s.Skipped)
	}
	if len(r.BudgetWaits) > 0 {
		b.WriteString("\n## Waits for a budget spent before the run\n\nRequests that do not test §8 met a 429 and were sent again after waiting; never held against the target.\n\n| At | Account | Waited | Based on |\n|---|---|---|---|\n")
		for _, w := range r.BudgetWaits {
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", w.At.UTC().Format(time.RFC3339), w.Account, w.Duration.Round(100*time.Millisecond), w.Reason)
		}
	}
	var failed, skipped []*result.ScenarioResult
	for _, s := range r.Scenarios {
		switch s.Status {
		case result.StatusFailed:
			failed = append(failed, s)
		case result.StatusSkipped, result.StatusInconclusive:
			skipped = append(skipped, s)
		}
	}
	if len(failed) > 0 {
		b.WriteString("\n## Failures\n")
		for _, s := range failed {
			fmt.Fprintf(&b, "\n### FAILURE %s: %s\n\n%s · %s\n\nStep: %s\n\n```\n%s\n```\n", result.SectionList(s.FailureSections()), s.Title(), s.Feature, strings.Join(s.Tags, " "), s.Step, s.Failure.Detail())
		}
	}
	if r.Warnings > 0 {
		b.WriteString("\n## Warnings\n\nWhat the spec allows but a vendor should know; none of them fails the run.\n")
		for _, s := range r.Scenarios {
			for _, w := range s.Warnings {
				// A multi-line warning (a list of cells) keeps its lines: the
				// first in the item, the rest as a block under it.
				first, rest, _ := strings.Cut(strings.TrimRight(w.Message, "\n"), "\n")
				fmt.Fprintf(&b, "\n- **WARNING %s** %s (%s; seen %d×)", result.SectionList(w.Sections), first, s.Title(), w.Count)
				if rest != "" {
					fmt.Fprintf(&b, "\n\n  ```\n  %s\n  ```\n", strings.ReplaceAll(rest, "\n", "\n  "))
				}
			}
		}
		b.WriteString("\n")
	}
	if len(skipped) > 0 {
		b.WriteString("\n## Skipped\n\n")
		for _, s := range skipped {
			fmt.Fprintf(&b, "- %s (%s): %s\n", s.Title(), result.SectionList(s.Sections), s.Message)
		}
	}
	var unverified []string
	for _, s := range r.Scenarios {
		unverified = append(unverified, s.Unverified...)
	}
	if len(unverified) > 0 {
		b.WriteString("\n## Cells of the matrix not checked\n\nThe run's own configuration kept these from being checked, so their rules were not verified there:\n\n")
		for _, u := range unverified {
			fmt.Fprintf(&b, "- %s\n", u)
		}
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write Markdown summary: %w", err)
	}
	return nil
}

// commitText is a suite commit for a report: unknown when the build did
// not record one.
func commitText(c string) string {
	if c == "" {
		return "not recorded by the build"
	}
	return c
}

// sectionTitle adds to a section's title why it has no rule of its own.
func sectionTitle(s SectionResult) string {
	switch {
	case !s.Normative && len(s.Scenarios) > 0:
		return s.Title + " (no rule of its own: its subsections' scenarios)"
	case !s.Normative:
		return s.Title + " (nothing to check)"
	}
	return s.Title
}
