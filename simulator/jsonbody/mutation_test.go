//go:build mutation

package jsonbody_test

import (
	"testing"

	"github.com/partner-v3/conformance-kit/simulator/internal/mutation"
)

// TestMutationSuite is the test of a mutation run over this package (make
// mutation, docs/mutation.md): the conformance suite against a simulator
// built from this package as gremlins mutated it.
func TestMutationSuite(t *testing.T) { mutation.Suite(t) }
