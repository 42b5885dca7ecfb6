package partnerapi_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/partner-v3/conformance-kit/simulator/internal/apitest"
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
			s := detailSim(b, false, on)
			if err := s.Open(); err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { s.Close() })
			leaf, err := x509.ParseCertificate(s.Cert.TLS.Certificate[0])
			if err != nil {
				b.Fatal(err)
			}
			pool := x509.NewCertPool()
			pool.AddCert(leaf)
			client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, MaxIdleConnsPerHost: 64}}
			b.Cleanup(client.CloseIdleConnections)
			a := s.Accounts[0]
			var seq atomic.Int64
			for _, o := range benchOps(firstCampaign(b, s)) {
				url := s.URL() + "/" + o.op
				b.Run(o.name, func(b *testing.B) {
					b.ReportAllocs()
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader([]byte(o.body(seq.Add(1)))))
							if err != nil {
								panic(err)
							}
							apitest.SetCredentials(req.Header, a)
							resp, err := client.Do(req)
							if err != nil {
								b.Error(err)
								return
							}
							_, _ = io.Copy(io.Discard, resp.Body)
							resp.Body.Close()
							if resp.StatusCode != http.StatusOK {
								b.Errorf("status %d", resp.StatusCode)
								return
							}
						}
					})
				})
			}
		})
	}
}
