package partnerapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/simulator/sim"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// mustOpenProfile is MustOpenServer playing p (sim.Config.Profile), with
// a client that never asks for gzip itself, so that the gzip choice is
// seen as sent.
func mustOpenProfile(tb testing.TB, p *profile.Profile, cfg sim.Config) *harness {
	tb.Helper()
	cfg.Profile = p
	h := MustOpenServer(tb, cfg)
	h.client.Transport.(*http.Transport).DisableCompression = true
	return h
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
