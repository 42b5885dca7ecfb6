package main

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/simulator/sim"
	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/suite"
)

// slowLatency is the answer time of slowService per operation: a
// log-normal draw with this median and 99th percentile, each operation
// its own, as a real deployment's database and cache make them.
var slowLatency = map[string]profile.Sample{
	spec.PathContactAdd:    {Median: 45, P99: 160},
	spec.PathCampaignList:  {Median: 25, P99: 70},
	spec.PathCampaignStats: {Median: 12, P99: 40},
}

// slowService is tinyService answering each operation after a draw of
// slowLatency (a fixed seed: two runs see the same draws).
type slowService struct {
	h  http.Handler
	mu sync.Mutex
	r  *rand.Rand
}

func (s *slowService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if want, ok := slowLatency[strings.TrimPrefix(r.URL.Path, spec.BasePath+"/")]; ok {
		s.mu.Lock()
		z := s.r.NormFloat64()
		s.mu.Unlock()
		sigma := math.Log(want.P99/want.Median) / 2.326
		time.Sleep(time.Duration(math.Exp(math.Log(want.Median)+sigma*z) * float64(time.Millisecond)))
	}
	s.h.ServeHTTP(w, r)
}

// BenchmarkPlayedLatency is issue 28's "latency as it is": learn a
// deployment whose operations take their own time (slowService), start a
// simulator playing the profile with ProfileLatency, then send latencyN
// valid requests of each operation to both, alternating, and report each
// side's median and 99th percentile per operation and the simulator's as
// a share of the deployment's (1 = alike; docs/fidelity.md holds the
// figures). A measurement, not a pass/fail test:
//
//	go test -run '^$' -bench BenchmarkPlayedLatency -benchtime 1x ./cmd/conformance
func BenchmarkPlayedLatency(b *testing.B) {
	accounts := altAccounts(b)
	for range b.N {
		dep := &slowService{h: newTinyService(accounts, altLimit, altWindow), r: rand.New(rand.NewPCG(28, 1))}
		srv := httptest.NewTLSServer(dep)
		b.Cleanup(srv.Close)
		depURL := srv.URL + spec.BasePath
		p, err := suite.Learn(context.Background(), suite.Config{BaseURL: depURL, TLSConfig: trust(srv.Certificate()),
			Primary: accounts[0], RateLimit: altLimit, RateWindow: altWindow})
		if err != nil {
			b.Fatalf("learn: %v", err)
		}
		s, err := sim.New(context.Background(), sim.Config{
			Addr: "127.0.0.1:0", AdminAddr: "127.0.0.1:0", DataDir: b.TempDir(), AdminToken: "test-admin-token",
			RateLimit: altLimit, RateWindow: altWindow, Profile: p, ProfileLatency: true,
		})
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Open(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = s.Close() })
		leaf, err := x509.ParseCertificate(s.Cert.TLS.Certificate[0])
		if err != nil {
			b.Fatal(err)
		}
		sides := []struct {
			name string
			url  string
			c    *http.Client
		}{
			{"deployment", depURL, &http.Client{Transport: &http.Transport{TLSClientConfig: trust(srv.Certificate())}}},
			{"simulator", s.URL(), &http.Client{Transport: &http.Transport{TLSClientConfig: trust(leaf)}}},
			// The deployment again: how far two samples of latencyN of
			// the same deployment lie apart, the measure's own noise.
			{"deployment-again", depURL, &http.Client{Transport: &http.Transport{TLSClientConfig: trust(srv.Certificate())}}},
		}
		var campaign [3]int64
		for k, side := range sides {
			if campaign[k], err = firstCampaign(side.c, side.url, accounts[1]); err != nil {
				b.Fatalf("%s: %v", side.name, err)
			}
		}
		for _, op := range spec.Operations() {
			learned := p.Latency.Operations.Value[op.Path]
			var got [3][]float64
			for i := range *latencyN {
				for k, side := range sides {
					body, err := op.Body(spec.Sample{Email: fmt.Sprintf("lat-%s-%d@example.com", side.name, i), Limit: 10, CampaignID: campaign[k]})
					if err != nil {
						b.Fatal(err)
					}
					d, _, err := timeOne(side.c, side.url+"/"+op.Path, body, accounts[1])
					if err != nil {
						b.Fatalf("%s %s: %v", side.name, op.Path, err)
					}
					got[k] = append(got[k], d)
				}
				// Within §8's budget on every side (the deployment is sent
				// two requests a round): at most altLimit per altWindow.
				time.Sleep(altWindow / altLimit * 3)
			}
			dm, dp := quantiles(got[0])
			sm, sp := quantiles(got[1])
			am, ap := quantiles(got[2])
			name := strings.ReplaceAll(op.Path, "/", "-")
			b.ReportMetric(sm/dm, name+"-p50-ratio")
			b.ReportMetric(sp/dp, name+"-p99-ratio")
			b.Logf("%-15s deployment p50 %5.1f p99 %5.1f ms | simulator p50 %5.1f p99 %5.1f ms: ratio %.2f %.2f | deployment again: ratio %.2f %.2f | learned from %d answers: p50 %.1f p99 %.1f",
				op.Path, dm, dp, sm, sp, sm/dm, sp/dp, am/dm, ap/dp, learned.Served.N, learned.Served.Median, learned.Served.P99)
		}
	}
}

// latencyN is how many requests of each operation each side answers:
// 200 by default (issue 28's measure), more with -latency-n to see past
// the spread of a p99 read from 200.
var latencyN = flag.Int("latency-n", 200, "BenchmarkPlayedLatency: requests of each operation per side")

// timeOne posts body to url as account a and returns how long the
// answer took, in milliseconds, and the answer; an answer other than 200
// is an error.
func timeOne(c *http.Client, url string, body []byte, a control.Credentials) (float64, []byte, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(spec.HeaderAPIKey, a.APIKey)
	req.Header.Set(spec.HeaderAPISecret, a.APISecret)
	req.Header.Set(spec.HeaderAccountID, a.AccountID)
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	out, err := io.ReadAll(resp.Body)
	d := time.Since(start)
	resp.Body.Close()
	if err != nil {
		return 0, nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, nil, fmt.Errorf("answered %d: %s", resp.StatusCode, out)
	}
	return float64(d) / float64(time.Millisecond), out, nil
}

// firstCampaign is the Id of the first campaign of a's first page (§4.2),
// for Campaign Stats to ask about.
func firstCampaign(c *http.Client, base string, a control.Credentials) (int64, error) {
	op, err := spec.OperationAt(spec.PathCampaignList)
	if err != nil {
		return 0, err
	}
	body, err := op.Body(spec.Sample{Limit: 1})
	if err != nil {
		return 0, err
	}
	_, out, err := timeOne(c, base+"/"+spec.PathCampaignList, body, a)
	if err != nil {
		return 0, err
	}
	var page struct {
		Campaigns []struct {
			ID int64 `json:"Id"`
		} `json:"campaigns"`
	}
	if err := json.Unmarshal(out, &page); err != nil || len(page.Campaigns) == 0 {
		return 0, fmt.Errorf("no campaign in the first page (%v): %s", err, out)
	}
	return page.Campaigns[0].ID, nil
}

// quantiles are the median and the 99th percentile of ms.
func quantiles(ms []float64) (float64, float64) {
	s := slices.Sorted(slices.Values(ms))
	at := func(q float64) float64 { return s[min(len(s)-1, int(math.Ceil(q*float64(len(s))))-1)] }
	return at(0.5), at(0.99)
}
