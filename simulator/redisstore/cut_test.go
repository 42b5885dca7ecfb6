package redisstore_test

import (
	"io"
	"net"
	"sync"
	"testing"
)

// cutProxy forwards TCP connections to a Redis until it is cut: then it
// closes its listener and every connection, so the clients behind it see
// the Redis go away (refused dials, broken connections) while the Redis
// itself, shared with other tests, stays up.
type cutProxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	conns []net.Conn
	cut   bool
}

// startCutProxy listens on loopback in front of target (host:port) and
// cuts itself in cleanup.
func startCutProxy(tb testing.TB, target string) *cutProxy {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: target}
	go p.serve()
	tb.Cleanup(p.Cut)
	return p
}

// Addr is the proxy's host:port.
func (p *cutProxy) Addr() string { return p.ln.Addr().String() }

func (p *cutProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		if !p.track(c, up) {
			return
		}
		go pipe(c, up)
		go pipe(up, c)
	}
}

// track keeps the pair for Cut; false (and both closed) when cut already.
func (p *cutProxy) track(c ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		for _, x := range c {
			x.Close()
		}
		return false
	}
	p.conns = append(p.conns, c...)
	return true
}

func pipe(dst, src net.Conn) {
	_, _ = io.Copy(dst, src)
	dst.Close()
	src.Close()
}

// Cut closes the listener and every connection through the proxy.
func (p *cutProxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		return
	}
	p.cut = true
	p.ln.Close()
	for _, c := range p.conns {
		c.Close()
	}
}
