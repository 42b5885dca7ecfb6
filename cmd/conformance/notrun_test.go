package main

import (
	"bytes"
	"context"
	"encoding/xml"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/partner-v3/conformance-kit/steps/suite"
)

// TestEveryExit2WritesJUnitAndSummary: a run that does not start, for
// whatever mistake of the user's, exits 2 and still writes junit.xml (one
// "preflight" test case in error, with the fix) and the summary into its
// report directory, as docs/ci.md promises a CI job; the message names
// what is missing, its flag and its variable (issue 27).
func TestEveryExit2WritesJUnitAndSummary(t *testing.T) {
	s := MustOpenSimulator(t)
	good := simulatorArgs(t, s)
	without := func(flag string) []string { return withoutFlags(good, flag) }
	tests := []struct {
		name string
		args []string // --report-dir DIR is added last, unless the args hold "DIR"
		want []string // in stderr and in the JUnit test case's message
	}{
		{"a mistyped flag", append(slices.Clone(good), "--formta", "junit"), []string{"flag provided but not defined: -formta"}},
		{"a mistyped flag before --report-dir", append([]string{"--bogus"}, good...), []string{"not defined: -bogus"}},
		{"--report-dir=DIR after a mistyped flag", []string{"--nope", "--report-dir=DIR"}, []string{"not defined: -nope"}},
		{"a missing --api-secret", without("--api-secret"), []string{"x-api-secret is missing", "--api-secret or CONFORMANCE_API_SECRET"}},
		{"a half-given second account", without("--second-account-id"), []string{"second account's x-account-id is missing", "--second-account-id or CONFORMANCE_SECOND_ACCOUNT_ID"}},
		{"no credentials at all", []string{"--base-url", s.URL()}, []string{"x-api-key, x-api-secret, x-account-id are missing", "--api-key or CONFORMANCE_API_KEY; --api-secret or CONFORMANCE_API_SECRET"}},
		{"a control API without its token", without("--admin-token"), []string{"needs its token: set --admin-token or CONFORMANCE_ADMIN_TOKEN"}},
		{"an unknown --format", append(slices.Clone(good), "--format", "pretty,xml"), []string{`--format "xml"`}},
		{"a duration without a unit", append(slices.Clone(good), "--rate-window", "10"), []string{"--rate-window", `"10s"`}},
		{"a tag expression that selects nothing", append(slices.Clone(good), "--tags", "@nothing-has-this"), []string{"selects no scenario"}},
		{"a preflight finding", func() []string { a := slices.Clone(good); setFlag(a, "--api-key", "wrong"); return a }(), []string{"check --api-key, --api-secret"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "reports")
			args := slices.Clone(tt.args)
			if i := slices.Index(args, "--report-dir=DIR"); i >= 0 {
				args[i] = "--report-dir=" + dir
			} else {
				args = append(args, "--report-dir", dir)
			}
			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), args, &stdout, &stderr); code != exitUsage {
				t.Fatalf("exit %d, want %d\nstderr:\n%s", code, exitUsage, stderr.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr does not say %q:\n%s", w, stderr.String())
				}
			}
			if !strings.Contains(stdout.String(), "NOT RUN") || !strings.Contains(stdout.String(), filepath.Join(dir, "summary.md")) {
				t.Errorf("the verdict block does not say the suite did not run and where its summary is:\n%s", stdout.String())
			}
			if r := readSummary(t, dir); r.Verdict != suite.VerdictNotRun || !strings.Contains(r.NotRun, tt.want[0]) {
				t.Errorf("summary.json: verdict %q, why %q; want %q saying %q", r.Verdict, r.NotRun, suite.VerdictNotRun, tt.want[0])
			}
			b, err := os.ReadFile(filepath.Join(dir, "junit.xml"))
			if err != nil {
				t.Fatalf("no junit.xml: %v", err)
			}
			var doc struct {
				Errors int `xml:"errors,attr"`
				Suites []struct {
					Cases []struct {
						Name  string `xml:"name,attr"`
						Error *struct {
							Message string `xml:"message,attr"`
						} `xml:"error"`
					} `xml:"testcase"`
				} `xml:"testsuite"`
			}
			if err := xml.Unmarshal(b, &doc); err != nil {
				t.Fatalf("junit.xml: %v\n%s", err, b)
			}
			if doc.Errors != 1 || len(doc.Suites) != 1 || len(doc.Suites[0].Cases) != 1 || doc.Suites[0].Cases[0].Name != "preflight" ||
				doc.Suites[0].Cases[0].Error == nil || !strings.Contains(doc.Suites[0].Cases[0].Error.Message, tt.want[0]) {
				t.Errorf("junit.xml is not one preflight test case in error saying %q:\n%s", tt.want[0], b)
			}
			if _, err := os.Stat(filepath.Join(dir, "certificate.json")); err == nil {
				t.Error("a run that did not start wrote a certificate")
			}
		})
	}
}

// TestExit2WritesNoReportWhereNoneIsAsked: --report-dir "" (or a
// --report-dir with no value) writes nothing, and says nothing of a
// summary.
func TestExit2WritesNoReportWhereNoneIsAsked(t *testing.T) {
	wd := t.TempDir()
	t.Chdir(wd)
	for _, args := range [][]string{{"--bogus", "--report-dir", ""}, {"--bogus", "--report-dir"}} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), args, &stdout, &stderr); code != exitUsage {
			t.Fatalf("%q: exit %d", args, code)
		}
		if strings.Contains(stdout.String(), "summary:") {
			t.Errorf("%q: the verdict names a summary it did not write:\n%s", args, stdout.String())
		}
	}
	if entries, _ := os.ReadDir(wd); len(entries) != 0 {
		t.Fatalf("wrote %v with no report directory asked for", entries)
	}
}

func TestReportDirOf(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "CONFORMANCE_REPORT_DIR" {
				return v
			}
			return ""
		}
	}
	tests := []struct {
		name   string
		args   []string
		env    string
		want   string
		wantOK bool
	}{
		{"the default", []string{"--bogus"}, "", defaultReportDir, true},
		{"the variable", []string{"--bogus"}, "/reports", "/reports", true},
		{"the flag wins over the variable", []string{"--bogus", "--report-dir", "out"}, "/reports", "out", true},
		{"one dash and =", []string{"-report-dir=out", "--bogus"}, "", "out", true},
		{"the last one counts", []string{"--report-dir", "a", "--report-dir", "b"}, "", "b", true},
		{"empty: none", []string{"--report-dir", ""}, "/reports", "", true},
		{"no value: unknown", []string{"--report-dir"}, "", "", false},
		{"after --, an argument", []string{"--", "--report-dir", "x"}, "", defaultReportDir, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := reportDirOf(tt.args, env(tt.env))
			if got != tt.want || ok != tt.wantOK {
				t.Fatalf("reportDirOf(%q)=%q, %v; want %q, %v", tt.args, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}
