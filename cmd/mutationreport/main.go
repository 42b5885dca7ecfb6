// Command mutationreport reads the JSON results of gremlins runs (make
// mutation: one run per package of the simulator, the conformance suite as
// the test), completes them where gremlins v0.6.0 falls short, and prints
// the figures per package and every surviving mutant, with the change
// gremlins made and the source line it made it in, so that each survivor
// can be classified (docs/mutation.md).
//
//	mutationreport simulator/partnerapi=reports/mutation/simulator-server.json ...
//
// Each argument is a package directory (relative to the module root, the
// current directory) and the JSON gremlins wrote for it: gremlins names
// files relative to the directory it ran in, so the report needs both.
//
// gremlins v0.6.0 counts a mutant that does not compile as KILLED: it takes
// exit status 2 for a build failure, and go test exits 1 for one. Unless
// -check-viable=false, every killed mutant that may not compile (an
// arithmetic operator: "a" + b made "a" - b) is compiled again here with go
// build -overlay, and reported as not viable when it does not.
//
// gremlins v0.6.0 never tests an operator in a case expression: it reports
// it NOT COVERED whatever the suite ran (cases.go says why). Unless
// -cases=false, the report runs the test on each of those in a switch the
// suite reached, the mutation applied with go test -overlay (one at a
// time, some seconds each), and counts them with gremlins' own; not after
// a dry run, which tests nothing.
//
// Exit codes: 0 reported (survivors or not), 1 failed, 2 usage.
package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/scanner"
	"go/token"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/partner-v3/conformance-kit/cmd/internal/flagenv"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// Statuses gremlins writes.
const (
	statusKilled     = "KILLED"
	statusLived      = "LIVED"
	statusNotCovered = "NOT COVERED"
	statusTimedOut   = "TIMED OUT"
	statusNotViable  = "NOT VIABLE"
	statusSkipped    = "SKIPPED"
	statusRunnable   = "RUNNABLE" // a dry run's covered mutant
)

// result is the part of gremlins' --output JSON the report reads.
type result struct {
	Files []struct {
		FileName  string     `json:"file_name"`
		Mutations []mutation `json:"mutations"`
	} `json:"files"`
}

type mutation struct {
	Type   string `json:"type"`
	Status string `json:"status"`
	Line   int    `json:"line"`
	Column int    `json:"column"`
}

// mutant is one mutation, its file named from the module root.
type mutant struct {
	pkg  string
	file string
	mutation
	// from and to are the operator before and after (to is "?" for a
	// mutator the report does not know); source is the line, trimmed.
	from, to, source string
	// inCase marks a mutant of a case expression, which gremlins reported
	// NOT COVERED and the case pass tested (cases.go).
	inCase bool
}

func (m mutant) position() string { return fmt.Sprintf("%s:%d:%d", m.file, m.Line, m.Column) }

// mutations are gremlins' operator replacements (internal/engine/mappings.go
// of v0.6.0), by mutator.
var mutations = map[string]map[string]string{
	"ARITHMETIC_BASE":       {"+": "-", "-": "+", "*": "/", "/": "*", "%": "*"},
	"CONDITIONALS_BOUNDARY": {">=": ">", ">": ">=", "<=": "<", "<": "<="},
	"CONDITIONALS_NEGATION": {"==": "!=", "!=": "==", ">=": "<", ">": "<=", "<=": ">", "<": ">="},
	"INCREMENT_DECREMENT":   {"++": "--", "--": "++"},
	"INVERT_NEGATIVES":      {"-": "+"},
	"INVERT_LOGICAL":        {"&&": "||", "||": "&&"},
	"INVERT_LOOPCTRL":       {"break": "continue", "continue": "break"},
}

// mayNotCompile are the mutators whose replacement can fail to compile:
// string concatenation made subtraction, a constant expression that
// overflows or divides by zero. The others swap an operator for one valid
// on the same operands.
var mayNotCompile = map[string]bool{"ARITHMETIC_BASE": true, "INVERT_NEGATIVES": true}

// help is what --help says besides the flags.
var help = flagenv.Help{
	Usage: "usage: mutationreport [flags] PKGDIR=RESULT.json ...   (make mutation runs it)",
	Intro: "Reads the JSON results of gremlins runs (make mutation: the simulator's packages\n" +
		"mutated, the conformance suite as the test), completes them where gremlins v0.6.0\n" +
		"falls short (mutants that do not compile, mutants in case expressions) and prints\n" +
		"the figures per package and every surviving mutant with its source line, to be\n" +
		"classified (docs/mutation.md). Each argument is a package directory, relative to\n" +
		"the module root, and the JSON gremlins wrote for it. Its flags have no variables.",
	ExitCodes: []flagenv.ExitCode{
		{Code: 0, Meaning: "reported, survivors or not (also --help)"},
		{Code: 1, Meaning: "a result could not be read or a mutant not tested"},
		{Code: 2, Meaning: "usage error: a flag or argument is wrong"},
	},
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mutationreport", flag.ContinueOnError)
	flagenv.Quiet(fs)
	checkViable := fs.Bool("check-viable", true, "compile every killed arithmetic mutant again and report those that do not compile as not viable")
	cases := fs.Bool("cases", true, "test the mutants of case expressions that gremlins reports as not covered (see cases.go)")
	ct := caseTest{log: stderr}
	fs.StringVar(&ct.tags, "tags", "mutation", "with -cases: the build tags of the test")
	fs.StringVar(&ct.run, "run", "^TestMutationSuite$", "with -cases: the test to run")
	fs.DurationVar(&ct.timeout, "timeout", time.Minute, "with -cases: the time a mutant's test may take before it counts as timed out")
	if err := flagenv.Parse(fs, args); errors.Is(err, flag.ErrHelp) {
		flagenv.WriteHelp(stdout, fs, help)
		return 0
	} else if err != nil {
		fmt.Fprintf(stderr, "mutationreport: usage error: %v\n%s\n", err, help.Usage)
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintf(stderr, "mutationreport: usage error: no PKGDIR=RESULT.json given\n%s\n", help.Usage)
		return 2
	}
	var pkgs []string
	byPkg := map[string][]mutant{}
	for _, arg := range fs.Args() {
		dir, file, ok := strings.Cut(arg, "=")
		if !ok || dir == "" || file == "" {
			fmt.Fprintf(stderr, "usage error: %q is not PKGDIR=RESULT.json\n", arg)
			return 2
		}
		ms, err := readResult(filepath.ToSlash(filepath.Clean(dir)), file)
		if err != nil {
			fmt.Fprintf(stderr, "mutationreport: %v\n", err)
			return 1
		}
		pkgs = append(pkgs, dir)
		byPkg[dir] = ms
	}
	// A dry run (--dry-run) tests nothing: neither does the report.
	dry := false
	for _, p := range pkgs {
		dry = dry || slices.ContainsFunc(byPkg[p], func(m mutant) bool { return m.Status == statusRunnable })
	}
	caseTested := 0
	if *cases && !dry {
		for _, p := range pkgs {
			n, err := ct.runCases(ctx, p, byPkg[p])
			caseTested += n
			if err != nil {
				fmt.Fprintf(stderr, "mutationreport: %v\n", err)
				return 1
			}
		}
	}
	if *checkViable {
		for _, p := range pkgs {
			if err := markNotViable(ctx, byPkg[p]); err != nil {
				fmt.Fprintf(stderr, "mutationreport: %v\n", err)
				return 1
			}
		}
	}
	report(stdout, pkgs, byPkg, caseTested)
	return 0
}

// readResult reads one gremlins result for the package in dir, and the
// operator and source line of each mutant from the source.
func readResult(dir, file string) ([]mutant, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var r result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("decode %s: %w", file, err)
	}
	var out []mutant
	for _, f := range r.Files {
		name := dir + "/" + filepath.ToSlash(f.FileName)
		src, err := os.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w (run the report from the module root, on the tree gremlins ran on)", file, err)
		}
		for _, m := range f.Mutations {
			mt := mutant{pkg: dir, file: name, mutation: m}
			mt.from, mt.source = operatorAt(src, m.Line, m.Column)
			mt.to = cmp.Or(mutations[m.Type][mt.from], "?")
			out = append(out, mt)
		}
	}
	slices.SortFunc(out, func(a, b mutant) int {
		return cmp.Or(cmp.Compare(a.file, b.file), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column), cmp.Compare(a.Type, b.Type))
	})
	return out, nil
}

// operatorAt returns the token of src at line:col (gremlins' position:
// 1-based, the column in bytes) and the line it is on, trimmed.
func operatorAt(src []byte, line, col int) (op, text string) {
	fset := token.NewFileSet()
	f := fset.AddFile("", -1, len(src))
	var s scanner.Scanner
	s.Init(f, src, nil, 0)
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		if p := fset.Position(pos); p.Line == line && p.Column == col {
			op = cmp.Or(lit, tok.String())
			break
		}
	}
	lines := bytes.Split(src, []byte("\n"))
	if line >= 1 && line <= len(lines) {
		text = strings.TrimSpace(string(lines[line-1]))
	}
	return op, text
}

// markNotViable compiles again, with the mutation applied through go build
// -overlay, every killed mutant of ms whose mutator may produce code that
// does not compile, and marks those that do not as NOT VIABLE.
func markNotViable(ctx context.Context, ms []mutant) error {
	dir, err := os.MkdirTemp("", "mutationreport-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	for i := range ms {
		m := &ms[i]
		if m.Status != statusKilled || !mayNotCompile[m.Type] || m.to == "?" {
			continue
		}
		ok, err := compiles(ctx, dir, *m)
		if err != nil {
			return err
		}
		if !ok {
			m.Status = statusNotViable
		}
	}
	return nil
}

// compiles reports whether m's package builds with m applied.
func compiles(ctx context.Context, tmp string, m mutant) (bool, error) {
	overlay, err := writeOverlay(tmp, m)
	if err != nil {
		return false, err
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-overlay", overlay, "./"+m.pkg)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("go build %s: %w: %s", m.pkg, err, out)
	}
	return true, nil
}

// writeOverlay writes m's file with m applied, and a go build -overlay file
// that puts it in place of the original, into tmp; it returns the latter.
func writeOverlay(tmp string, m mutant) (string, error) {
	src, err := os.ReadFile(m.file)
	if err != nil {
		return "", err
	}
	mutated, err := apply(src, m)
	if err != nil {
		return "", err
	}
	abs, err := filepath.Abs(m.file)
	if err != nil {
		return "", err
	}
	file := filepath.Join(tmp, "mutant.go")
	if err := os.WriteFile(file, mutated, 0o600); err != nil {
		return "", err
	}
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": {abs: file}})
	if err != nil {
		return "", err
	}
	overlayFile := filepath.Join(tmp, "overlay.json")
	return overlayFile, os.WriteFile(overlayFile, overlay, 0o600)
}

// apply returns src with m's operator replaced, as gremlins replaces it.
func apply(src []byte, m mutant) ([]byte, error) {
	lines := bytes.SplitAfter(src, []byte("\n"))
	if m.Line < 1 || m.Line > len(lines) {
		return nil, fmt.Errorf("%s: no line %d", m.file, m.Line)
	}
	l := lines[m.Line-1]
	i := m.Column - 1
	if i < 0 || !bytes.HasPrefix(l[i:], []byte(m.from)) {
		return nil, fmt.Errorf("%s: %q is not at column %d", m.position(), m.from, m.Column)
	}
	lines[m.Line-1] = slices.Concat(l[:i], []byte(m.to), l[i+len(m.from):])
	return bytes.Join(lines, nil), nil
}

// counts are the figures of one package (or of all).
type counts struct {
	found, notCovered, killed, lived, timedOut, notViable, skipped int
}

func (c *counts) add(status string) {
	c.found++
	switch status {
	case statusNotCovered:
		c.notCovered++
	case statusKilled:
		c.killed++
	case statusLived:
		c.lived++
	case statusTimedOut:
		c.timedOut++
	case statusNotViable:
		c.notViable++
	case statusSkipped:
		c.skipped++
	}
}

// efficacy is gremlins' figure: killed over killed and lived.
func (c counts) efficacy() string {
	if c.killed+c.lived == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(c.killed)/float64(c.killed+c.lived))
}

func report(w io.Writer, pkgs []string, byPkg map[string][]mutant, caseTested int) {
	var total counts
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "package\tfound\tnot covered\tcovered\tkilled\tlived\ttimed out\tnot viable\tefficacy\t")
	row := func(name string, c counts) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t\n", name, c.found, c.notCovered, c.found-c.notCovered-c.skipped,
			c.killed, c.lived, c.timedOut, c.notViable, c.efficacy())
	}
	var lived, timedOut, notViable []mutant
	for _, p := range pkgs {
		var c counts
		for _, m := range byPkg[p] {
			c.add(m.Status)
			total.add(m.Status)
			switch m.Status {
			case statusLived:
				lived = append(lived, m)
			case statusTimedOut:
				timedOut = append(timedOut, m)
			case statusNotViable:
				notViable = append(notViable, m)
			}
		}
		row(p, c)
	}
	if len(pkgs) > 1 {
		row("total", total)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nefficacy = killed / (killed + lived); a mutant that did not compile is not viable, not killed.")
	if caseTested > 0 {
		fmt.Fprintf(w, "%d of the covered mutants are in case expressions, which gremlins reports as not covered: this report tested them ([case]).\n", caseTested)
	}
	list := func(title string, ms []mutant) {
		if len(ms) == 0 {
			return
		}
		fmt.Fprintf(w, "\n%s (%d):\n", title, len(ms))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, m := range ms {
			typ := m.Type
			if m.inCase {
				typ += " [case]"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s → %s\t%s\n", m.position(), typ, m.from, m.to, m.source)
		}
		tw.Flush()
	}
	list("Timed out (the suite did not finish in time against the mutant)", timedOut)
	list("Not viable (did not compile)", notViable)
	list("Survived: the suite passes against the mutated simulator", lived)
	switch {
	case total.killed+total.lived+total.timedOut+total.notViable == 0:
		fmt.Fprintln(w, "\nNo mutant was run (a dry run?).")
	case len(lived) == 0:
		fmt.Fprintln(w, "\nNo mutant survived.")
	}
}
