// Package result is the record of a run's scenarios, as the step library
// writes it and the runner and its reports read it: each scenario's outcome,
// its findings (failures and warnings, with their spec sections) and the
// exchanges they show, the run's secrets masked.
package result

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/partner-v3/conformance-kit/steps/internal/mask"
	"github.com/partner-v3/conformance-kit/steps/internal/pace"
)

// Status is a scenario's outcome.
type Status string

// Scenario outcomes. Undefined and pending steps count as failures (the
// suite runs strict). A scenario with warnings and no failure passed.
const (
	StatusPassed  Status = "passed"
	StatusFailed  Status = "failed"
	StatusSkipped Status = "skipped"
	// StatusInconclusive: the scenario tried to check a rule and could not
	// decide, even after trying again (a rate-limit burst that crossed a
	// window boundary each time). Never a pass.
	StatusInconclusive Status = "inconclusive"
)

// Level is the tier of a finding, as in the OpenID Foundation's
// conformance suite: a FAILURE breaks a statement of the spec; a WARNING is
// something the spec allows that a vendor should know about.
type Level string

// Finding levels.
const (
	LevelFailure Level = "failure"
	LevelWarning Level = "warning"
)

// Finding is one failure or warning of a scenario.
type Finding struct {
	Level Level `json:"level"`
	// Sections are the spec sections the finding is about ("4.2"). A
	// failure's sections are the scenario's own unless the finding is of
	// another section (a 429 after a full quiet window is a failure of §8
	// whatever scenario met it).
	Sections []string `json:"sections"`
	// Message says what is wrong, in one or a few lines.
	Message string `json:"message"`
	// Count is how many times a warning was seen in the scenario.
	Count int `json:"count,omitempty"`
	// Exchange is the request and response the finding is about, with the
	// run's secrets masked wherever they appear. May be nil.
	Exchange *Exchange `json:"exchange,omitempty"`
}

// SectionList renders the sections as "§4.2, §8".
func SectionList(sections []string) string {
	out := make([]string, len(sections))
	for i, s := range sections {
		out[i] = "§" + s
	}
	return strings.Join(out, ", ")
}

// Detail is the finding as text: the message, its sections and the
// exchange.
func (f *Finding) Detail() string {
	var b strings.Builder
	b.WriteString(f.Message)
	if len(f.Sections) > 0 {
		fmt.Fprintf(&b, "\n(spec %s)", SectionList(f.Sections))
	}
	if f.Exchange != nil {
		b.WriteString("\n")
		b.WriteString(f.Exchange.Dump())
	}
	return b.String()
}

// Exchange is one request of the suite and what came back, as reports show
// it: the run's secrets masked in headers, bodies, URL and error alike (a
// target may echo one), bodies cut at 4 KiB.
type Exchange struct {
	Method         string        `json:"method"`
	URL            string        `json:"url"`
	RequestHeader  http.Header   `json:"requestHeader,omitempty"`
	RequestBody    string        `json:"requestBody,omitempty"`
	Status         int           `json:"status,omitempty"`
	ResponseHeader http.Header   `json:"responseHeader,omitempty"`
	ResponseBody   string        `json:"responseBody,omitempty"`
	Error          string        `json:"error,omitempty"`
	Duration       time.Duration `json:"durationNs"`
}

// Dump renders the exchange as an HTTP transcript.
func (x *Exchange) Dump() string {
	var b strings.Builder
	b.WriteString("--- request (credentials masked) ---\n")
	fmt.Fprintf(&b, "%s %s\n", x.Method, x.URL)
	writeHeaders(&b, x.RequestHeader)
	if x.RequestBody != "" {
		b.WriteString(x.RequestBody)
		b.WriteString("\n")
	}
	b.WriteString("--- response ---\n")
	if x.Error != "" {
		fmt.Fprintf(&b, "no answer: %s\n", x.Error)
		return b.String()
	}
	fmt.Fprintf(&b, "HTTP %d %s (after %s)\n", x.Status, http.StatusText(x.Status), x.Duration.Round(time.Millisecond))
	writeHeaders(&b, x.ResponseHeader)
	b.WriteString(x.ResponseBody)
	return b.String()
}

func writeHeaders(b *strings.Builder, h http.Header) {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, v := range h[k] {
			fmt.Fprintf(b, "%s: %s\n", k, v)
		}
	}
}

// BudgetWait is one wait a scenario made because the target refused a
// request that does not test §8 with 429: the account's budget was spent
// before (by another client or an earlier run), which is never the
// target's fault. It is the pacer's own record of the wait (pace.Wait),
// so the scenario's result, the run's result and the reports share one
// type and one JSON shape.
type BudgetWait = pace.Wait

// ScenarioResult is the outcome of one scenario (one row of an outline).
type ScenarioResult struct {
	// Name is the scenario's name, outline placeholders filled in.
	Name string `json:"name"`
	// Example names an outline row by its values ("operation=Add Contact,
	// header=x-api-key"); empty for a plain scenario.
	Example string `json:"example,omitempty"`
	// Feature is the .feature file the scenario comes from.
	Feature string `json:"feature"`
	// FeatureName is that file's Feature: title.
	FeatureName string `json:"featureName,omitempty"`
	// Tags are all the scenario's tags, "@" included.
	Tags []string `json:"tags"`
	// Sections are the spec sections of its @spec-* tags ("4.2").
	Sections []string `json:"sections"`
	Status   Status   `json:"status"`
	// Step is the text of the step that failed or skipped the scenario.
	Step string `json:"step,omitempty"`
	// Message is the failure's message or the reason for the skip.
	Message string `json:"message,omitempty"`
	// Failure is the failure, with its sections and exchange; nil unless
	// Status is failed.
	Failure *Finding `json:"failure,omitempty"`
	// Warnings are what the spec allows but a vendor should know.
	Warnings []Finding `json:"warnings,omitempty"`
	// Requests is the number of requests the scenario sent, retries
	// included.
	Requests int `json:"requests"`
	// Retries counts the tries that could not decide and were made again.
	Retries int `json:"retries,omitempty"`
	// Unverified lists the matrix cells the run could not check for a
	// reason of its own configuration (no second account, read-only):
	// rules not verified, so the run is no certification.
	Unverified []string `json:"unverified,omitempty"`
	// BudgetWaits are the waits unexpected 429s caused.
	BudgetWaits []BudgetWait `json:"budgetWaits,omitempty"`
	// Duration is how long the scenario ran.
	Duration time.Duration `json:"durationNs"`
}

// Normative reports whether the scenario checks a rule the spec states.
func (r *ScenarioResult) Normative() bool { return slices.Contains(r.Tags, "@normative") }

// Title is the scenario's name with its outline row, as reports list it.
func (r *ScenarioResult) Title() string {
	if r.Example == "" {
		return r.Name
	}
	return r.Name + " [" + r.Example + "]"
}

// FailureSections are the sections a failed scenario counts against: its
// failure's, or its own.
func (r *ScenarioResult) FailureSections() []string {
	if r.Failure != nil && len(r.Failure.Sections) > 0 {
		return r.Failure.Sections
	}
	return r.Sections
}

// CompareSections orders section ids numerically: "2.10" after "2.9".
func CompareSections(a, b string) int {
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

// BodyLimit cuts the bodies a report shows.
const BodyLimit = 4096

// Cut is a body as reports show it: the run's secrets hidden (sec may be
// nil), then cut at BodyLimit. The search looks a little past the cut, so
// that a secret the cut would halve is hidden whole.
func Cut(sec *mask.Secrets, b []byte) string {
	const past = 256
	if len(b) <= BodyLimit {
		return sec.String(string(b))
	}
	s := sec.String(string(b[:min(len(b), BodyLimit+past)]))
	if len(s) > BodyLimit {
		s = s[:BodyLimit]
	}
	return s + fmt.Sprintf("… (%d bytes in all)", len(b))
}
