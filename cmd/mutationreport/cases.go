package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The case pass. gremlins v0.6.0 takes a mutant as covered only when its
// position lies inside a block of the coverage profile, and go test's
// blocks around a switch stop at "switch {" and start again after each
// case's colon: an operator in a case expression (case l > spec.MaxPageSize:)
// lies in no block, so gremlins reports it NOT COVERED and never tests it,
// however often the suite runs it. The case pass finds those mutants in a
// switch the suite did reach (by the package's coverage under the test of
// the run) and runs the test on each itself, the mutation applied with go
// test -overlay.

// caseTest is how the case pass runs the test of a mutation run: the same
// tag and the same single test as make mutation gives gremlins.
type caseTest struct {
	tags, run string
	timeout   time.Duration
	log       io.Writer
}

// block is one block of a coverage profile.
type block struct {
	startLine, startCol, endLine, endCol, count int
}

func (b block) holds(line, col int) bool {
	after := line > b.startLine || line == b.startLine && col >= b.startCol
	before := line < b.endLine || line == b.endLine && col < b.endCol
	return after && before
}

// runCases runs the case pass over the mutants of the package in dir,
// updating the status of each it tests, and reports how many it tested.
func (ct caseTest) runCases(ctx context.Context, dir string, ms []mutant) (int, error) {
	var todo []int
	for i, m := range ms {
		if m.Status == statusNotCovered && m.to != "?" {
			todo = append(todo, i)
		}
	}
	if len(todo) == 0 {
		return 0, nil
	}
	tmp, err := os.MkdirTemp("", "mutationreport-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)
	profile, err := ct.coverage(ctx, dir, tmp)
	if err != nil {
		return 0, err
	}
	reached := map[string]func(line, col int) bool{}
	tested := 0
	for _, i := range todo {
		m := &ms[i]
		inCase, ok := reached[m.file]
		if !ok {
			if inCase, err = caseExpressions(m.file, profile[m.file]); err != nil {
				return tested, err
			}
			reached[m.file] = inCase
		}
		if !inCase(m.Line, m.Column) {
			continue
		}
		status, err := ct.test(ctx, tmp, *m)
		if err != nil {
			return tested, err
		}
		fmt.Fprintf(ct.log, "%12s %s at %s (case expression)\n", status, m.Type, m.position())
		m.Status, m.inCase = status, true
		tested++
	}
	return tested, nil
}

// coverage runs the test of the run on the package in dir with a coverage
// profile and returns its blocks that ran, by file (named from the module
// root).
func (ct caseTest) coverage(ctx context.Context, dir, tmp string) (map[string][]block, error) {
	out := filepath.Join(tmp, "cover.out")
	cmd := exec.CommandContext(ctx, "go", "test", "-tags", ct.tags, "-run", ct.run, "-count=1", "-vet=off",
		"-coverprofile", out, "./"+dir)
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("coverage of %s (the test must pass on the unmutated tree): %w\n%s", dir, err, b)
	}
	f, err := os.Open(out)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	profile := map[string][]block{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// import/path/file.go:startLine.startCol,endLine.endCol statements count
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || strings.HasPrefix(sc.Text(), "mode:") {
			continue
		}
		var b block
		var stmts int
		if _, err := fmt.Sscanf(rest, "%d.%d,%d.%d %d %d", &b.startLine, &b.startCol, &b.endLine, &b.endCol, &stmts, &b.count); err != nil {
			return nil, fmt.Errorf("coverage profile line %q: %w", sc.Text(), err)
		}
		if b.count == 0 {
			continue
		}
		// The profile names files by import path; the mutants, by path from
		// the module root, which the import path ends with.
		file := dir + "/" + filepath.Base(name)
		if !strings.HasSuffix(name, "/"+file) {
			continue
		}
		profile[file] = append(profile[file], b)
	}
	return profile, sc.Err()
}

// caseExpressions parses file and returns whether a position lies in a
// case expression of a switch statement that one of blocks reached.
func caseExpressions(file string, blocks []block) (func(line, col int) bool, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, 0)
	if err != nil {
		return nil, err
	}
	type span struct{ from, to token.Position }
	var spans []span
	ast.Inspect(f, func(n ast.Node) bool {
		sw, ok := n.(*ast.SwitchStmt)
		if !ok {
			return true
		}
		at := fset.Position(sw.Switch)
		ran := false
		for _, b := range blocks {
			ran = ran || b.holds(at.Line, at.Column)
		}
		if !ran {
			return true
		}
		for _, st := range sw.Body.List {
			for _, e := range st.(*ast.CaseClause).List {
				spans = append(spans, span{fset.Position(e.Pos()), fset.Position(e.End())})
			}
		}
		return true
	})
	return func(line, col int) bool {
		for _, s := range spans {
			b := block{s.from.Line, s.from.Column, s.to.Line, s.to.Column, 1}
			if b.holds(line, col) {
				return true
			}
		}
		return false
	}, nil
}

// test runs the test of the run against the package with m applied and
// returns gremlins' status for the outcome.
func (ct caseTest) test(ctx context.Context, tmp string, m mutant) (string, error) {
	overlay, err := writeOverlay(tmp, m)
	if err != nil {
		return "", err
	}
	tctx, cancel := context.WithTimeout(ctx, ct.timeout)
	defer cancel()
	cmd := exec.CommandContext(tctx, "go", "test", "-overlay", overlay, "-tags", ct.tags, "-run", ct.run,
		"-count=1", "-vet=off", "-failfast", "-timeout", strconv.Itoa(int((ct.timeout+time.Minute).Seconds()))+"s", "./"+m.pkg)
	out, err := cmd.CombinedOutput()
	switch {
	case ctx.Err() != nil:
		return "", ctx.Err()
	case tctx.Err() != nil:
		return statusTimedOut, nil
	case err == nil:
		return statusLived, nil
	case bytes.Contains(out, []byte("[build failed]")) || bytes.Contains(out, []byte("[setup failed]")):
		return statusNotViable, nil
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return statusKilled, nil
	}
	return "", fmt.Errorf("go test %s: %w: %s", m.pkg, err, out)
}
