package redisstore_test

import (
	"testing"

	"github.com/alicebob/miniredis/v2"

	"github.com/partner-v3/conformance-kit/simulator"

	"github.com/partner-v3/conformance-kit/simulator/redisstore"
	"github.com/partner-v3/conformance-kit/simulator/storetest"
)

// benchmarkUpsertContact runs storetest's UpsertContact benchmark on the
// Redis at url, a fresh key prefix per size.
func benchmarkUpsertContact(b *testing.B, url string, sizes []int) {
	storetest.BenchmarkUpsertContact(b, sizes, func(b *testing.B) simulator.ContactSeeder {
		return redisstore.NewContactStore(MustOpenDB(b, url))
	})
}

// Miniredis keeps everything in Go maps: a million stored contacts there
// measure miniredis more than the store, so it stops at 100,000.
func BenchmarkUpsertContact_Miniredis(b *testing.B) {
	m := miniredis.RunT(b)
	benchmarkUpsertContact(b, "redis://"+m.Addr()+"/0", []int{0, 100_000})
}

func BenchmarkUpsertContact_RedisServer(b *testing.B) {
	benchmarkUpsertContact(b, realRedisURL(b), []int{0, 1_000_000})
}
