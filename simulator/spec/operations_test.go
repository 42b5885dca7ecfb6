package spec_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// specImport is this package's import path, as the scanned files import it.
const specImport = "github.com/partner-v3/conformance-kit/simulator/spec"

// pendingSwitches are the per-operation switches with a silent default
// that live in packages other work of issue 31 is changing at the same
// time (step 5 left them to it), by file and function, with the table
// lookup that should replace each. The list only shrinks: a switch that
// is gone must leave it, and a new one fails the test.
var pendingSwitches = map[string]string{}

// TestNoSilentOperationSwitch: no switch over the spec's operations, in
// any non-test Go file of the module, lets an operation it does not list
// through silently. A switch that names two or more operations in its
// cases is a per-operation list; when an operation is added to
// spec.Operations(), such a switch either knows it or must refuse it
// loudly: its default clause panics or returns an error. That is the bug
// class of metrics' opIndex (a new operation counted as "other") and
// violation's operationPath (one routed to Campaign Stats), which no test
// of behaviour caught because no test knew of the operation yet.
//
// A scan of the source, not a fake fourth operation in a copy of the
// table: the readers build what they derive from the table once, at init,
// from spec.Operations() itself, so a fake operation reaches only the
// readers a test rewires by hand, and the switch someone writes tomorrow
// in a new place is not among them. The scan finds that one too. What it
// cannot see (a chain of ifs, a map keyed by operation) is why the readers
// of this package look operations up in spec's table, and the tables of
// their own (violation's) are checked against it at init.
func TestNoSilentOperationSwitch(t *testing.T) {
	root := filepath.Join("..", "..")
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no module root at %s: the test runs in the wrong directory: %v", root, err)
	}
	ops := operationValues()
	aliases, err := packageAliases(root, ops)
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	scanned := 0
	err = walkGoSources(root, func(path string) error {
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		scanned++
		silent, err := silentSwitches(rel, src, ops, aliases[filepath.Dir(rel)])
		if err != nil {
			return err
		}
		for _, s := range silent {
			found[s.key] = true
			if _, ok := pendingSwitches[s.key]; !ok {
				t.Errorf("%s: a switch over operations %s has no default that refuses an operation it does not list (a panic or an error): "+
					"look the operation up in spec.Operations(), or in a table of your own checked against it", s.pos, strings.Join(s.ops, ", "))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if scanned < 100 {
		t.Fatalf("scanned %d Go files: the walk missed the module", scanned)
	}
	for key, fix := range pendingSwitches {
		if !found[key] {
			t.Errorf("pending switch %q (to become %s) is gone: take it off pendingSwitches", key, fix)
		}
	}
}

// TestSilentSwitchScanCatchesThem proves the scan above can fail: the two
// switches issue 31 found, as they were, and their loud forms.
func TestSilentSwitchScanCatchesThem(t *testing.T) {
	const header = "package x\nimport (\n\t\"fmt\"\n\tsp \"" + specImport + "\"\n)\nvar _ = fmt.Errorf\nconst listPath = sp.PathCampaignList\n"
	tests := []struct {
		name, src string
		silent    bool
	}{
		{"metrics' opIndex: no default, a value after the switch", `func opIndex(op string) int {
	switch op {
	case sp.PathContactAdd:
		return 0
	case listPath:
		return 1
	case sp.PathCampaignStats:
		return 2
	}
	return 3
}`, true},
		{"violation's operationPath: names, the last one the fall-through", `func operationPath(name string) string {
	switch name {
	case sp.OpAddContact:
		return sp.PathContactAdd
	case sp.OpCampaignList:
		return sp.PathCampaignList
	}
	return sp.PathCampaignStats
}`, true},
		{"string literals, a default that returns a value", `func f(op string) int {
	switch op {
	case "contact/add", "campaign/list":
		return 1
	default:
		return 0
	}
}`, true},
		{"a tagless switch naming two operations", `func f(op string, ro bool) int {
	switch {
	case op == sp.OpAddContact && ro:
		return 1
	case op == sp.OpCampaignStats:
		return 2
	}
	return 0
}`, true},
		{"a default that panics", `func f(op string) int {
	switch op {
	case sp.PathContactAdd:
		return 0
	case sp.PathCampaignList:
		return 1
	default:
		panic("unknown operation " + op)
	}
}`, false},
		{"a default that returns an error", `func f(op string) (int, error) {
	switch op {
	case sp.PathContactAdd:
		return 0, nil
	case sp.PathCampaignList:
		return 1, nil
	default:
		return 0, fmt.Errorf("unknown operation %q", op)
	}
}`, false},
		{"one operation singled out is no list of them", `func f(op string) int {
	switch op {
	case sp.PathCampaignList:
		return 1
	}
	return 0
}`, false},
	}
	ops := operationValues()
	aliases := map[string]string{"listPath": spec.PathCampaignList}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			silent, err := silentSwitches("x.go", []byte(header+tt.src), ops, aliases)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(silent) > 0; got != tt.silent {
				t.Errorf("silent = %v (%+v), want %v", got, silent, tt.silent)
			}
		})
	}
	// The aliases of a package are found from its constants.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x.go"), []byte(header), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := packageAliases(dir, ops)
	if err != nil {
		t.Fatal(err)
	}
	if got["."]["listPath"] != spec.PathCampaignList {
		t.Errorf("packageAliases = %v, want listPath in .", got)
	}
}

// operationValues maps every name and path of an operation to its path.
func operationValues() map[string]string {
	out := map[string]string{}
	for _, o := range spec.Operations() {
		out[o.Name], out[o.Path] = o.Path, o.Path
	}
	return out
}

// silentSwitch is one switch over operations without a loud default.
type silentSwitch struct {
	key string   // "dir/file.go function"
	pos string   // "dir/file.go:12"
	ops []string // the operations it names, by path
}

// silentSwitches returns the switches of one file that name two or more
// operations in their cases (spec's constants, string literals, or the
// package's constants in aliases) and have no default, or a default with
// neither a panic nor an error returned.
func silentSwitches(name string, src []byte, ops, aliases map[string]string) ([]silentSwitch, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	specName := specImportName(f)
	opOf := func(e ast.Expr) (string, bool) {
		switch e := e.(type) {
		case *ast.BasicLit:
			if s, err := strconv.Unquote(e.Value); err == nil && e.Kind == token.STRING {
				p, ok := ops[s]
				return p, ok
			}
		case *ast.SelectorExpr:
			if x, ok := e.X.(*ast.Ident); ok && specName != "" && x.Name == specName {
				return specConst(e.Sel.Name, ops)
			}
		case *ast.Ident:
			p, ok := aliases[e.Name] // a package constant naming an operation
			return p, ok
		}
		return "", false
	}
	var out []silentSwitch
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			sw, ok := n.(*ast.SwitchStmt)
			if !ok {
				return true
			}
			named := map[string]bool{}
			var loud, hasDefault bool
			for _, s := range sw.Body.List {
				cc := s.(*ast.CaseClause)
				if cc.List == nil {
					hasDefault = true
					loud = refuses(cc.Body)
					continue
				}
				for _, e := range cc.List {
					ast.Inspect(e, func(n ast.Node) bool {
						if x, ok := n.(ast.Expr); ok {
							if p, ok := opOf(x); ok {
								named[p] = true
								return false
							}
						}
						return true
					})
				}
			}
			if len(named) >= 2 && (!hasDefault || !loud) {
				out = append(out, silentSwitch{
					key: name + " " + fn.Name.Name, // a method by its name alone
					pos: fset.Position(sw.Pos()).String(),
					ops: slices.Sorted(func(yield func(string) bool) {
						for p := range named {
							if !yield(p) {
								return
							}
						}
					}),
				})
			}
			return true
		})
	}
	return out, nil
}

// specImportName is the name a file imports package spec by, or "".
func specImportName(f *ast.File) string {
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == specImport {
			if imp.Name != nil {
				return imp.Name.Name
			}
			return "spec"
		}
	}
	return ""
}

// specConst reports whether spec's exported constant name holds an
// operation's name or path, by reading this package's source.
func specConst(name string, ops map[string]string) (string, bool) {
	v, ok := specConsts()[name]
	if !ok {
		return "", false
	}
	p, ok := ops[v]
	return p, ok
}

// specConsts are the string constants of package spec, by name.
var specConsts = func() func() map[string]string {
	var consts map[string]string
	return func() map[string]string {
		if consts != nil {
			return consts
		}
		consts = map[string]string{}
		files, _ := filepath.Glob("*.go")
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.SkipObjectResolution)
			if err != nil {
				continue
			}
			for k, v := range stringConsts(f) {
				consts[k] = v
			}
		}
		return consts
	}
}()

// stringConsts returns a file's constants whose value is a string literal.
func stringConsts(f *ast.File) map[string]string {
	out := map[string]string{}
	eachConst(f, func(name string, v ast.Expr) {
		if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			out[name], _ = strconv.Unquote(lit.Value)
		}
	})
	return out
}

// eachConst calls fn with the name and value of each constant of f that
// is given a value.
func eachConst(f *ast.File, fn func(name string, v ast.Expr)) {
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if i < len(vs.Values) {
					fn(n.Name, vs.Values[i])
				}
			}
		}
	}
}

// walkGoSources calls fn with the path of each non-test Go file below
// root, leaving out hidden folders, testdata and node_modules.
func walkGoSources(root string, fn func(path string) error) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		return fn(path)
	})
}

// packageAliases returns, by directory relative to root, the package-level
// constants of non-test files that stand for an operation: a spec constant
// (contactAdd = spec.PathContactAdd) or a string literal naming one.
func packageAliases(root string, ops map[string]string) (map[string]map[string]string, error) {
	out := map[string]map[string]string{}
	err := walkGoSources(root, func(path string) error {
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		specName := specImportName(f)
		eachConst(f, func(name string, v ast.Expr) {
			var p string
			var op bool
			switch v := v.(type) {
			case *ast.SelectorExpr:
				if x, ok := v.X.(*ast.Ident); ok && specName != "" && x.Name == specName {
					p, op = specConst(v.Sel.Name, ops)
				}
			case *ast.BasicLit:
				if s, err := strconv.Unquote(v.Value); err == nil && v.Kind == token.STRING {
					p, op = ops[s]
				}
			}
			if op {
				if out[rel] == nil {
					out[rel] = map[string]string{}
				}
				out[rel][name] = p
			}
		})
		return nil
	})
	return out, err
}

// refuses reports whether a default clause refuses loudly: it panics,
// fails (log.Fatal, t.Fatal), or returns an error (a call of fmt.Errorf or
// errors.New, or an error variable: err, Err…).
func refuses(body []ast.Stmt) bool {
	loud := false
	for _, s := range body {
		ast.Inspect(s, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				switch fn := n.Fun.(type) {
				case *ast.Ident:
					loud = loud || fn.Name == "panic"
				case *ast.SelectorExpr:
					loud = loud || strings.HasPrefix(fn.Sel.Name, "Fatal")
				}
			case *ast.ReturnStmt:
				for _, r := range n.Results {
					loud = loud || isError(r)
				}
			}
			return !loud
		})
	}
	return loud
}

// isError reports whether a returned expression is an error made or held.
func isError(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.CallExpr:
		if fn, ok := e.Fun.(*ast.SelectorExpr); ok {
			if x, ok := fn.X.(*ast.Ident); ok {
				return (x.Name == "fmt" && fn.Sel.Name == "Errorf") || (x.Name == "errors" && fn.Sel.Name == "New")
			}
		}
	case *ast.Ident:
		return e.Name == "err" || strings.HasPrefix(e.Name, "Err")
	case *ast.SelectorExpr:
		return strings.HasPrefix(e.Sel.Name, "Err")
	}
	return false
}
