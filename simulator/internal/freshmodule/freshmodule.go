// Package freshmodule makes, for a test, a Go module outside the
// repository that requires this kit as a partner's own module does (with
// a replace directive to this checkout), and runs the go command in it:
// what a partner meets importing the kit, checked from outside.
package freshmodule

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// GoDirective is the go directive of the partner's module: the kit's own,
// which go mod tidy must leave as it is.
const GoDirective = "go 1.25.0"

// goMod is the partner's go.mod before it depends on the kit.
const goMod = "module example.com/partner\n\n" + GoDirective + "\n"

// KitModule is the kit's module path.
const KitModule = "github.com/partner-v3/conformance-kit"

// EditArgs are the arguments of the go command that makes a partner's
// module depend on a clone of the kit at root: the recipe docs/simtest.md
// gives ("Depend on the kit"), since no public module proxy serves the
// kit and go get cannot fetch it. New runs exactly these.
func EditArgs(root string) []string {
	return []string{"mod", "edit", "-require=" + KitModule + "@v0.0.0", "-replace=" + KitModule + "=" + root}
}

// Module is a partner's module in a temporary directory.
type Module struct {
	Dir string
	t   testing.TB
	env []string
}

// New writes a module whose one file is partner_test.go with testFile's
// source, and the kit's go.sum (known checksums: no lookups). Its go
// commands run in the partner's environment: this one without GOFLAGS,
// GOWORK and the variables named by the drop prefixes, in module mode.
func New(t testing.TB, testFile string, drop ...string) *Module {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	m := &Module{Dir: t.TempDir(), t: t} // outside the repository
	for name, data := range map[string]string{
		"go.mod":          goMod,
		"go.sum":          string(sum),
		"partner_test.go": testFile,
	} {
		if err := os.WriteFile(filepath.Join(m.Dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	drop = append(drop, "GOFLAGS=", "GOWORK=")
	for _, kv := range os.Environ() {
		if !hasAnyPrefix(kv, drop) {
			m.env = append(m.env, kv)
		}
	}
	m.env = append(m.env, "GOWORK=off", "GOFLAGS=-mod=mod -buildvcs=false")
	m.Go(EditArgs(root)...)
	return m
}

// Setenv adds K=V to the module's environment.
func (m *Module) Setenv(kv string) { m.env = append(m.env, kv) }

// Go runs the go command in the module and returns its output. A go that
// cannot fetch a module (no network, no proxy) skips the test, unless
// REQUIRE_OPENAPI_TOOLS=1 (CI, where the module proxy must answer) or
// REQUIRE_MODULE_PROXY=1 asks it to fail; any other failure fails it.
func (m *Module) Go(args ...string) string {
	m.t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir, cmd.Env = m.Dir, m.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		if networkFailure(string(out)) && os.Getenv("REQUIRE_OPENAPI_TOOLS") == "" && os.Getenv("REQUIRE_MODULE_PROXY") == "" {
			m.t.Skipf("go %s cannot fetch modules (set REQUIRE_MODULE_PROXY=1 to fail instead): %v\n%s", strings.Join(args, " "), err, out)
		}
		m.t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// CheckGoDirective fails the test when the module's go directive is no
// longer GoDirective: the kit must not raise a partner's Go version.
func (m *Module) CheckGoDirective() {
	m.t.Helper()
	mod, err := os.ReadFile(filepath.Join(m.Dir, "go.mod"))
	if err != nil || !strings.Contains(string(mod), "\n"+GoDirective+"\n") {
		m.t.Errorf("the partner's go.mod (%v) no longer says %s:\n%s", err, GoDirective, mod)
	}
}

// ReadFile returns one of the module's files.
func (m *Module) ReadFile(name string) string {
	m.t.Helper()
	b, err := os.ReadFile(filepath.Join(m.Dir, name))
	if err != nil {
		m.t.Fatal(err)
	}
	return string(b)
}

// networkFailure reports whether go's output says a module could not be
// fetched, rather than that the kit is broken.
func networkFailure(out string) bool {
	for _, s := range []string{"dial tcp", "no such host", "i/o timeout", "connection refused", "GOPROXY=off", "network is unreachable", "TLS handshake timeout"} {
		if strings.Contains(out, s) {
			return true
		}
	}
	return false
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// moduleRoot is the directory of this kit's go.mod, above the test's
// working directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("freshmodule: no go.mod above the working directory")
		}
		dir = parent
	}
}
