package partnerapi_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/partner-v3/conformance-kit/simulator/sim"
)

// detailSim is newBenchSim's simulator keeping the exchanges in full
// (the default, 500) or none.
func detailSim(b *testing.B, insecure, on bool) *sim.Simulator {
	b.Helper()
	cfg := sim.Config{Addr: "127.0.0.1:0", Insecure: insecure, DataDir: b.TempDir(), RateLimit: 1 << 30}
	if !on {
		cfg.JournalDetail = -1
	}
	s, err := sim.New(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	return s
}

func detailName(on bool) string {
	if on {
		return "detail=on"
	}
	return "detail=off"
}

// BenchmarkHandlerJournalDetail measures what keeping the latest exchanges
// in full (GET /journal/{requestId}, issue 30) costs a request in-process:
// BenchmarkHandler's request with the ring on (the default) and off. The
// allocations must be the same once the ring has gone round.
func BenchmarkHandlerJournalDetail(b *testing.B) {
	var seq atomic.Int64
	for _, o := range benchOps(firstCampaign(b, newBenchSim(b, true))) {
		for _, on := range []bool{true, false} {
			b.Run(o.name+"/"+detailName(on), func(b *testing.B) {
				serveLoop(b, detailSim(b, true, on), o, &seq)
			})
		}
	}
}

// BenchmarkHTTPSJournalDetail is BenchmarkHTTPS with the ring on and off:
// the form docs/performance.md alternates with farm-bench, one process
// per side.
func BenchmarkHTTPSJournalDetail(b *testing.B) {
	for _, on := range []bool{true, false} {
		b.Run(detailName(on), func(b *testing.B) {
			benchHTTPS(b, detailSim(b, false, on))
		})
	}
}
