package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/redisstore"
)

// benchmarkTake measures the Lua limiter at the spec §8 settings, one
// account hammered from parallel goroutines with the clock advancing 1 ms a
// take: past the first 100, most takes trim one member and are refused,
// the steady state of a client that ignores 429s.
func benchmarkTake(b *testing.B, url string) {
	db := MustOpenDB(b, url)
	counter := redisstore.NewRateCounter(db, simulator.DefaultRateLimit, simulator.DefaultRateWindow)
	ctx := context.Background()
	start := time.Now()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			i++
			if _, err := counter.Take(ctx, "acc", start.Add(time.Duration(i)*time.Millisecond)); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkTake_Miniredis(b *testing.B) {
	m := miniredis.RunT(b)
	benchmarkTake(b, "redis://"+m.Addr()+"/0")
}

func BenchmarkTake_RedisServer(b *testing.B) {
	benchmarkTake(b, realRedisURL(b))
}
