package simtest_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator/simtest"
)

// BenchmarkStart is what one simulator costs a test: start (certificate,
// 120 seeded campaigns per account, two listeners), one Campaign List
// (spec §4.2) over a new TLS connection, close. start-ms/op is the start
// alone, what simtest.New adds before a test's first line. docs/simtest.md
// quotes both.
func BenchmarkStart(b *testing.B) {
	var starting time.Duration
	for b.Loop() {
		t0 := time.Now()
		s, err := simtest.Start()
		if err != nil {
			b.Fatal(err)
		}
		starting += time.Since(t0)
		if status, body := listCampaigns(b, s, 1); status != http.StatusOK {
			b.Fatalf("status %d, body %s", status, body)
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(starting.Microseconds())/1000/float64(b.N), "start-ms/op")
}

// BenchmarkStartParallel starts simulators from parallel goroutines, as
// parallel tests do.
func BenchmarkStartParallel(b *testing.B) {
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			s, err := simtest.Start()
			if err != nil {
				b.Error(err)
				return
			}
			resp, err := s.HTTPClient().Post(s.URL+"/campaign/list", "application/json", strings.NewReader(`{"limit": 1, "page": 1}`))
			if err != nil {
				b.Error(err)
			} else {
				resp.Body.Close() // 401 without credentials: the round trip is what counts
			}
			if err := s.Close(); err != nil {
				b.Error(err)
			}
		}
	})
}
