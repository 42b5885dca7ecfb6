package redisstore_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/metrics"
	"github.com/partner-v3/conformance-kit/simulator/redisstore"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// benchmarkTake measures the Lua limiter at the spec §8 settings, one
// account hammered from parallel goroutines with the clock advancing 1 ms a
// take: past the first 100, most takes trim one member and are refused,
// the steady state of a client that ignores 429s.
func benchmarkTake(b *testing.B, url string) {
	db := MustOpenDB(b, url)
	counter := redisstore.NewRateCounter(db, spec.RateLimit, spec.RateWindow)
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

// BenchmarkAdmit_RedisServer compares the one-script gate with the stores
// composed (clock GET, Take script, TakeFault script) for the request of
// one account each, all allowed, no fault pending: what each served
// partner request costs before its operation.
func BenchmarkAdmit_RedisServer(b *testing.B) {
	benchmarkAdmit(b, realRedisURL(b))
}

// BenchmarkAdmit_RedisCluster is BenchmarkAdmit_RedisServer on a
// three-master cluster of its own (issue 21), where the one-script gate
// runs as per-slot steps.
func BenchmarkAdmit_RedisCluster(b *testing.B) {
	benchmarkAdmit(b, startRedisCluster(b).URL)
}

func benchmarkAdmit(b *testing.B, url string) {
	gates := []struct {
		name string
		gate func(db *redisstore.DB) simulator.Gate
	}{
		{"one script", func(db *redisstore.DB) simulator.Gate { return redisstore.NewGate(db, 1<<30, time.Minute) }},
		{"stores composed", func(db *redisstore.DB) simulator.Gate {
			return simulator.StoreGate{Control: redisstore.NewControlStore(db), Counter: redisstore.NewRateCounter(db, 1<<30, time.Minute)}
		}},
	}
	for _, g := range gates {
		b.Run(g.name, func(b *testing.B) {
			db := MustOpenDB(b, url)
			gate := g.gate(db)
			ctx := context.Background()
			start := time.Now()
			var n atomic.Int64
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				acc := fmt.Sprintf("acc%d", n.Add(1))
				i := 0
				for pb.Next() {
					i++
					// A new window each time: the set stays small.
					real := start.Add(time.Duration(i) * time.Minute)
					if _, err := gate.Admit(ctx, simulator.Arrival{AccountID: acc, Operation: spec.PathCampaignList, Real: real}); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkAuthenticate_RedisServer compares the authentication of a
// configured account (in memory, no round trip) with that of a throwaway
// account (one HGET, issue 12), from parallel goroutines.
func BenchmarkAuthenticate_RedisServer(b *testing.B) {
	db := MustOpenDB(b, realRedisURL(b))
	configured := []*simulator.Account{
		{APIKey: "key-alpha", APISecret: "secret-alpha", AccountID: "acc_alpha"},
		{APIKey: "key-bravo", APISecret: "secret-bravo", AccountID: "acc_bravo"},
	}
	s := redisstore.NewAccountStore(db, configured, simulator.AccountDefaults{Seed: 1, Campaigns: 120})
	ctx := context.Background()
	tmp, err := simulator.NewThrowawayAccount(simulator.AccountSpec{}, s.AccountDefaults(), time.Now())
	if err != nil {
		b.Fatal(err)
	}
	if err := s.CreateAccount(ctx, tmp); err != nil {
		b.Fatal(err)
	}
	for _, a := range []struct {
		name string
		acc  *simulator.Account
	}{{"configured", configured[1]}, {"throwaway", &tmp.Account}} {
		b.Run(a.name, func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := s.Authenticate(ctx, a.acc.APIKey, a.acc.APISecret); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkObserve_RedisServer measures what the metrics' hook (DB.Observe)
// costs a round trip: the gate's one script, serially, without and with
// the simulator's metrics observing it.
func BenchmarkObserve_RedisServer(b *testing.B) {
	url := realRedisURL(b)
	for _, observed := range []bool{false, true} {
		b.Run(fmt.Sprintf("observed=%v", observed), func(b *testing.B) {
			db := MustOpenDB(b, url)
			if observed {
				db.Observe(metrics.New(metrics.Sources{}))
			}
			gate := redisstore.NewGate(db, 1<<30, time.Minute)
			ctx := context.Background()
			start := time.Now()
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				i++
				real := start.Add(time.Duration(i) * time.Minute)
				if _, err := gate.Admit(ctx, simulator.Arrival{AccountID: "acc", Operation: spec.PathCampaignList, Real: real}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
