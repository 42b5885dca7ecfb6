package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReport runs the report on a small module and a gremlins result for
// it: the figures per package, the survivors with their change and line, a
// killed mutant that does not compile reported as not viable, and the two
// mutants of a case expression, which gremlins reports as not covered,
// tested by the case pass (one killed, one lived).
func TestReport(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.25\n",
		"p/p.go": `package p

// F is what gremlins mutated.
func F(a string, n int) (string, bool) {
	return a + "x", n < 10+n
}

// Size names a size.
func Size(n int) string {
	switch {
	case n > 50:
		return "big"
	}
	return "small"
}
`,
		// The test of the run: it misses the boundary of Size.
		"p/p_test.go": `//go:build mutation

package p

import "testing"

func TestMutationSuite(t *testing.T) {
	if Size(51) != "big" || Size(0) != "small" {
		t.Fatal("wrong size")
	}
}
`,
		// The string concatenation (does not compile made "-"), the integer
		// addition, the comparison, one not covered; the case expression.
		"p.json": `{"files": [{"file_name": "p.go", "mutations": [
			{"type": "ARITHMETIC_BASE", "status": "KILLED", "line": 5, "column": 11},
			{"type": "ARITHMETIC_BASE", "status": "KILLED", "line": 5, "column": 26},
			{"type": "CONDITIONALS_BOUNDARY", "status": "LIVED", "line": 5, "column": 20},
			{"type": "CONDITIONALS_NEGATION", "status": "NOT COVERED", "line": 5, "column": 20},
			{"type": "CONDITIONALS_BOUNDARY", "status": "NOT COVERED", "line": 11, "column": 9},
			{"type": "CONDITIONALS_NEGATION", "status": "NOT COVERED", "line": 11, "column": 9}
		]}]}`,
	}
	for name, content := range files {
		f := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"p=p.json"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit status %d, want 0\n%s", code, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{
		// found, not covered, covered, killed, lived, timed out, not viable, efficacy
		"p      6            1        5       2      2          0           1     50.0%",
		"2 of the covered mutants are in case expressions",
		"Not viable (did not compile) (1):\n  p/p.go:5:11  ARITHMETIC_BASE  + → -  return a + \"x\", n < 10+n",
		"Survived: the suite passes against the mutated simulator (2):\n" +
			"  p/p.go:5:20  CONDITIONALS_BOUNDARY         < → <=  return a + \"x\", n < 10+n\n" +
			"  p/p.go:11:9  CONDITIONALS_BOUNDARY [case]  > → >=  case n > 50:",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
}

// TestUsage checks exit status 2 for arguments that are not PKGDIR=FILE.
func TestUsage(t *testing.T) {
	for _, args := range [][]string{nil, {"p.json"}, {"=p.json"}, {"--bogus"}} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), args, &stdout, &stderr); code != 2 {
			t.Errorf("%q: exit status %d, want 2", args, code)
		}
	}
}

// TestHelp: --help (and -h) says what the tool does, on stdout, and exits
// 0; a mistyped flag is exit 2 with the usage line (issue 27).
func TestHelp(t *testing.T) {
	for _, arg := range []string{"--help", "-h"} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), []string{arg}, &stdout, &stderr); code != 0 {
			t.Fatalf("%s: exit status %d, want 0\n%s", arg, code, stderr.String())
		}
		for _, want := range []string{"usage: mutationreport", "Reads the JSON results of gremlins runs", "--check-viable", "Exit status"} {
			if !strings.Contains(stdout.String(), want) {
				t.Errorf("%s: the help lacks %q:\n%s", arg, want, stdout.String())
			}
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"--bogus"}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "usage: mutationreport") {
		t.Errorf("--bogus: exit %d, stderr %q; want 2 and the usage line", code, stderr.String())
	}
}
