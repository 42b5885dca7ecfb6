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
