package clientreport

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
)

// Markdown renders rep for a CI log or a pull request: a summary, the
// information on the spec's limit, a table of the findings and each kind's
// advice (GET /accounts/{accountId}/report with Accept: text/markdown).
func Markdown(rep simulator.ClientReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Client report: %s\n\n", rep.AccountID)
	fmt.Fprintf(&b, "%d requests since %s. The simulator's rate limit: %d per %s; the rate rules (§8) judge the client against it.\n\n",
		rep.Requests, rep.Since.UTC().Format(time.RFC3339), rep.RateLimit, rep.RateWindow)
	if rep.SpecPace != nil {
		fmt.Fprintf(&b, "Information, not a finding: %s\n\n", rep.SpecPace.Note)
	}
	if rep.Clean {
		b.WriteString("**Clean**: the client broke no rule the simulator checks.\n")
		return b.String()
	}
	fmt.Fprintf(&b, "%d findings.\n\n", len(rep.Findings))
	b.WriteString("| Section | Severity | Finding | Detail | Count | Example request |\n|---|---|---|---|---|---|\n")
	for _, f := range rep.Findings {
		fmt.Fprintf(&b, "| %s | %s | %s (`%s`) | %s | %d | `%s` |\n",
			f.Section, f.Severity, f.Title, f.Kind, f.Detail, f.Count, f.ExampleRequestID)
	}
	b.WriteString("\n## Advice\n")
	var seen []string
	for _, f := range rep.Findings {
		if slices.Contains(seen, f.Kind) {
			continue
		}
		seen = append(seen, f.Kind)
		fmt.Fprintf(&b, "\n- **%s** (`%s`, %s): %s\n", f.Title, f.Kind, f.Section, f.Advice)
	}
	return b.String()
}
