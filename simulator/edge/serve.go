// Package edge is the simulator's connection edge: what lies between a
// socket and a handler. It does the TLS handshakes itself, answers plain
// HTTP on a TLS port in JSON, follows every HTTP/1 connection's request
// heads as net/http will read them (edge.go), replaces net/http's
// text/plain refusals with JSON ones (refusal.go) and, in Guard, answers
// what is wrong with a request at the HTTP level before the API behind it
// looks at it. Both of the simulator's listeners, the partner API's and
// the control API's, are served through it.
package edge

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"time"
)

// Options are one listener's settings. The zero value serves plain HTTP
// with the default timeouts and logs nothing.
type Options struct {
	// TLS serves HTTPS (spec §1 rule 1), as TLSConfig made it. If nil,
	// plain HTTP.
	TLS *tls.Config
	// ReadTimeout bounds the reading of a whole request, headers and body.
	// Zero means 30 seconds. The head and the TLS handshake get at most
	// ten seconds of it.
	ReadTimeout time.Duration
	// WriteTimeout bounds the writing of an answer. Zero means none.
	WriteTimeout time.Duration
	// ConnContext adds to each connection's context, after the edge's own
	// (ConnContext). May be nil.
	ConnContext func(ctx context.Context, c net.Conn) context.Context
	// Logger may be nil. If nil, nothing is logged.
	Logger *slog.Logger
}

func (o Options) readTimeout() time.Duration {
	if o.ReadTimeout <= 0 {
		return 30 * time.Second
	}
	return o.ReadTimeout
}

// readHeaderTimeout bounds the reading of a head, and the TLS handshake.
func (o Options) readHeaderTimeout() time.Duration { return min(10*time.Second, o.readTimeout()) }

func (o Options) logger() *slog.Logger {
	if o.Logger != nil {
		return o.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// NewListener puts ln behind the edge: with TLS, a plain-HTTP request is
// answered in JSON (plainHTTPListener), the handshakes are done here and
// every HTTP/1 connection's requests followed (edgeListener); without, the
// HTTP/1 connections are followed alone. Serve it with NewServer's
// http.Server.
func NewListener(ln net.Listener, o Options) net.Listener {
	if o.TLS == nil {
		return newEdgeListener(ln, nil, 0, o.logger())
	}
	return newEdgeListener(plainHTTPListener{ln}, o.TLS, o.readHeaderTimeout(), o.logger())
}

// NewServer is the http.Server that serves h on a NewListener: with
// timeouts, so a slow or stalled client cannot hold a connection forever,
// and net/http's own limits set where the edge answers before them in
// JSON.
func NewServer(h http.Handler, o Options) *http.Server {
	srv := &http.Server{
		Handler: h,
		// The edge's HTTP/1 connections carry their notes to Guard.
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			ctx = ConnContext(ctx, c)
			if o.ConnContext != nil {
				ctx = o.ConnContext(ctx, c)
			}
			return ctx
		},
		ReadHeaderTimeout: o.readHeaderTimeout(),
		ReadTimeout:       o.readTimeout(),
		MaxHeaderBytes:    netHTTPMaxHeaderBytes, // above Guard's own cap, so ours answers in JSON
		// OPTIONS * reaches the handler (a JSON 404) instead of net/http's
		// empty 200.
		DisableGeneralOptionsHandler: true,
		WriteTimeout:                 o.WriteTimeout,
		IdleTimeout:                  2 * time.Minute,
		ErrorLog:                     slog.NewLogLogger(o.logger().Handler(), slog.LevelWarn),
	}
	if o.TLS != nil {
		// Serve switches HTTP/2 on for the *tls.Conn the edge hands it
		// when the config offers h2; one config per server, as Serve edits it.
		srv.TLSConfig = o.TLS.Clone()
	}
	return srv
}

// TLSConfig is a listener's TLS configuration made from base: HTTP/2 and
// HTTP/1.1 by ALPN, as ServeTLS offers them, unless base names its own
// protocols (then HTTP/1.1 is added if missing, as ServeTLS adds it),
// without h2 when http2 is false (a deployment that does not speak it).
func TLSConfig(base *tls.Config, http2 bool) *tls.Config {
	c := base.Clone()
	switch {
	case len(c.NextProtos) == 0:
		c.NextProtos = []string{"h2", "http/1.1"}
	case !slices.Contains(c.NextProtos, "http/1.1"):
		c.NextProtos = append(c.NextProtos, "http/1.1")
	}
	if !http2 {
		c.NextProtos = slices.DeleteFunc(slices.Clone(c.NextProtos), func(p string) bool { return p == "h2" })
	}
	return c
}
