package session

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/partner-v3/conformance-kit/steps/internal/wire"
)

// TestTraceConn: what the cells of auth-connection and framing are judged
// on, the connection each request went over, is reported right for every
// route: one kept-alive connection reused (HTTP/1.1, HTTP/2), a new one
// each time (fresh), and whether it spoke HTTP/2.
func TestTraceConn(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = io.WriteString(w, `{}`)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	c := &http.Client{Transport: wire.New(&tls.Config{RootCAs: pool})}
	send := func(route wire.Route, chunked bool) ConnSeen {
		t.Helper()
		ctx := wire.WithRoute(context.Background(), route)
		if chunked {
			ctx = wire.WithChunked(ctx)
		}
		ctx, tr := traceConn(ctx)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(`{"a":1}`))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("send: %v", err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return tr.snapshot()
	}
	tests := []struct {
		name     string
		route    wire.Route
		chunked  bool
		h2, same bool // the second request: over HTTP/2; on the first one's connection, reused
	}{
		{"a kept-alive HTTP/1.1 connection is reused", wire.HTTP1, false, false, true},
		{"a chunked body on the kept-alive HTTP/1.1 connection", wire.HTTP1, true, false, true},
		{"an HTTP/2 connection is reused", wire.HTTP2, false, true, true},
		{"HTTP/2 DATA frames without a length", wire.HTTP2, true, true, true},
		{"a fresh connection each time", wire.Fresh, false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := send(tt.route, tt.chunked), send(tt.route, tt.chunked)
			if !a.Got || !b.Got || a.Local == "" || b.Local == "" {
				t.Fatalf("no connection reported: %+v, %+v", a, b)
			}
			if a.H2 != tt.h2 || b.H2 != tt.h2 {
				t.Errorf("HTTP/2 %v then %v, want %v", a.H2, b.H2, tt.h2)
			}
			if got := b.Reused && a.Local == b.Local; got != tt.same {
				t.Errorf("second request reused %v on %s (first on %s), want reused on the same connection: %v", b.Reused, b.Local, a.Local, tt.same)
			}
		})
	}
}

// TestNoConnection: a request that got no connection at all leaves its
// cell unchecked (the spec names no HTTP version); one that got a
// connection and no answer, or an answer, is judged.
func TestNoConnection(t *testing.T) {
	refused := errors.New("remote error: tls: no application protocol")
	tests := []struct {
		name      string
		x         *Exchange
		cs        ConnSeen
		unchecked bool
	}{
		{"answered", &Exchange{Status: http.StatusOK}, ConnSeen{Got: true, Local: "127.0.0.1:1"}, false},
		{"a connection, no answer", &Exchange{Err: errors.New("EOF")}, ConnSeen{Got: true, Local: "127.0.0.1:1"}, false},
		{"no connection", &Exchange{Err: refused}, ConnSeen{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			why := NoConnection(wire.HTTP1, tt.x, tt.cs)
			if got := why != ""; got != tt.unchecked {
				t.Fatalf("noConnection = %q, want unchecked %v", why, tt.unchecked)
			}
			if tt.unchecked && !strings.Contains(why, refused.Error()) {
				t.Errorf("the reason %q does not say what happened", why)
			}
		})
	}
}
