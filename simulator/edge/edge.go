package edge

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/partner-v3/conformance-kit/simulator/httpjson"
)

// The edge: what net/http would answer on an HTTP/1 connection before any
// handler runs, in text/plain or without telling the handler, is seen here
// first, on the connection's plaintext, and answered in JSON: the first two
// below by Guard, like any other refusal, the last here:
//
//   - a request with both Content-Length and Transfer-Encoding (net/http
//     drops the Content-Length without a trace and keeps the connection:
//     RFC 9112 §6.1 says a server that processes it MUST close after), or
//     Transfer-Encoding over HTTP/1.0 (§6.1: the framing is faulty);
//   - an Expect other than 100-continue (net/http answers a bare 417): its
//     lines are taken out of the head and passed on in the note;
//   - whatever net/http refuses itself (a malformed head, a bad or doubled
//     Content-Length, no Host, an HTTP version other than 1.x, an unknown
//     Transfer-Encoding, headers past its own cap): its text/plain answer,
//     written straight to the connection, is replaced by a JSON one with the
//     same status that says what is wrong with the head (refusal.go).
//
// To see the plaintext under TLS the listener does the handshake itself
// (edgeListener) and hands net/http a *tls.Conn only for HTTP/2, which
// net/http serves itself; HTTP/1 gets an h1Conn, whose ConnectionState still
// fills Request.TLS.

// edgeListener accepts TCP connections, does each one's TLS handshake in a
// goroutine of its own (so a silent client never stalls Accept) and returns
// the connections whose handshake succeeded: HTTP/2 ones as the *tls.Conn,
// every other one as an h1Conn. Without a TLS config it wraps every
// connection in an h1Conn at once.
type edgeListener struct {
	net.Listener
	config  *tls.Config // nil: plain HTTP
	timeout time.Duration
	logger  *slog.Logger

	ready chan net.Conn
	done  chan struct{}
	once  sync.Once
	err   error // why the accept loop ended; read after done is closed

	mu      sync.Mutex
	pending map[net.Conn]struct{} // handshakes under way, closed by Close
}

func newEdgeListener(ln net.Listener, config *tls.Config, timeout time.Duration, logger *slog.Logger) *edgeListener {
	l := &edgeListener{Listener: ln, config: config, timeout: timeout, logger: logger,
		ready: make(chan net.Conn), done: make(chan struct{}), pending: map[net.Conn]struct{}{}}
	if config != nil {
		go l.acceptLoop()
	}
	return l
}

func (l *edgeListener) Accept() (net.Conn, error) {
	if l.config == nil {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		return newH1Conn(c), nil
	}
	select {
	case c := <-l.ready:
		return c, nil
	case <-l.done:
		return nil, l.err
	}
}

func (l *edgeListener) acceptLoop() {
	var delay time.Duration
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				l.stop(err)
				return
			}
			// As net/http's Serve does for a temporary error (too many open
			// files): back off and go on.
			l.logger.Warn("accept", "err", err)
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			select {
			case <-time.After(delay):
			case <-l.done:
				return
			}
			continue
		}
		delay = 0
		l.mu.Lock()
		l.pending[c] = struct{}{}
		l.mu.Unlock()
		go l.handshake(c)
	}
}

func (l *edgeListener) handshake(c net.Conn) {
	defer func() {
		l.mu.Lock()
		delete(l.pending, c)
		l.mu.Unlock()
	}()
	tc := tls.Server(c, l.config)
	ctx, cancel := context.WithTimeout(context.Background(), l.timeout)
	defer cancel()
	_ = c.SetDeadline(time.Now().Add(l.timeout))
	if err := tc.HandshakeContext(ctx); err != nil {
		l.logger.Warn("tls handshake", "remote", c.RemoteAddr().String(), "err", err)
		_ = c.Close()
		return
	}
	_ = c.SetDeadline(time.Time{})
	var out net.Conn = tc
	if tc.ConnectionState().NegotiatedProtocol != "h2" {
		out = &tlsH1Conn{h1Conn: newH1Conn(tc), tc: tc}
	}
	select {
	case l.ready <- out:
	case <-l.done:
		_ = c.Close()
	}
}

func (l *edgeListener) stop(err error) {
	l.once.Do(func() {
		if err == nil || errors.Is(err, net.ErrClosed) {
			err = net.ErrClosed
		}
		l.err = err
		close(l.done)
	})
}

// Close stops accepting and closes the handshakes under way.
func (l *edgeListener) Close() error {
	err := l.Listener.Close()
	l.stop(nil)
	l.mu.Lock()
	for c := range l.pending {
		_ = c.Close()
	}
	l.mu.Unlock()
	return err
}

// headNote is what the edge saw in one request head that net/http hides
// from the handler.
type headNote struct {
	// framing, if set, says why the request's framing is ambiguous.
	framing string
	// expect holds the Expect values taken out of the head (nil: none).
	expect []string
}

// connTracker is an h1Conn's notes, one per request head in order, taken
// by Guard as net/http hands it the requests (one at a time per
// connection, in the same order).
type connTracker struct {
	mu    sync.Mutex
	notes []headNote
}

func (t *connTracker) push(n headNote) {
	t.mu.Lock()
	t.notes = append(t.notes, n)
	t.mu.Unlock()
}

func (t *connTracker) pop() headNote {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.notes) == 0 {
		return headNote{}
	}
	// Few are ever waiting (pipelined requests): shifting them keeps the
	// array, so a connection's notes allocate nothing after the first.
	n := t.notes[0]
	copy(t.notes, t.notes[1:])
	t.notes[len(t.notes)-1] = headNote{}
	t.notes = t.notes[:len(t.notes)-1]
	return n
}

type trackerKey struct{}

// ConnContext puts an HTTP/1 connection's tracker in its requests' context,
// where Guard finds what the edge noted of each head: NewServer's
// http.Server.ConnContext, before the caller's own.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	if t, ok := c.(interface{ tracker() *connTracker }); ok {
		return context.WithValue(ctx, trackerKey{}, t.tracker())
	}
	return ctx
}

// takeHeadNote returns what the edge noted of r's head, once.
func takeHeadNote(r *http.Request) headNote {
	if t, ok := r.Context().Value(trackerKey{}).(*connTracker); ok && r.ProtoMajor == 1 {
		return t.pop()
	}
	return headNote{}
}

// Parser states of an h1Conn: where in the request stream the next byte
// read from the connection falls.
const (
	inHead      = iota // a request head, kept until it is whole
	inBody             // a Content-Length body: left bytes to go
	inChunkSize        // a chunk-size line
	inChunkData        // chunk data: left bytes, then CRLF
	inTrailer          // the trailer section after the last chunk
	passThrough        // not followed any further: bytes go as they come
)

// maxTrackedHead bounds a head kept whole: net/http's own cap and its
// slack, past which net/http answers 431 (replaced in Write).
const maxTrackedHead = netHTTPMaxHeaderBytes + 4096 + 1

// h1Conn follows the HTTP/1 request stream of one connection as net/http
// will read it (the same rules: RFC 9112 framing, Transfer-Encoding only
// chunked and only over HTTP/1.1, header lines with obs-fold continuations),
// so that each head can be looked at whole before net/http reads it. Where
// it meets anything net/http refuses (which closes the connection) it stops
// following and passes bytes through untouched.
//
// Bytes are read into buf; buf[r:ready] are followed and go to net/http
// as they are (a head may have lost its Expect lines), buf[ready:] wait
// for more to be read.
type h1Conn struct {
	net.Conn
	t connTracker

	state    int
	left     int64 // bytes left of a body or chunk data and its CRLF
	buf      []byte
	pooled   *[]byte // buf's array when it came from edgeBufs
	r, ready int
	lines    []headLine // reused for each head
	// buf[headAt:headEnd] is the last head passed on, held while net/http
	// may still refuse it (headEnd 0: none).
	headAt, headEnd int
}

func newH1Conn(c net.Conn) *h1Conn { return &h1Conn{Conn: c} }

func (c *h1Conn) tracker() *connTracker { return &c.t }

// tlsH1Conn is an h1Conn over TLS: its ConnectionState is how net/http
// fills Request.TLS for a connection that is not a *tls.Conn.
type tlsH1Conn struct {
	*h1Conn
	tc *tls.Conn
}

func (c *tlsH1Conn) ConnectionState() tls.ConnectionState { return c.tc.ConnectionState() }

// net/http's connectionStater, by which it sets Request.TLS.
var _ interface{ ConnectionState() tls.ConnectionState } = (*tlsH1Conn)(nil)

// CloseWrite lets net/http half-close before its last wait (closeWriteAndWait).
func (c *h1Conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// Write passes p on, unless it is net/http's own text/plain refusal of a
// request (refusal.go): then the JSON answer with the same status goes in
// its place. net/http closes the connection after it, as before.
func (c *h1Conn) Write(p []byte) (int, error) {
	if code, ok := netHTTPRefusal(p); ok {
		// net/http writes it from its serving loop, between heads: no Read
		// of this connection runs now, so the held head is safe to look at.
		if _, err := c.Conn.Write(refusalAnswer(code, c.refusedHead())); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// refusedHead is the last head given whole to net/http, if net/http has
// not asked for a byte since (so it is the one being refused), or nil.
func (c *h1Conn) refusedHead() []byte {
	if c.headEnd == 0 || c.r < c.headEnd {
		return nil
	}
	return c.buf[c.headAt:c.headEnd]
}

func (c *h1Conn) Read(p []byte) (int, error) {
	if c.headEnd > 0 && c.r >= c.headEnd {
		// net/http has the last head whole and asks for more: it took
		// that head, so the edge need not hold it any longer.
		c.headEnd = 0
		if c.r == len(c.buf) {
			c.release()
		}
	}
	for c.ready == c.r {
		if c.state == passThrough {
			if len(c.buf) > c.r {
				c.ready = len(c.buf)
				break
			}
			return c.Conn.Read(p)
		}
		if len(c.buf) > c.ready && c.parse() {
			continue
		}
		// More bytes are needed to go on.
		if err := c.fill(); err != nil {
			if len(c.buf) > c.ready && !httpjson.IsTimeout(err) {
				// The stream ends inside a head or line: net/http gets what
				// there is, then the error.
				c.state = passThrough
				continue
			}
			return 0, err
		}
	}
	n := copy(p, c.buf[c.r:c.ready])
	c.r += n
	if c.r == len(c.buf) && c.headEnd == 0 {
		// All read is passed on: the buffer goes back until more comes.
		// A head just passed on whole is held until net/http asks for
		// more (above), in case it refuses that head (refusedHead).
		c.release()
	}
	return n, nil
}

func (c *h1Conn) release() {
	if c.pooled != nil {
		edgeBufs.Put(c.pooled)
	}
	c.buf, c.pooled, c.r, c.ready = nil, nil, 0, 0
}

// edgeBufSize is an h1Conn's buffer, as big as net/http's own reader's; a
// head that does not fit gets a bigger one of its own.
const edgeBufSize = 4096

var edgeBufs = sync.Pool{New: func() any { b := make([]byte, edgeBufSize); return &b }}

// fill reads more bytes into buf, first moving what is left of it to the
// front.
func (c *h1Conn) fill() error {
	c.headEnd = 0 // (already 0: a fill comes after net/http took the head)
	if c.r > 0 {
		n := copy(c.buf, c.buf[c.r:])
		c.buf, c.ready, c.r = c.buf[:n], c.ready-c.r, 0
	}
	switch {
	case c.buf == nil:
		c.pooled = edgeBufs.Get().(*[]byte)
		c.buf = (*c.pooled)[:0]
	case cap(c.buf)-len(c.buf) < 1024:
		nb := make([]byte, len(c.buf), 2*cap(c.buf))
		copy(nb, c.buf)
		if c.pooled != nil {
			edgeBufs.Put(c.pooled)
			c.pooled = nil
		}
		c.buf = nb
	}
	n, err := c.Conn.Read(c.buf[len(c.buf):cap(c.buf)])
	c.buf = c.buf[:len(c.buf)+n]
	if n > 0 {
		return nil
	}
	if err == nil {
		err = errors.New("read returned nothing")
	}
	return err
}

// parse follows what it can of buf[ready:], reporting false when that
// holds too little to go on.
func (c *h1Conn) parse() bool {
	rest := c.buf[c.ready:]
	switch c.state {
	case inHead:
		end := headEnd(rest)
		if end < 0 {
			if len(rest) >= maxTrackedHead {
				c.state = passThrough // net/http answers 431 and closes
				return true
			}
			return false
		}
		head := c.head(rest[:end])
		if len(head) != end { // Expect lines taken out
			c.buf = append(append(c.buf[:c.ready], head...), c.buf[c.ready+end:]...)
		}
		c.headAt, c.headEnd = c.ready, c.ready+len(head)
		c.ready += len(head)
		return true
	case inBody, inChunkData:
		n := int(min(c.left, int64(len(rest))))
		c.ready += n
		if c.left -= int64(n); c.left == 0 {
			if c.state == inBody {
				c.state = inHead
			} else {
				c.state = inChunkSize
			}
		}
		return true
	case inChunkSize, inTrailer:
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			if len(rest) >= 4096 {
				c.state = passThrough // net/http: line too long
				return true
			}
			return false
		}
		c.ready += i + 1
		if c.state == inTrailer {
			if i == 0 || i == 1 && rest[0] == '\r' {
				c.state = inHead
			}
			return true
		}
		switch size, ok := chunkSize(rest[:i+1]); {
		case !ok:
			c.state = passThrough
		case size == 0:
			c.state = inTrailer
		default:
			c.state, c.left = inChunkData, size+2 // and its CRLF
		}
		return true
	}
	return false
}

// headEnd returns the length of the head at the start of b, through its
// blank line (lines end in LF or CRLF, as net/http reads them), or -1. An
// empty first line is a head of its own (net/http refuses it).
func headEnd(b []byte) int {
	for start := 0; ; {
		i := bytes.IndexByte(b[start:], '\n')
		if i < 0 {
			return -1
		}
		line := b[start : start+i]
		start += i + 1
		if len(line) == 0 || len(line) == 1 && line[0] == '\r' {
			return start
		}
	}
}

var (
	hdrTransferEncoding = []byte("Transfer-Encoding")
	hdrContentLength    = []byte("Content-Length")
	hdrExpect           = []byte("Expect")
)

// head notes a whole request head, sets the state for what follows it and
// returns the bytes to give net/http: the head, or a copy without its
// Expect lines.
func (c *h1Conn) head(head []byte) []byte {
	c.lines = splitHead(c.lines[:0], head)
	lines := c.lines
	if len(lines) == 0 {
		c.state = passThrough // an empty request line: net/http answers 400
		return head
	}
	proto := lines[0].text
	if i := bytes.LastIndexByte(proto, ' '); i >= 0 {
		proto = proto[i+1:]
	}
	var http10 bool
	switch string(proto) {
	case "HTTP/1.1":
	case "HTTP/1.0":
		http10 = true
	default:
		c.state = passThrough // net/http answers 400 or 505 and closes
		return head
	}
	var te, cl, expect int
	var te0, cl0 []byte
	conflict, strip := false, false
	for _, l := range lines[1:] {
		name, value, ok := bytes.Cut(l.text, []byte(":"))
		if !ok {
			c.state = passThrough // net/http: malformed header, 400
			return head
		}
		switch len(name) { // most names are none of the three
		case len(hdrTransferEncoding), len(hdrContentLength), len(hdrExpect):
		default:
			continue
		}
		value = bytes.Trim(value, " \t")
		switch {
		case bytes.EqualFold(name, hdrTransferEncoding):
			if te++; te == 1 {
				te0 = value
			}
		case bytes.EqualFold(name, hdrContentLength):
			if cl++; cl == 1 {
				cl0 = value
			} else if !bytes.Equal(value, cl0) {
				conflict = true
			}
		case bytes.EqualFold(name, hdrExpect):
			expect++
			if !bytes.EqualFold(value, []byte("100-continue")) {
				strip = true
			}
		}
	}
	var note headNote
	switch {
	case http10 && te > 0:
		note.framing = "Transfer-Encoding is not defined in HTTP/1.0, so the request's length is ambiguous (RFC 9112 §6.1): send Content-Length alone"
	case te > 0 && cl > 0:
		note.framing = "Request has both Content-Length and Transfer-Encoding, so its length is ambiguous (RFC 9112 §6.1): send one of them"
	}
	if strip {
		note.expect = make([]string, 0, expect)
		var b []byte
		for _, l := range lines {
			name, value, _ := bytes.Cut(l.text, []byte(":"))
			if bytes.EqualFold(name, hdrExpect) {
				note.expect = append(note.expect, string(bytes.Trim(value, " \t")))
				continue
			}
			b = append(b, l.raw...)
		}
		head = append(b, "\r\n"...)
	}
	c.t.push(note)
	// What follows, as net/http frames it (transfer.go, readTransfer).
	switch {
	case !http10 && te > 0:
		if te != 1 || !bytes.EqualFold(te0, []byte("chunked")) {
			c.state = passThrough // net/http answers 501 and closes
			return head
		}
		c.state = inChunkSize
	case cl > 0:
		n, err := strconv.ParseUint(string(cl0), 10, 63)
		if err != nil || conflict || len(cl0) == 0 || cl0[0] == '+' {
			c.state = passThrough // net/http answers 400 and closes
			return head
		}
		c.state, c.left = inBody, int64(n)
		if n == 0 {
			c.state = inHead
		}
	default:
		c.state = inHead
	}
	return head
}

// headLine is one line of a head with its continuations: text joined as
// net/http joins them, raw as sent.
type headLine struct{ text, raw []byte }

// splitHead appends a head's lines to lines, up to the blank one.
func splitHead(lines []headLine, head []byte) []headLine {
	for len(head) > 0 {
		i := bytes.IndexByte(head, '\n')
		if i < 0 {
			break
		}
		raw, text := head[:i+1], bytes.TrimSuffix(head[:i], []byte("\r"))
		head = head[i+1:]
		if len(text) == 0 {
			break
		}
		if (text[0] == ' ' || text[0] == '\t') && len(lines) > 1 {
			// obs-fold: net/http joins it to the line before with a space.
			last := &lines[len(lines)-1]
			last.text = append(append(append([]byte(nil), last.text...), ' '), bytes.TrimLeft(text, " \t")...)
			last.raw = append(append([]byte(nil), last.raw...), raw...)
			continue
		}
		lines = append(lines, headLine{text: text, raw: raw})
	}
	return lines
}

// chunkSize reads a chunk-size line (with its CRLF) as net/http does
// (internal/chunked.go): CRLF only, extensions dropped, at most 16 hex
// digits.
func chunkSize(line []byte) (int64, bool) {
	if len(line) < 3 || line[len(line)-2] != '\r' || bytes.IndexByte(line, '\r') != len(line)-2 {
		return 0, false
	}
	line = line[:len(line)-2]
	line, _, _ = bytes.Cut(line, []byte(";"))
	line = bytes.TrimRight(line, " \t")
	if len(line) == 0 || len(line) > 16 {
		return 0, false
	}
	n, err := strconv.ParseUint(string(line), 16, 64)
	if err != nil || n > 1<<62 {
		return 0, false
	}
	return int64(n), true
}
