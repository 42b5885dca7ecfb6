package inmem_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator/inmem"
)

// BenchmarkRateCounter_Take measures one decision with the window full of
// the spec's 100 requests (§8), across 1000 accounts and in parallel.
func BenchmarkRateCounter_Take(b *testing.B) {
	c := inmem.NewRateCounter(100, time.Minute)
	ctx := context.Background()
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = fmt.Sprintf("acc_%d", i)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			i++
			// 1 ms apart per key: windows keep sliding, requests keep expiring.
			if _, err := c.Take(ctx, keys[i%len(keys)], start.Add(time.Duration(i)*time.Millisecond)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkRateCounter_TakeHighLimit measures a decision under a limit no
// run reaches (cmd/load's --rate-limit 1000000000): one account, requests
// 100 µs apart, so the window holds 600,000 of them and every Take both
// adds one and expires one. What it costs is the log's upkeep and what the
// garbage collector spends on it.
func BenchmarkRateCounter_TakeHighLimit(b *testing.B) {
	c := inmem.NewRateCounter(1_000_000_000, time.Minute)
	ctx := context.Background()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := c.Take(ctx, "acc", start.Add(time.Duration(i)*100*time.Microsecond)); err != nil {
			b.Fatal(err)
		}
	}
}
