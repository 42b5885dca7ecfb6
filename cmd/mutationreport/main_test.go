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
// it: the figures per package, the survivor with its change and line, and
// a killed mutant that does not compile reported as not viable.
func TestReport(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.25\n",
		"p/p.go": `package p

// F is what gremlins mutated.
func F(a string, n int) (string, bool) {
	return a + "x", n < 10+n
}
`,
		// Three mutants: the string concatenation (does not compile made
		// "-"), the integer addition, the comparison; and one not covered.
		"p.json": `{"files": [{"file_name": "p.go", "mutations": [
			{"type": "ARITHMETIC_BASE", "status": "KILLED", "line": 5, "column": 11},
			{"type": "ARITHMETIC_BASE", "status": "KILLED", "line": 5, "column": 26},
			{"type": "CONDITIONALS_BOUNDARY", "status": "LIVED", "line": 5, "column": 20},
			{"type": "CONDITIONALS_NEGATION", "status": "NOT COVERED", "line": 5, "column": 20}
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
		"p      4            1        3       1      1          0           1     50.0%",
		"Not viable (did not compile) (1):\n  p/p.go:5:11  ARITHMETIC_BASE  + → -  return a + \"x\", n < 10+n",
		"Survived: the suite passes against the mutated simulator (1):\n  p/p.go:5:20  CONDITIONALS_BOUNDARY  < → <=  return a + \"x\", n < 10+n",
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
