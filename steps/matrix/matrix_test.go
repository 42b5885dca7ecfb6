package matrix

import (
	"slices"
	"testing"

	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// TestKnownOperations: the matrix names only operations of the spec's
// table and each of them somewhere, and a rule naming another is refused.
func TestKnownOperations(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Matrix() {
		for _, op := range r.Operations {
			seen[op] = true
		}
	}
	for _, name := range spec.Names() {
		if !seen[name] {
			t.Errorf("no rule applies to %s", name)
		}
	}
	for _, rules := range [][]Rule{
		{{ID: "x", Operations: append(spec.Names(), "Campaign Delete")}},
		{{ID: "x"}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("knownOperations(%+v) returned instead of panicking", rules)
				}
			}()
			knownOperations(rules)
		}()
	}
	if got := knownOperations(slices.Clone(matrix)); len(got) != len(matrix) {
		t.Errorf("knownOperations kept %d of %d rules", len(got), len(matrix))
	}
}
