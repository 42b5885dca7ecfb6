package partnerapi

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
	"weak"

	"github.com/partner-v3/conformance-kit/simulator/profile"
)

// TestPlayOf_Cache: one play per profile, resolved once, and an entry
// gone once its profile is collected.
func TestPlayOf_Cache(t *testing.T) {
	if (&API{}).serverPlay() != ownPlay {
		t.Fatal("a server without a profile does not play default.json's resolved choices")
	}
	p := profile.Default()
	if a, b := playOf(p), playOf(p); a != b || a == ownPlay {
		t.Fatalf("playOf twice: %p, %p (no profile's %p)", a, b, ownPlay)
	}
	key := weak.Make(p)
	if _, ok := plays.Load(key); !ok {
		t.Fatal("no cache entry")
	}
	p = nil
	for range 20 {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
		if _, ok := plays.Load(key); !ok {
			return
		}
	}
	t.Error("the entry outlived its profile")
}

// TestPlay_DefaultIsData (issue 31, step 2): default.json resolves to one
// play however it comes (profile.Default(), the file written and read
// back), and a server without a profile plays the same choices: the
// handlers, which read nothing but the play, cannot tell them apart.
func TestPlay_DefaultIsData(t *testing.T) {
	data, err := profile.Default().Marshal()
	if err != nil {
		t.Fatal(err)
	}
	read, err := profile.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	a, b := newPlay(profile.Default()), newPlay(read)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("default.json read back plays otherwise:\n%+v\n%+v", a, b)
	}
	// The one difference of no profile at all: whether the profile itself
	// names its body limit (else the server's --max-body-bytes is played).
	own := newPlay(noChoices()) // as ownPlay is made
	own.bodyLimitKnown = true
	if !reflect.DeepEqual(own, a) {
		t.Fatalf("no profile plays otherwise than default.json:\n%+v\n%+v", own, a)
	}
}

// TestNoDefaultBranch (issue 31, step 2): only the resolution of a
// profile (newPlay, and the server's choice of its profile) reads
// default.json or its play; no handler or middleware can ask "is this the
// default?". Deleting a built-in branch changes nothing: there is none.
func TestNoDefaultBranch(t *testing.T) {
	allowed := map[string][]string{
		"defaultChoices": {"newPlay", "serverProfile", "ProfileInfo"},
		"ownPlay":        {"serverPlay"},
		"noChoices":      {},
		"Default":        {}, // profile.Default: read once, into defaultChoices
	}
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok {
				continue // the package's variables: where the default is read
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				id, ok := n.(*ast.Ident)
				if !ok {
					return true
				}
				if users, watched := allowed[id.Name]; watched && !slices.Contains(users, fn.Name.Name) {
					t.Errorf("%s: %s reads %s: only a profile's resolution may", fset.Position(id.Pos()), fn.Name.Name, id.Name)
				}
				return true
			})
		}
	}
	for _, f := range reflect.VisibleFields(reflect.TypeFor[play]()) {
		if strings.Contains(f.Name, "Default") || strings.Contains(f.Name, "Plain") || strings.Contains(f.Name, "default") {
			t.Errorf("play.%s: a play holds choices, not whether they are the default's", f.Name)
		}
	}
}
