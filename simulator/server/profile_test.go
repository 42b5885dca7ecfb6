package server_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/fixtures/profile"
	"github.com/partner-v3/conformance-kit/fixtures/spec"
	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/sim"
)

// mustOpenProfile is MustOpenServer with the server's Profile set before it
// opens (the body limit is read when the handler is built).
func mustOpenProfile(tb testing.TB, p *profile.Profile, cfg sim.Config) *harness {
	tb.Helper()
	clock := &fakeClock{now: time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)}
	cfg.Addr, cfg.AdminAddr, cfg.AdminToken = "127.0.0.1:0", "127.0.0.1:0", "test-token"
	cfg.DataDir, cfg.Now = tb.TempDir(), clock.Now
	if cfg.CampaignsPerAccount == 0 {
		cfg.CampaignsPerAccount = 73
	}
	s, err := sim.New(context.Background(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	s.Server.Profile = p
	if err := s.Open(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { MustCloseServer(tb, s) })
	pool := x509.NewCertPool()
	pem, err := os.ReadFile(s.Cert.CertFile)
	if err != nil {
		tb.Fatal(err)
	}
	pool.AppendCertsFromPEM(pem)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true, DisableCompression: true}
	tb.Cleanup(tr.CloseIdleConnections)
	return &harness{t: tb, sim: s, clock: clock, client: &http.Client{Transport: tr, Timeout: 10 * time.Second},
		alpha: s.Accounts[0], bravo: s.Accounts[1]}
}

// probe is one request of a profile test.
type probe struct {
	method, path string // path under the base path unless it starts with "/"
	header       map[string]string
	body         string
	// as sends the account's three headers; nil sends none.
	as *simulator.Account
}

// probeAnswer is what a probe got.
type probeAnswer struct {
	status int
	header http.Header
	body   []byte
}

func (a probeAnswer) object(tb testing.TB) map[string]any {
	tb.Helper()
	var m map[string]any
	if err := json.Unmarshal(a.body, &m); err != nil {
		tb.Fatalf("body %q: %v", a.body, err)
	}
	return m
}

func (h *harness) probe(p probe) probeAnswer {
	h.t.Helper()
	method := p.method
	if method == "" {
		method = http.MethodPost
	}
	path := p.path
	if !strings.HasPrefix(path, "/") {
		path = spec.BasePath + "/" + path
	}
	req, err := http.NewRequest(method, strings.TrimSuffix(h.sim.URL(), spec.BasePath)+path, strings.NewReader(p.body))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Content-Type", spec.ContentType)
	if p.as != nil {
		req.Header.Set(spec.HeaderAPIKey, p.as.APIKey)
		req.Header.Set(spec.HeaderAPISecret, p.as.APISecret)
		req.Header.Set(spec.HeaderAccountID, p.as.AccountID)
	}
	for k, v := range p.header {
		if v == "" {
			req.Header.Del(k)
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	return probeAnswer{resp.StatusCode, resp.Header, b}
}
