package edge

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// plainHTTPMessage answers a plain-HTTP request on the HTTPS port (spec §1
// rule 1: all traffic uses HTTPS).
const plainHTTPMessage = "Client sent an HTTP request to an HTTPS server: this port speaks HTTPS only, use https://"

// errPlainHTTP ends the TLS handshake of a connection that was answered in
// plain HTTP; net/http logs it as the handshake's error.
var errPlainHTTP = errors.New("plain HTTP on the TLS port: answered 400 JSON")

// plainHTTPListener recognises a plain-HTTP request on a TLS listener and
// answers it with a JSON 400 itself, where net/http would write a
// text/plain one (a bare "HTTP/1.0 400 Bad Request"). Everything else
// passes to TLS untouched. The first bytes are looked at in the first Read
// (inside the TLS handshake, under its deadline), never in Accept, so a
// silent client cannot stall the accept loop.
type plainHTTPListener struct{ net.Listener }

func (l plainHTTPListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &sniffConn{Conn: c, br: bufio.NewReaderSize(c, 4096)}, nil
}

// sniffConn reads through br, which holds the bytes looked at.
type sniffConn struct {
	net.Conn
	br   *bufio.Reader
	once sync.Once
	err  error
}

func (c *sniffConn) Read(p []byte) (int, error) {
	c.once.Do(func() {
		head, _ := c.br.Peek(5)
		if looksLikeHTTP(head) {
			c.answerPlainHTTP()
			c.err = errPlainHTTP
		}
	})
	if c.err != nil {
		return 0, c.err
	}
	return c.br.Read(p)
}

// looksLikeHTTP reports whether the first bytes of a connection are an
// HTTP request line ("GET /", "POST ", "PRI *", …) rather than a TLS record
// (which starts with byte 0x16 for a handshake).
func looksLikeHTTP(head []byte) bool {
	if len(head) < 2 {
		return false
	}
	for i, b := range head {
		switch {
		case b >= 'A' && b <= 'Z':
		case b == ' ' && i > 0:
			return true
		default:
			return false
		}
	}
	return len(head) == 5 // a method of five letters or more
}

// answerPlainHTTP reads the request's head (briefly, and at most 64 KiB),
// so the client is not reset while still sending it, then answers the JSON
// 400 and closes the connection.
func (c *sniffConn) answerPlainHTTP() {
	_ = c.Conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	var head []byte
	for len(head) < 64<<10 && !bytes.Contains(head, []byte("\r\n\r\n")) && !bytes.Contains(head, []byte("\n\n")) {
		line, err := c.br.ReadSlice('\n')
		head = append(head, line...)
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			break
		}
	}
	body := `{"error":"` + plainHTTPMessage + `"}` + "\n"
	_ = c.Conn.SetWriteDeadline(time.Now().Add(2 * time.Second))
	_, _ = fmt.Fprintf(c.Conn, "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
	// Close the write side first and drain a little, so that a body the
	// client is still sending does not turn the close into a reset that
	// destroys the answer (net/http's closeWriteAndWait).
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
		_ = c.Conn.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		_, _ = io.CopyN(io.Discard, c.br, 256<<10)
	}
	_ = c.Conn.Close()
}
