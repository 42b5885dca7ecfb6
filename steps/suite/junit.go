package suite

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/partner-v3/conformance-kit/steps/result"
)

// The JUnit XML shape CI tools read (GitLab, Jenkins, GitHub test
// reporters): the common subset of the Ant/Surefire schema.
type (
	junitTestSuites struct {
		XMLName  xml.Name         `xml:"testsuites"`
		Name     string           `xml:"name,attr"`
		Tests    int              `xml:"tests,attr"`
		Failures int              `xml:"failures,attr"`
		Errors   int              `xml:"errors,attr"`
		Skipped  int              `xml:"skipped,attr"`
		Time     string           `xml:"time,attr"`
		Suites   []junitTestSuite `xml:"testsuite"`
	}
	junitTestSuite struct {
		Name      string          `xml:"name,attr"`
		Tests     int             `xml:"tests,attr"`
		Failures  int             `xml:"failures,attr"`
		Errors    int             `xml:"errors,attr"`
		Skipped   int             `xml:"skipped,attr"`
		Time      string          `xml:"time,attr"`
		Timestamp string          `xml:"timestamp,attr,omitempty"`
		Cases     []junitTestCase `xml:"testcase"`
	}
	junitTestCase struct {
		Classname string        `xml:"classname,attr"`
		Name      string        `xml:"name,attr"`
		Time      string        `xml:"time,attr"`
		Failure   *junitProblem `xml:"failure,omitempty"`
		Error     *junitProblem `xml:"error,omitempty"`
		Skipped   *junitSkipped `xml:"skipped,omitempty"`
		SystemOut *junitOutput  `xml:"system-out,omitempty"`
	}
	junitProblem struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Text    string `xml:",cdata"`
	}
	junitOutput struct {
		Text string `xml:",cdata"`
	}
	junitSkipped struct {
		Message string `xml:"message,attr,omitempty"`
	}
)

// junitMessageMax caps a failure's message attribute: CI tools show it on
// one line; the detail is the element's text.
const junitMessageMax = 200

// WriteJUnit writes the run as JUnit XML for CI tools: a testsuite per
// feature, a testcase per scenario (an outline row named by its values). A
// failure carries a one-line message and the full detail with the
// exchange, credentials masked; warnings go to the testcase's system-out
// and never fail it. A run that did not start is one "preflight" testcase
// in error.
func (r *Result) WriteJUnit(w io.Writer) error {
	doc := junitTestSuites{Name: r.Spec, Time: seconds(r.Duration)}
	if r.Verdict == VerdictNotRun {
		doc.Suites = []junitTestSuite{{
			Name: "preflight", Tests: 1, Errors: 1, Time: seconds(r.Duration), Timestamp: junitTimestamp(r.Started),
			Cases: []junitTestCase{{
				Classname: "preflight", Name: "preflight", Time: seconds(r.Duration),
				Error: &junitProblem{Message: r.NotRun, Type: VerdictNotRun, Text: xmlText(r.Headline() + "\n" + r.NotRun)},
			}},
		}}
	} else {
		doc.Suites = r.junitSuites()
	}
	for _, s := range doc.Suites {
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Errors += s.Errors
		doc.Skipped += s.Skipped
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return fmt.Errorf("write JUnit report: %w", err)
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("write JUnit report: %w", err)
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return fmt.Errorf("write JUnit report: %w", err)
	}
	return nil
}

// junitSuites groups the scenarios by feature, in the order the features
// first ran.
func (r *Result) junitSuites() []junitTestSuite {
	var suites []junitTestSuite
	index := make(map[string]int)
	names := make(map[string]map[string]int)
	durations := make(map[string]time.Duration)
	for _, sc := range r.Scenarios {
		feature := sc.FeatureName
		if feature == "" {
			feature = sc.Feature
		}
		i, ok := index[feature]
		if !ok {
			i = len(suites)
			index[feature] = i
			names[feature] = make(map[string]int)
			suites = append(suites, junitTestSuite{Name: feature, Timestamp: junitTimestamp(r.Started)})
		}
		s := &suites[i]
		tc := junitTestCase{Classname: feature, Name: sc.Title(), Time: seconds(sc.Duration)}
		// Titles are unique within a feature (outline rows carry their
		// values); should two ever meet, CI tools would merge them.
		if n := names[feature][tc.Name]; n > 0 {
			names[feature][tc.Name] = n + 1
			tc.Name = fmt.Sprintf("%s (%d)", tc.Name, n+1)
		} else {
			names[feature][tc.Name] = 1
		}
		switch sc.Status {
		case result.StatusFailed:
			tc.Failure = junitFailure(sc)
			s.Failures++
		case result.StatusSkipped, result.StatusInconclusive:
			tc.Skipped = &junitSkipped{Message: sc.Message}
			s.Skipped++
		}
		var out strings.Builder
		for _, f := range sc.Warnings {
			fmt.Fprintf(&out, "WARNING %s: %s", result.SectionList(f.Sections), f.Message)
			if f.Count > 1 {
				fmt.Fprintf(&out, " (seen %d×)", f.Count)
			}
			out.WriteString("\n")
		}
		if out.Len() > 0 {
			tc.SystemOut = &junitOutput{Text: xmlText(out.String())}
		}
		s.Tests++
		durations[feature] += sc.Duration
		s.Cases = append(s.Cases, tc)
	}
	for i := range suites {
		suites[i].Time = seconds(durations[suites[i].Name])
	}
	return suites
}

// junitFailure is a failed scenario's <failure>: the first line of the
// message and the sections in the attribute, the whole detail as text.
func junitFailure(sc *result.ScenarioResult) *junitProblem {
	detail, message := sc.Message, sc.Message
	if sc.Failure != nil {
		detail, message = sc.Failure.Detail(), sc.Failure.Message
	}
	if sc.Step != "" {
		detail = "Step: " + sc.Step + "\n" + detail
	}
	first, _, _ := strings.Cut(message, "\n")
	short := first
	if sections := result.SectionList(sc.FailureSections()); sections != "" {
		short = sections + ": " + first
	}
	return &junitProblem{Message: truncate(short, junitMessageMax), Type: string(result.LevelFailure), Text: xmlText(detail)}
}

// xmlText makes s fit for a CDATA section, which, unlike escaped text,
// keeps a transcript's lines readable in the raw file: characters XML 1.0
// forbids (a response body may hold any byte) become U+FFFD.
func xmlText(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r',
			r >= 0x20 && r <= 0xD7FF,
			r >= 0xE000 && r <= 0xFFFD,
			r >= 0x10000 && r <= 0x10FFFF:
			return r
		}
		return utf8.RuneError
	}, s)
}

// truncate cuts s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = "…"
	cut := n - len(mark)
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// seconds is a duration as JUnit's time attribute: seconds, 3 decimals.
func seconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

// junitTimestamp is the Surefire timestamp: ISO 8601 without a zone.
func junitTimestamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04:05")
}
