// Package wire lets a step choose how one request travels to the target.
// Authentication (spec §5) and the rate limit (spec §8) are properties of
// each request and each account, never of a connection, so the suite must
// be able to send the same request on the run's kept-alive connection, on
// a connection of its own, over HTTP/1.1 or over HTTP/2, with its body
// framed by Content-Length or chunked, and expect the same answer.
//
// The route is a value of the request's context (WithRoute, WithChunked),
// so it passes through the pacer and the recorder unchanged; Transport is
// the base of the run's client and picks the connection pool by it.
package wire

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
)

// Route is how a request travels.
type Route int

// The routes. The zero value is the run's shared pool.
const (
	// Shared is the run's pool: connections kept alive and reused, HTTP/2
	// when the target offers it (as any Go client would).
	Shared Route = iota
	// Fresh is a new connection for this request alone (HTTP/1.1, closed
	// after the answer): it has carried nothing before.
	Fresh
	// HTTP1 is one HTTP/1.1 connection kept alive and reused by every
	// request of the route in turn.
	HTTP1
	// HTTP2 is a pool of its own that asks for HTTP/2 (the answer's
	// ProtoMajor says whether the target offered it).
	HTTP2
)

// String names the route as failure messages do.
func (r Route) String() string {
	switch r {
	case Fresh:
		return "a fresh connection"
	case HTTP1:
		return "a reused HTTP/1.1 connection"
	case HTTP2:
		return "an HTTP/2 connection"
	}
	return "the run's shared connection"
}

type routeKey struct{}
type chunkedKey struct{}

// WithRoute sends ctx's requests by route r.
func WithRoute(ctx context.Context, r Route) context.Context {
	return context.WithValue(ctx, routeKey{}, r)
}

// RouteOf is the route of ctx's requests (Shared when none was set).
func RouteOf(ctx context.Context) Route {
	r, _ := ctx.Value(routeKey{}).(Route)
	return r
}

// WithChunked sends ctx's request bodies without a Content-Length:
// chunked over HTTP/1.1, DATA frames alone over HTTP/2.
func WithChunked(ctx context.Context) context.Context {
	return context.WithValue(ctx, chunkedKey{}, true)
}

func isChunked(ctx context.Context) bool {
	v, _ := ctx.Value(chunkedKey{}).(bool)
	return v
}

// Transport picks a connection pool by each request's route. Use New.
type Transport struct {
	pools [4]*http.Transport // by Route
}

// New returns a Transport whose pools share tlsConfig (may be nil: the
// system's roots).
func New(tlsConfig *tls.Config) *Transport {
	base := func() *http.Transport {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.TLSClientConfig = tlsConfig.Clone()
		return t
	}
	var t Transport
	t.pools[Shared] = base()
	fresh := base()
	fresh.DisableKeepAlives = true
	fresh.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{} // HTTP/1.1 only
	t.pools[Fresh] = fresh
	h1 := base()
	h1.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	h1.MaxConnsPerHost = 1
	h1.MaxIdleConnsPerHost = 1
	t.pools[HTTP1] = h1
	h2 := base()
	h2.ForceAttemptHTTP2 = true
	t.pools[HTTP2] = h2
	return &t
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(r *http.Request) (*http.Response, error) {
	ctx := r.Context()
	if isChunked(ctx) && r.Body != nil && r.Body != http.NoBody {
		r = r.Clone(ctx)
		r.ContentLength = -1
		r.Body = io.NopCloser(struct{ io.Reader }{r.Body}) // hides any Len
		r.GetBody = nil
	}
	route := RouteOf(ctx)
	if route < Shared || int(route) >= len(t.pools) {
		route = Shared
	}
	return t.pools[route].RoundTrip(r)
}

// CloseIdleConnections closes every pool's idle connections.
func (t *Transport) CloseIdleConnections() {
	for _, p := range t.pools {
		p.CloseIdleConnections()
	}
}
