// Package record keeps every exchange the suite has with the target, for
// the HAR file of a run (the run's secrets hidden wherever they appear),
// and what the connections showed of TLS, for the certificate.
package record

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/partner-v3/conformance-kit/steps/internal/mask"
)

// maxBody caps the bytes of one body the recorder keeps.
const maxBody = 1 << 20

// Entry is one request sent and what came back, as reports show it: the
// run's secrets hidden in the URL, both headers, both bodies and the
// error (Transport.Secrets), the bodies cut at 1 MiB.
type Entry struct {
	Scenario       string
	Started        time.Time
	Duration       time.Duration
	Method, URL    string
	Proto          string
	RequestHeader  http.Header
	RequestBody    []byte
	Status         int
	ResponseProto  string
	ResponseHeader http.Header
	ResponseBody   []byte
	// Err is the transport error of a request that got no answer.
	Err string
}

// TLS is what one connection showed of TLS.
type TLS struct {
	// Version is the negotiated version, e.g. "TLS 1.3".
	Version string `json:"version"`
	// Protocol is the HTTP protocol of the answer, e.g. "HTTP/2.0".
	Protocol string `json:"protocol"`
	// Chain holds the SHA-256 fingerprint (hex) of every certificate the
	// server sent, leaf first.
	Chain []string `json:"chain"`
	// Verified reports whether the chain was verified against trusted roots.
	Verified bool `json:"verified"`
}

type scenarioKey struct{}

// WithScenario labels ctx's requests with the scenario that sends them.
func WithScenario(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, scenarioKey{}, name)
}

// ScenarioOf returns the label WithScenario gave ctx's requests; "" for
// none.
func ScenarioOf(ctx context.Context) string {
	s, _ := ctx.Value(scenarioKey{}).(string)
	return s
}

// Transport records every round trip it passes to Base.
type Transport struct {
	// Base sends the requests. Required.
	Base http.RoundTripper
	// Verified tells whether the client verifies certificates (false with
	// --insecure).
	Verified bool
	// Secrets hides the run's secrets in what is recorded; the request and
	// the response passed on are left as they are. May be nil: only the
	// credential headers are masked, by name.
	Secrets *mask.Secrets

	mu      sync.Mutex
	entries []Entry
	tls     []TLS
}

// CloseIdleConnections passes the call on to Base.
func (t *Transport) CloseIdleConnections() {
	if c, ok := t.Base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(r *http.Request) (*http.Response, error) {
	e := Entry{Method: r.Method, URL: t.Secrets.String(r.URL.String()), Proto: r.Proto, RequestHeader: t.Secrets.Header(r.Header), Started: time.Now()}
	e.Scenario, _ = r.Context().Value(scenarioKey{}).(string)
	if r.Body != nil && r.Body != http.NoBody {
		b, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("read the request body: %w", err)
		}
		e.RequestBody = t.capped(b)
		r = r.Clone(r.Context())
		r.Body = io.NopCloser(bytes.NewReader(b))
	}
	resp, err := t.Base.RoundTrip(r)
	if err != nil {
		e.Duration, e.Err = time.Since(e.Started), t.Secrets.String(err.Error())
		t.add(e, nil)
		return nil, err
	}
	b, rerr := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	e.Duration = time.Since(e.Started)
	e.Status, e.ResponseProto, e.ResponseHeader, e.ResponseBody = resp.StatusCode, resp.Proto, t.Secrets.Header(resp.Header), t.capped(b)
	if rerr != nil {
		e.Err = t.Secrets.String("reading the body: " + rerr.Error())
	}
	var info *TLS
	if resp.TLS != nil {
		info = &TLS{Version: tls.VersionName(resp.TLS.Version), Protocol: resp.Proto, Verified: t.Verified}
		for _, c := range resp.TLS.PeerCertificates {
			sum := sha256.Sum256(c.Raw)
			info.Chain = append(info.Chain, hex.EncodeToString(sum[:]))
		}
	}
	t.add(e, info)
	if rerr != nil {
		return nil, fmt.Errorf("read the response body: %w", rerr)
	}
	return resp, nil
}

// capped is a body as recorded: the run's secrets hidden, cut at maxBody.
// A secret the cut would halve is hidden first: the search looks a little
// past the cut.
func (t *Transport) capped(b []byte) []byte {
	const past = 4 << 10
	if len(b) > maxBody+past {
		b = b[:maxBody+past]
	}
	b = t.Secrets.Bytes(b)
	if len(b) > maxBody {
		return b[:maxBody]
	}
	return b
}

func (t *Transport) add(e Entry, info *TLS) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.entries = append(t.entries, e)
	if info != nil && !slices.ContainsFunc(t.tls, func(x TLS) bool {
		return x.Version == info.Version && x.Protocol == info.Protocol && slices.Equal(x.Chain, info.Chain)
	}) {
		t.tls = append(t.tls, *info)
	}
}

// Entries returns every exchange so far, in the order they ended.
func (t *Transport) Entries() []Entry {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.entries)
}

// TLS returns each distinct TLS session shape seen (version, protocol,
// chain), in the order first seen.
func (t *Transport) TLS() []TLS {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.tls)
}
