package wire

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// seen is what the server saw of one request.
type seen struct {
	conn  string // remote address: one per connection
	proto int
	clen  int64
	body  string
}

func newServer(t *testing.T) (*httptest.Server, func() []seen) {
	t.Helper()
	var mu sync.Mutex
	var got []seen
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, seen{r.RemoteAddr, r.ProtoMajor, r.ContentLength, string(b)})
		mu.Unlock()
		fmt.Fprint(w, `{}`)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, func() []seen { mu.Lock(); defer mu.Unlock(); return append([]seen(nil), got...) }
}

func TestRoutes(t *testing.T) {
	srv, got := newServer(t)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	c := &http.Client{Transport: New(&tls.Config{RootCAs: pool})}
	send := func(ctx context.Context) *http.Response {
		t.Helper()
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
		return resp
	}
	tests := []struct {
		name       string
		ctx        context.Context
		proto      int
		sameConn   bool // the two requests of the route share a connection
		contentLen int64
	}{
		{"the shared pool reuses one HTTP/2 connection", context.Background(), 2, true, 7},
		{"a fresh route opens a new HTTP/1.1 connection each time", WithRoute(context.Background(), Fresh), 1, false, 7},
		{"the HTTP/1.1 route reuses one connection", WithRoute(context.Background(), HTTP1), 1, true, 7},
		{"the HTTP/2 route asks for HTTP/2", WithRoute(context.Background(), HTTP2), 2, true, 7},
		{"a chunked body has no length over HTTP/1.1", WithChunked(WithRoute(context.Background(), HTTP1)), 1, true, -1},
		{"a chunked body has no length over HTTP/2", WithChunked(WithRoute(context.Background(), HTTP2)), 2, true, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(got())
			r1, r2 := send(tt.ctx), send(tt.ctx)
			if r1.ProtoMajor != tt.proto || r2.ProtoMajor != tt.proto {
				t.Errorf("answers over HTTP/%d and HTTP/%d, want HTTP/%d", r1.ProtoMajor, r2.ProtoMajor, tt.proto)
			}
			s := got()[before:]
			if len(s) != 2 {
				t.Fatalf("the server saw %d requests, want 2", len(s))
			}
			if same := s[0].conn == s[1].conn; same != tt.sameConn {
				t.Errorf("same connection = %v (%s, %s), want %v", same, s[0].conn, s[1].conn, tt.sameConn)
			}
			for _, x := range s {
				if x.clen != tt.contentLen || x.body != `{"a":1}` {
					t.Errorf("the server read length %d and body %q, want %d and the body sent", x.clen, x.body, tt.contentLen)
				}
			}
		})
	}
	c.CloseIdleConnections()
}
