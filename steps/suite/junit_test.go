package suite

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
)

// The JUnit shape as a CI tool reads it back.
type (
	readSuites struct {
		XMLName  xml.Name    `xml:"testsuites"`
		Tests    int         `xml:"tests,attr"`
		Failures int         `xml:"failures,attr"`
		Errors   int         `xml:"errors,attr"`
		Skipped  int         `xml:"skipped,attr"`
		Suites   []readSuite `xml:"testsuite"`
	}
	readSuite struct {
		Name     string     `xml:"name,attr"`
		Tests    int        `xml:"tests,attr"`
		Failures int        `xml:"failures,attr"`
		Errors   int        `xml:"errors,attr"`
		Skipped  int        `xml:"skipped,attr"`
		Time     string     `xml:"time,attr"`
		Cases    []readCase `xml:"testcase"`
	}
	readCase struct {
		Classname string       `xml:"classname,attr"`
		Name      string       `xml:"name,attr"`
		Time      string       `xml:"time,attr"`
		Failure   *readProblem `xml:"failure"`
		Error     *readProblem `xml:"error"`
		Skipped   *readProblem `xml:"skipped"`
		SystemOut string       `xml:"system-out"`
	}
	readProblem struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Text    string `xml:",chardata"`
	}
)

func readJUnit(t *testing.T, r *Result) (readSuites, string) {
	t.Helper()
	var buf bytes.Buffer
	if err := r.WriteJUnit(&buf); err != nil {
		t.Fatal(err)
	}
	var doc readSuites
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("the JUnit report is not XML: %v\n%s", err, buf.String())
	}
	return doc, buf.String()
}

func TestJUnitReport(t *testing.T) {
	doc, raw := readJUnit(t, sampleResult(t))
	if got, want := [4]int{doc.Tests, doc.Failures, doc.Errors, doc.Skipped}, [4]int{5, 1, 0, 1}; got != want {
		t.Fatalf("testsuites tests/failures/errors/skipped=%v, want %v", got, want)
	}
	suites := make(map[string]readSuite)
	for _, s := range doc.Suites {
		suites[s.Name] = s
		seen := make(map[string]bool)
		for _, c := range s.Cases {
			if c.Classname != s.Name {
				t.Errorf("testcase %q has classname %q, want its feature %q", c.Name, c.Classname, s.Name)
			}
			if seen[c.Name] {
				t.Errorf("suite %q names two testcases %q", s.Name, c.Name)
			}
			seen[c.Name] = true
		}
	}
	if got, want := len(doc.Suites), 3; got != want {
		t.Fatalf("%d testsuites, want %d (one per feature)", got, want)
	}

	tests := []struct {
		name                     string
		suite                    string
		tests, failures, skipped int
		time                     string
	}{
		{"the transport feature has its one passing scenario", "Transport, JSON and the versioned base address", 1, 0, 0, "0.212"},
		{"the authentication feature has an outline row and a skip", "Authentication with key, secret and account identifier", 2, 0, 1, "0.095"},
		{"the campaign list feature has a failure and a warning", "Campaign List and pagination", 2, 1, 0, "0.484"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, ok := suites[tt.suite]
			if !ok {
				t.Fatalf("no testsuite %q", tt.suite)
			}
			if got, want := [3]int{s.Tests, s.Failures, s.Skipped}, [3]int{tt.tests, tt.failures, tt.skipped}; got != want {
				t.Fatalf("tests/failures/skipped=%v, want %v", got, want)
			}
			if s.Time != tt.time {
				t.Fatalf("time=%q, want %q", s.Time, tt.time)
			}
		})
	}

	byName := make(map[string]readCase)
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			byName[c.Name] = c
		}
	}
	t.Run("an outline row is named by its values", func(t *testing.T) {
		name := "<operation> refuses the <header> header when it is <fault> [operation=Campaign Stats, header=x-api-secret, fault=missing]"
		c, ok := byName[name]
		if !ok {
			t.Fatalf("no testcase %q", name)
		}
		if c.Failure != nil || c.Skipped != nil || c.Time != "0.095" {
			t.Fatalf("outline row: %+v", c)
		}
	})
	t.Run("a failure has a short message and the full detail", func(t *testing.T) {
		c := byName["Campaigns carry the fields of §2.2"]
		if c.Failure == nil {
			t.Fatal("no <failure>")
		}
		if got, want := c.Failure.Message, `§2.2: campaigns[0].Id is the string "12", want an integer`; got != want {
			t.Fatalf("message=%q, want %q", got, want)
		}
		for _, want := range []string{"<script>alert(1)</script>", "(spec §2.2)", "POST https://partner.example.test/v3/partner/webhook/campaign/list", `"statusColor":"green"`, "Step: the field"} {
			if !strings.Contains(c.Failure.Text, want) {
				t.Errorf("failure text lacks %q:\n%s", want, c.Failure.Text)
			}
		}
	})
	t.Run("a long message is cut to 200 bytes", func(t *testing.T) {
		r := sampleResult(t)
		r.Scenarios[2].Failure.Message = strings.Repeat("é", 300)
		doc, _ := readJUnit(t, r)
		msg := doc.Suites[2].Cases[0].Failure.Message
		if len(msg) > junitMessageMax || !strings.HasSuffix(msg, "…") || !strings.HasPrefix(msg, "§2.2: éé") {
			t.Fatalf("message (%d bytes) %q", len(msg), msg)
		}
	})
	t.Run("a body with bytes XML forbids still gives XML", func(t *testing.T) {
		r := sampleResult(t)
		r.Scenarios[2].Failure.Exchange.ResponseBody = "]]>\x00\x1b[0m\xff"
		doc, _ := readJUnit(t, r)
		if text := doc.Suites[2].Cases[0].Failure.Text; !strings.Contains(text, "]]>\uFFFD\uFFFD[0m\uFFFD") {
			t.Fatalf("failure text ends %q", text[len(text)-40:])
		}
	})
	t.Run("a skip carries its reason", func(t *testing.T) {
		c := byName["The second account is served with its own credentials"]
		if c.Skipped == nil || c.Skipped.Message != "no second account was given (--second-api-key)" {
			t.Fatalf("skipped=%+v", c.Skipped)
		}
	})
	t.Run("warnings are in system-out and do not fail", func(t *testing.T) {
		c := byName["Campaign statuses are colour codes"]
		if c.Failure != nil || c.Error != nil {
			t.Fatal("a warning failed the testcase")
		}
		if want := "WARNING §2.2: scheduledTimeZone \"XYZ\" is not a time zone abbreviation the suite knows (seen 3×)\n"; c.SystemOut != want {
			t.Fatalf("system-out=%q, want %q", c.SystemOut, want)
		}
	})
	t.Run("no credential appears", func(t *testing.T) {
		for _, secret := range []string{testAPIKey, testAPISecret, testAccountID} {
			if strings.Contains(raw, secret) {
				t.Errorf("the report holds %q", secret)
			}
		}
	})
}

func TestJUnitReportOfARunThatDidNotStart(t *testing.T) {
	doc, _ := readJUnit(t, notRunResult())
	if got, want := [3]int{doc.Tests, doc.Errors, len(doc.Suites)}, [3]int{1, 1, 1}; got != want {
		t.Fatalf("tests/errors/suites=%v, want %v", got, want)
	}
	c := doc.Suites[0].Cases
	if len(c) != 1 || c[0].Name != "preflight" || c[0].Error == nil {
		t.Fatalf("testcases=%+v, want one preflight in error", c)
	}
	if got, want := c[0].Error.Message, notRunResult().NotRun; got != want {
		t.Fatalf("message=%q, want %q", got, want)
	}
}
