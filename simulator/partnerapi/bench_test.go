package partnerapi_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/internal/apitest"
	"github.com/partner-v3/conformance-kit/simulator/sim"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// benchOp is one operation as the benchmarks send it. body returns the
// request body of the i-th request, so that Add Contact can send a new
// email each time (a create) or the same one (a merge).
type benchOp struct {
	name string
	op   string
	body func(i int64) string
}

// benchOps are the operations of spec §4 under the shapes that matter for
// cost: a full page of Campaign List (§4.2, limit 50), Campaign Stats of an
// existing campaign (§4.3), and Add Contact creating or merging (§4.1).
func benchOps(campaignID int64) []benchOp {
	stats := `{"campaignId":` + strconv.FormatInt(campaignID, 10) + `}`
	return []benchOp{
		{"campaign-stats", spec.PathCampaignStats, func(int64) string { return stats }},
		{"campaign-list-50", spec.PathCampaignList, func(int64) string { return `{"limit":50,"page":2}` }},
		{"contact-add-new", spec.PathContactAdd, func(i int64) string {
			return `{"email":"bench-` + strconv.FormatInt(i, 10) + `@example.com","firstName":"Bench","tag":["x"]}`
		}},
		{"contact-add-merge", spec.PathContactAdd, func(int64) string {
			return `{"email":"bench-merge@example.com","firstName":"Bench","tag":["x"]}`
		}},
	}
}

// newBenchSim builds a faithful simulator with the default seed and a rate
// limit no benchmark reaches (the spec's 100 a minute would answer 429
// after the first hundred requests).
func newBenchSim(b *testing.B, insecure bool) *sim.Simulator {
	b.Helper()
	s, err := sim.New(context.Background(), sim.Config{
		Addr: "127.0.0.1:0", Insecure: insecure, DataDir: b.TempDir(), RateLimit: 1 << 30,
	})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// firstCampaign is an Id the first account owns.
func firstCampaign(b *testing.B, s *sim.Simulator) int64 {
	b.Helper()
	cs, _, err := s.Campaigns.FindCampaigns(context.Background(), simulator.CampaignFilter{AccountID: s.Accounts[0].AccountID, Limit: 1})
	if err != nil || len(cs) == 0 {
		b.Fatalf("no campaign for the first account: %v", err)
	}
	return cs[0].ID
}

// BenchmarkHandler measures each operation in-process through the whole
// partner handler (request ID, journal, faults, auth, rate limit, handler;
// no TLS, no network): the server's own cost and allocations per request.
func BenchmarkHandler(b *testing.B) {
	var seq atomic.Int64
	// Every simulator has the same campaigns: the seed is fixed.
	for _, o := range benchOps(firstCampaign(b, newBenchSim(b, true))) {
		b.Run(o.name, func(b *testing.B) {
			// A simulator of its own, so that one benchmark's contacts do
			// not weigh on the next.
			s := newBenchSim(b, true)
			serveLoop(b, s, o, &seq)
		})
	}
}

// serveLoop sends o in-process as the first account until b is done; every
// answer must be a 200.
func serveLoop(b *testing.B, s *sim.Simulator, o benchOp, seq *atomic.Int64) {
	h := s.Handler()
	a := s.Accounts[0]
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, spec.BasePath+"/"+o.op, strings.NewReader(o.body(seq.Add(1))))
		apitest.SetCredentials(req.Header, a)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
}

// BenchmarkHandlerMetrics measures what the metrics (docs/metrics.md) cost
// a request: BenchmarkHandler's request with the metrics observer on (the
// default) and off, side by side in one binary.
func BenchmarkHandlerMetrics(b *testing.B) {
	var seq atomic.Int64
	for _, o := range benchOps(firstCampaign(b, newBenchSim(b, true))) {
		for _, on := range []bool{true, false} {
			name := o.name + "/metrics=on"
			if !on {
				name = o.name + "/metrics=off"
			}
			b.Run(name, func(b *testing.B) {
				s := newBenchSim(b, true)
				if s.Observer == nil {
					b.Fatal("the simulator has no metrics observer")
				}
				if !on {
					s.Observer = nil
				}
				serveLoop(b, s, o, &seq)
			})
		}
	}
}

// BenchmarkHTTPS measures each operation over real HTTPS on loopback with
// keep-alive connections, GOMAXPROCS client goroutines (b.RunParallel):
// TLS and net/http included, client and server sharing the CPUs.
func BenchmarkHTTPS(b *testing.B) {
	benchHTTPS(b, newBenchSim(b, false))
}

// benchHTTPS opens s and runs each operation against it over HTTPS, as
// BenchmarkHTTPS says.
func benchHTTPS(b *testing.B, s *sim.Simulator) {
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
	client := &http.Client{Transport: &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: pool},
		MaxIdleConnsPerHost: 64,
	}}
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
}

// BenchmarkScrape measures one GET /metrics through the control API, in
// memory and, with SIM_REDIS_ADDR set, on that Redis, with no throwaway
// account and with 10,000 (the scrape lists them to count them).
func BenchmarkScrape(b *testing.B) {
	backends := map[string]string{"memory": ""}
	if addr := os.Getenv("SIM_REDIS_ADDR"); addr != "" {
		backends["redis"] = "redis://" + addr + "/0"
	}
	for name, url := range backends {
		for _, n := range []int{0, 10_000} {
			b.Run(fmt.Sprintf("%s/accounts=%d", name, n), func(b *testing.B) {
				cfg := sim.Config{Addr: "127.0.0.1:0", Insecure: true, DataDir: b.TempDir(), AdminToken: "t", RedisURL: url}
				if url != "" {
					cfg.RedisPrefix = fmt.Sprintf("simbench:scrape:%d:", time.Now().UnixNano())
					b.Cleanup(func() { deleteRedisKeys(b, url, cfg.RedisPrefix) })
				}
				s, err := sim.New(context.Background(), cfg)
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { s.Close() })
				for range n {
					a, err := simulator.NewThrowawayAccount(simulator.AccountSpec{}, s.Registry.AccountDefaults(), time.Now())
					if err != nil {
						b.Fatal(err)
					}
					if err := s.Registry.CreateAccount(context.Background(), a); err != nil {
						b.Fatal(err)
					}
				}
				h := s.AdminHandler()
				b.ReportAllocs()
				for b.Loop() {
					req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
					req.Header.Set("Authorization", "Bearer t")
					w := httptest.NewRecorder()
					h.ServeHTTP(w, req)
					if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), fmt.Sprintf("partnersim_throwaway_accounts %d\n", n)) {
						b.Fatalf("status %d, or not %d throwaway accounts: %.300s", w.Code, n, w.Body)
					}
				}
			})
		}
	}
}
