package steps

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cucumber/godog"
	"github.com/partner-v3/conformance-kit/fixtures"
)

// Status is a scenario's outcome.
type Status string

// Scenario outcomes. Undefined and pending steps count as failures (the
// suite runs strict).
const (
	StatusPassed  Status = "passed"
	StatusFailed  Status = "failed"
	StatusSkipped Status = "skipped"
)

// Verdicts of a run.
const (
	VerdictPass = "pass"
	VerdictFail = "fail"
)

// ScenarioResult is the outcome of one scenario (one row of an outline).
type ScenarioResult struct {
	// Name is the scenario's name, outline placeholders filled in.
	Name string `json:"name"`
	// Feature is the .feature file the scenario comes from.
	Feature string `json:"feature"`
	// Tags are all the scenario's tags, "@" included.
	Tags []string `json:"tags"`
	// Sections are the spec sections of its @spec-* tags ("4.2").
	Sections []string `json:"sections"`
	Status   Status   `json:"status"`
	// Step is the text of the step that failed or skipped the scenario.
	Step string `json:"step,omitempty"`
	// Message is the failure (with the request and response, credentials
	// masked) or the reason for the skip.
	Message string `json:"message,omitempty"`

	sawStep bool
}

// Normative reports whether the scenario checks a rule the spec states.
func (r *ScenarioResult) Normative() bool { return slices.Contains(r.Tags, "@normative") }

// SectionResult sums up the scenarios of one spec section.
type SectionResult struct {
	ID        string   `json:"id"`
	Title     string   `json:"title"`
	Normative bool     `json:"normative"`
	Passed    int      `json:"passed"`
	Failed    int      `json:"failed"`
	Skipped   int      `json:"skipped"`
	Scenarios []string `json:"scenarios"`
}

// Result is the outcome of a Run.
type Result struct {
	SuiteVersion string            `json:"suiteVersion"`
	SpecVersion  string            `json:"specVersion"`
	Spec         string            `json:"spec"`
	Target       string            `json:"target"`
	Tags         string            `json:"tags"`
	Started      time.Time         `json:"started"`
	Duration     time.Duration     `json:"durationNs"`
	RateLimit    int               `json:"rateLimit"`
	RateWindow   string            `json:"rateWindow"`
	ControlAPI   bool              `json:"controlApi"`
	Requests     int64             `json:"requests"`
	Waited       time.Duration     `json:"waitedNs"`
	Passed       int               `json:"passed"`
	Failed       int               `json:"failed"`
	Skipped      int               `json:"skipped"`
	Scenarios    []*ScenarioResult `json:"scenarios"`
	Sections     []SectionResult   `json:"sections"`
	// Verdict is "pass" when no selected scenario failed and at least one
	// passed, "fail" otherwise.
	Verdict string `json:"verdict"`
	// Certification is true only for a passing run that is a full
	// certification: every normative scenario selected and none skipped,
	// writes allowed, the spec's rate limit, a real network target.
	Certification bool `json:"certification"`
	// Caveats say why a run is not a certification, and what it did not
	// verify.
	Caveats []string `json:"caveats"`
}

// FailedScenarios returns the scenarios that failed.
func (r *Result) FailedScenarios() []*ScenarioResult {
	var out []*ScenarioResult
	for _, s := range r.Scenarios {
		if s.Status == StatusFailed {
			out = append(out, s)
		}
	}
	return out
}

// collector records scenario results in the order they start.
type collector struct {
	mu        sync.Mutex
	scenarios []*ScenarioResult
}

func (c *collector) start(p *godog.Scenario) *ScenarioResult {
	r := &ScenarioResult{Name: p.Name, Feature: p.Uri, Status: StatusPassed}
	for _, t := range p.Tags {
		r.Tags = append(r.Tags, t.Name)
		if id, ok := strings.CutPrefix(t.Name, "@spec-"); ok && !slices.Contains(r.Sections, id) {
			r.Sections = append(r.Sections, id)
		}
	}
	slices.SortFunc(r.Sections, compareSections)
	c.mu.Lock()
	c.scenarios = append(c.scenarios, r)
	c.mu.Unlock()
	return r
}

// step folds one step's outcome into its scenario's result: the first
// failure wins; a skip counts only while nothing failed.
func (c *collector) step(r *ScenarioResult, text string, status godog.StepResultStatus, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r.sawStep = true
	if r.Status == StatusFailed {
		return
	}
	switch status {
	case godog.StepFailed, godog.StepUndefined, godog.StepPending, godog.StepAmbiguous:
		r.Status, r.Step = StatusFailed, text
		switch {
		case err != nil:
			r.Message = err.Error()
		default:
			r.Message = "step " + status.String()
		}
	case godog.StepSkipped:
		if err != nil && errors.Is(err, godog.ErrSkip) && r.Status != StatusSkipped {
			r.Status, r.Step = StatusSkipped, text
			r.Message = strings.TrimPrefix(err.Error(), godog.ErrSkip.Error()+": ")
		}
	}
}

// Section is one section of the spec, from the suite's own copy of the
// section list (fixtures/spec-sections.json).
type Section struct {
	ID        string `json:"id"`
	Title     string `json:"title"`
	Normative bool   `json:"normative"`
}

// SpecSections returns the suite's copy of the spec's section list.
func SpecSections() ([]Section, string, error) {
	b, err := fixtures.FS.ReadFile("spec-sections.json")
	if err != nil {
		return nil, "", fmt.Errorf("read spec section list: %w", err)
	}
	var doc struct {
		Spec     string    `json:"spec"`
		Sections []Section `json:"sections"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, "", fmt.Errorf("decode spec section list: %w", err)
	}
	return doc.Sections, doc.Spec, nil
}

// compareSections orders "2.10" after "2.9".
func compareSections(a, b string) int {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(pa) && i < len(pb); i++ {
		x, _ := strconv.Atoi(pa[i])
		y, _ := strconv.Atoi(pb[i])
		if x != y {
			return x - y
		}
	}
	return len(pa) - len(pb)
}

// WriteJSON writes the conformance summary as indented JSON.
func (r *Result) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("write JSON summary: %w", err)
	}
	return nil
}

// WriteMarkdown writes the conformance summary for people: the verdict, the
// caveats, a table of spec sections, then each failure and skip.
func (r *Result) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Conformance summary: %s\n\n", r.Spec)
	verdict := strings.ToUpper(r.Verdict)
	if r.Certification {
		verdict += " (certification)"
	} else {
		verdict += " (not a certification, see caveats)"
	}
	fmt.Fprintf(&b, "| | |\n|---|---|\n")
	for _, kv := range [][2]string{
		{"Verdict", verdict},
		{"Target", r.Target},
		{"Spec version", "v" + r.SpecVersion},
		{"Suite version", r.SuiteVersion},
		{"Started", r.Started.UTC().Format(time.RFC3339)},
		{"Duration", r.Duration.Round(time.Millisecond).String()},
		{"Tags", "`" + r.Tags + "`"},
		{"Rate limit assumed", fmt.Sprintf("%d per %s", r.RateLimit, r.RateWindow)},
		{"Control API", fmt.Sprint(r.ControlAPI)},
		{"Requests sent", fmt.Sprint(r.Requests)},
		{"Waited for rate-limit windows", r.Waited.Round(time.Second).String()},
		{"Scenarios", fmt.Sprintf("%d passed, %d failed, %d skipped", r.Passed, r.Failed, r.Skipped)},
	} {
		fmt.Fprintf(&b, "| %s | %s |\n", kv[0], kv[1])
	}
	if len(r.Caveats) > 0 {
		b.WriteString("\n## Caveats\n\n")
		for _, c := range r.Caveats {
			fmt.Fprintf(&b, "- %s\n", c)
		}
	}
	b.WriteString("\n## Spec sections\n\n| Section | Title | Passed | Failed | Skipped |\n|---|---|---|---|---|\n")
	for _, s := range r.Sections {
		title := s.Title
		switch {
		case !s.Normative && len(s.Scenarios) > 0:
			title += " (no rule of its own: its subsections' scenarios)"
		case !s.Normative:
			title += " (nothing to check)"
		}
		fmt.Fprintf(&b, "| §%s | %s | %d | %d | %d |\n", s.ID, title, s.Passed, s.Failed, s.Skipped)
	}
	for _, st := range []Status{StatusFailed, StatusSkipped} {
		var rows []*ScenarioResult
		for _, s := range r.Scenarios {
			if s.Status == st {
				rows = append(rows, s)
			}
		}
		if len(rows) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n## %s scenarios\n", strings.ToUpper(string(st[:1]))+string(st[1:]))
		for _, s := range rows {
			fmt.Fprintf(&b, "\n### %s\n\n%s · %s\n\nStep: %s\n\n```\n%s\n```\n", s.Name, s.Feature, strings.Join(s.Tags, " "), s.Step, s.Message)
		}
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write Markdown summary: %w", err)
	}
	return nil
}
