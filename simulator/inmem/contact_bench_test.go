package inmem_test

import (
	"testing"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/inmem"
	"github.com/partner-v3/conformance-kit/simulator/storetest"
)

// BenchmarkUpsertContact: a new contact and a merge cost the same with
// none or a million stored contacts (the indexes).
func BenchmarkUpsertContact(b *testing.B) {
	storetest.BenchmarkUpsertContact(b, []int{0, 1_000_000}, func(*testing.B) simulator.ContactSeeder {
		return inmem.NewContactStore()
	})
}
