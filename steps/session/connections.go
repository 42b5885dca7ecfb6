package session

// Sending over a chosen connection (steps/internal/wire) and recording,
// through net/http/httptrace, the connection that carried the request:
// the client side's address (one per connection), whether it was reused
// and whether it spoke HTTP/2. Rules auth-connection, framing and the
// rate limit's requests in flight (package steps) judge on it.

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"sync"

	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/internal/wire"
)

// ConnSeen is what the transport reported of the connection that carried
// one request (its last attempt).
type ConnSeen struct {
	Got    bool
	Local  string // the client side's address: one per connection
	Reused bool
	H2     bool
}

// connTrace collects a ConnSeen from the transport's goroutines.
type connTrace struct {
	mu   sync.Mutex
	seen ConnSeen
}

func (t *connTrace) snapshot() ConnSeen {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.seen
}

// traceConn records in the returned connTrace the connection ctx's request
// gets.
func traceConn(ctx context.Context) (context.Context, *connTrace) {
	t := &connTrace{}
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) {
		seen := ConnSeen{Got: true, Reused: i.Reused}
		if i.Conn != nil {
			seen.Local = i.Conn.LocalAddr().String()
			if tc, ok := i.Conn.(*tls.Conn); ok {
				seen.H2 = tc.ConnectionState().NegotiatedProtocol == "h2"
			}
		}
		t.mu.Lock()
		defer t.mu.Unlock()
		t.seen = seen
	}}), t
}

// SendVia sends a JSON POST of op with headers h by route, its body
// chunked (no length) when asked, and returns the exchange and the
// connection that carried it. It may be called from several goroutines at
// once: each call has its own reporter.
func (s *Scenario) SendVia(ctx context.Context, route wire.Route, chunked bool, h http.Header, op string, body []byte) (*Exchange, ConnSeen) {
	ctx = wire.WithRoute(ctx, route)
	if chunked {
		ctx = wire.WithChunked(ctx)
	}
	ctx, cs := traceConn(ctx)
	sub := *s
	sub.reporter = collectReporter{}
	x := sub.Send(ctx, sub.Expect(func() http.Header { return h }), http.MethodPost, Operations[op], spec.ContentType, body)
	return x, cs.snapshot()
}

// NoConnection says why a request that got no connection at all (the
// target refused the route's connection: an HTTP/1.1 one to a server that
// speaks only HTTP/2, say) leaves its cell unchecked, or "" when it got
// one. The spec names no HTTP version; a request that got a connection
// and no answer is judged as such.
func NoConnection(route wire.Route, x *Exchange, cs ConnSeen) string {
	if x.Err == nil || cs.Got {
		return ""
	}
	return fmt.Sprintf("no connection could be made by %s (%v): the spec names no HTTP version", route, x.Err)
}
