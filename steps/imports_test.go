package steps_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestStepsNeverImportTheSimulator checks STYLE §1 for the suite (steps and
// everything under it): it gets a URL, so the same steps run against any
// deployment. Of the simulator it may import the domain package, the spec's
// facts, the profile format (which learn writes) and the control client
// only, never the server, the stores or their composition.
func TestStepsNeverImportTheSimulator(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", "./...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	const module = "github.com/partner-v3/conformance-kit/"
	packages := []string{"simulator", "simulator/spec", "simulator/profile", "simulator/control"} // these, not below them
	trees := []string{"steps", "features", "fixtures"}                                            // these and below
	ours := 0
	for _, p := range strings.Fields(string(out)) {
		rel, ok := strings.CutPrefix(p, module)
		if !ok {
			continue
		}
		ours++
		ok = slices.Contains(packages, rel)
		for _, tree := range trees {
			ok = ok || rel == tree || strings.HasPrefix(rel, tree+"/")
		}
		if !ok {
			t.Errorf("the suite depends on %s", p)
		}
	}
	if ours < 5 {
		t.Fatalf("go list -deps named %d of our packages: %s", ours, out)
	}
}
