package violation

import (
	"maps"
	"slices"
	"testing"

	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// TestOperationPathRefusesAnUnknownOperation: a matrix operation the spec's
// table lacks stops the cells' init instead of becoming another
// operation's cell (it used to become Campaign Stats'), and every operation
// of the table is found.
func TestOperationPathRefusesAnUnknownOperation(t *testing.T) {
	for _, o := range spec.Operations() {
		if got := operationPath(o.Name); got != o.Path {
			t.Errorf("operationPath(%q) = %q, want %q", o.Name, got, o.Path)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("operationPath of an operation the spec lacks returned instead of panicking")
		}
	}()
	operationPath("Campaign Delete")
}

// TestOKBreaksAreTheSpecsOperations: the table of every-answer's AnswerOK
// breaches is keyed by exactly the spec's operation paths (a missing one
// already stops the cells' init; a stale one would be dead code).
func TestOKBreaksAreTheSpecsOperations(t *testing.T) {
	if got, want := slices.Sorted(maps.Keys(okBreaks)), slices.Sorted(slices.Values(spec.Paths())); !slices.Equal(got, want) {
		t.Errorf("okBreaks has %q, want the spec's operations %q", got, want)
	}
}
