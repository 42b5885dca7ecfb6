package partnerapi_test

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator/sim"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// dialH1 opens a raw HTTP/1.1 connection over TLS to the partner listener.
func dialH1(t *testing.T, h *harness) (net.Conn, *bufio.Reader) {
	t.Helper()
	return dialH1To(t, h, h.sim.URL())
}

// dialH1To opens a raw HTTP/1.1 connection over TLS to the listener of
// base, the partner or the control one.
func dialH1To(t *testing.T, h *harness, base string) (net.Conn, *bufio.Reader) {
	t.Helper()
	pool := h.client.Transport.(*http.Transport).TLSClientConfig.RootCAs
	conn, err := tls.Dial("tcp", hostOf(base), &tls.Config{RootCAs: pool, NextProtos: []string{"http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	return conn, bufio.NewReader(conn)
}

// rawRequest is a keep-alive POST of Campaign List as alpha, with extra
// header lines and a body as sent (give Content-Length or
// Transfer-Encoding in lines).
func rawRequest(h *harness, lines []string, body string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "POST %s/%s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n", spec.BasePath, spec.PathCampaignList)
	fmt.Fprintf(&b, "x-api-key: %s\r\nx-api-secret: %s\r\nx-account-id: %s\r\n", h.alpha.APIKey, h.alpha.APISecret, h.alpha.AccountID)
	for _, l := range lines {
		b.WriteString(l + "\r\n")
	}
	b.WriteString("\r\n" + body)
	return b.String()
}

func readAnswer(t *testing.T, br *bufio.Reader) (*http.Response, string) {
	t.Helper()
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodPost})
	for err == nil && resp.StatusCode == http.StatusContinue {
		resp, err = http.ReadResponse(br, &http.Request{Method: http.MethodPost})
	}
	if err != nil {
		t.Fatalf("no HTTP answer: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read answer: %v", err)
	}
	return resp, string(body)
}

// mustEOF: the server closed the connection after its answer (the client
// never asked it to: every request here is keep-alive).
// mustJSONAnswer reads the next answer and fails unless it is status with
// the JSON body {"error": msg}.
func mustJSONAnswer(t *testing.T, br *bufio.Reader, status int, msg string) *http.Response {
	t.Helper()
	resp, got := readAnswer(t, br)
	if resp.StatusCode != status || resp.Header.Get("Content-Type") != "application/json" ||
		got != `{"error":"`+strings.ReplaceAll(msg, `"`, `\"`)+`"}`+"\n" {
		t.Fatalf("answer %d %q %s, want %d with %q", resp.StatusCode, resp.Header.Get("Content-Type"), got, status, msg)
	}
	return resp
}

func mustEOF(t *testing.T, conn net.Conn, br *bufio.Reader) {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if b, err := br.ReadByte(); !errors.Is(err, io.EOF) {
		t.Fatalf("connection still open after the answer (read %q, %v), want EOF", b, err)
	}
}

// mustRefuseAndClose: the next answer on br is the JSON refusal status
// with msg, says Connection: close, and the server then closes conn.
func mustRefuseAndClose(t *testing.T, conn net.Conn, br *bufio.Reader, status int, msg string) {
	t.Helper()
	if resp := mustJSONAnswer(t, br, status, msg); !resp.Close {
		t.Error("no Connection: close on the answer")
	}
	mustEOF(t, conn, br)
}

// TestEdge_AmbiguousFramingIsRefusedAndClosed: RFC 9112 §6.1, a request
// with both Content-Length and Transfer-Encoding may be rejected, and the
// connection MUST be closed after the answer. The simulator answers a JSON
// 400 and closes, over raw keep-alive HTTP/1.1 over TLS.
func TestEdge_AmbiguousFramingIsRefusedAndClosed(t *testing.T) {
	h := MustOpenServer(t, sim.Config{})
	for _, lines := range [][]string{
		{"Content-Length: 5", "Transfer-Encoding: chunked"},
		{"Transfer-Encoding: chunked", "Content-Length: 26"},
	} {
		t.Run(strings.Join(lines, ", "), func(t *testing.T) {
			conn, br := dialH1(t, h)
			body := "14\r\n" + `{"limit":1,"page":1}` + "\r\n0\r\n\r\n"
			// A second request behind it, which must not be served.
			if _, err := io.WriteString(conn, rawRequest(h, lines, body)+rawRequest(h, []string{"Content-Length: 20"}, `{"limit":1,"page":1}`)); err != nil {
				t.Fatal(err)
			}
			mustRefuseAndClose(t, conn, br, http.StatusBadRequest, "Request has both Content-Length and Transfer-Encoding, so its length is ambiguous (RFC 9112 §6.1): send one of them")
		})
	}
}

// TestEdge_KeepAliveStreamIsFollowed: the edge follows a keep-alive
// connection's requests as net/http frames them (Content-Length, chunked
// with extensions and a trailer, 100-continue), so bodies reach the handler
// unchanged and every request is answered in turn; an unknown Expect later
// on the same connection is still answered in JSON, and the connection
// then closed.
func TestEdge_KeepAliveStreamIsFollowed(t *testing.T) {
	h := MustOpenServer(t, sim.Config{})
	conn, br := dialH1(t, h)
	// JSON whitespace that looks like the end of a head, inside bodies.
	list := "{\"limit\":1,\r\n\r\n\"page\":1}"
	chunked := fmt.Sprintf("3;ext=1\r\n%s\r\n%x \r\n%s\r\n0\r\nX-Trailer: t\r\n\r\n", list[:3], len(list)-3, list[3:])
	reqs := []string{
		rawRequest(h, []string{fmt.Sprintf("Content-Length: %d", len(list))}, list),
		rawRequest(h, []string{"Transfer-Encoding: chunked"}, chunked),
		rawRequest(h, []string{"Expect: 100-continue", fmt.Sprintf("Content-Length: %d", len(list))}, list),
		rawRequest(h, []string{fmt.Sprintf("Content-Length: %d", len(list)), "X-Folded: a", " b"}, list),
		rawRequest(h, []string{"Content-Length: 20", "Expect: teapot"}, `{"limit":1,"page":1}`),
	}
	go func() { _, _ = io.WriteString(conn, strings.Join(reqs, "")) }()
	for i := range 4 {
		resp, got := readAnswer(t, br)
		if resp.StatusCode != http.StatusOK || resp.Close {
			t.Fatalf("request %d: %d (close %v) %s", i+1, resp.StatusCode, resp.Close, got)
		}
	}
	mustJSONAnswer(t, br, http.StatusExpectationFailed, "Expect teapot is not supported: the only expectation is 100-continue")
	mustEOF(t, conn, br)
}

// TestEdge_HugeHeadersGetJSON: 2 MiB of headers, past net/http's own cap,
// is answered with the simulator's JSON 431, not net/http's text.
func TestEdge_HugeHeadersGetJSON(t *testing.T) {
	h := MustOpenServer(t, sim.Config{})
	conn, br := dialH1(t, h)
	go func() {
		_, _ = io.WriteString(conn, rawRequest(h, []string{"X-Padding: " + strings.Repeat("p", 2<<20), "Content-Length: 20"}, `{"limit":1,"page":1}`))
	}()
	mustJSONAnswer(t, br, http.StatusRequestHeaderFieldsTooLarge, "Request headers exceed 65536 bytes")
}

// TestEdge_NetHTTPRefusalsAreJSONInTurn: on a keep-alive connection to
// either listener, two good requests and then one net/http refuses
// itself, all sent at once: the two are answered 200 first, then the
// refusal with net/http's status as a JSON error that names the fault, with
// Connection: close, and the connection ends (RFC 9112 §6.3: respond 400,
// then close); the request behind it is never answered.
func TestEdge_NetHTTPRefusalsAreJSONInTurn(t *testing.T) {
	h := MustOpenServer(t, sim.Config{})
	good := map[string]string{
		"partner": rawRequest(h, []string{"Content-Length: 20"}, `{"limit":1,"page":1}`),
		"control": "GET /faults HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer test-token\r\n\r\n",
	}
	tests := []struct {
		name, bad string
		status    int
		msg       string
	}{
		{"a bad Content-Length", "POST /faults HTTP/1.1\r\nHost: x\r\nContent-Length: 2x\r\n\r\n", http.StatusBadRequest,
			`Content-Length "2x" is not a number of bytes (RFC 9110 §8.6)`},
		{"no Host", "GET /healthz HTTP/1.1\r\n\r\n", http.StatusBadRequest,
			"Request has no Host header: HTTP/1.1 requires one (RFC 9112 §3.2)"},
		{"an unknown Transfer-Encoding", "POST /faults HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: br\r\n\r\n", http.StatusNotImplemented,
			`Transfer-Encoding "br" is not supported: the only transfer coding accepted is chunked, sent once (RFC 9112 §6.1)`},
		{"HTTP/2.0 over HTTP/1", "GET /healthz HTTP/2.0\r\nHost: x\r\n\r\n", http.StatusHTTPVersionNotSupported,
			"HTTP version HTTP/2.0 is not supported: send HTTP/1.1, or HTTP/2 negotiated by TLS ALPN (RFC 9110 §15.6.6)"},
	}
	for _, listener := range []string{"partner", "control"} {
		base := h.sim.URL()
		if listener == "control" {
			base = h.sim.AdminURL()
		}
		for _, tt := range tests {
			t.Run(listener+": "+tt.name, func(t *testing.T) {
				conn, br := dialH1To(t, h, base)
				go func() { _, _ = io.WriteString(conn, good[listener]+good[listener]+tt.bad+good[listener]) }()
				for i := range 2 {
					if resp, got := readAnswer(t, br); resp.StatusCode != http.StatusOK || resp.Close {
						t.Fatalf("request %d: %d (close %v) %s", i+1, resp.StatusCode, resp.Close, got)
					}
				}
				mustRefuseAndClose(t, conn, br, tt.status, tt.msg)
			})
		}
	}
}

// TestEdge_HeadCutShortGetsJSON: a client that stops sending halfway
// through a head (and says so: close_notify) gets net/http's 400 as JSON,
// with the general message, since there is no whole head to explain.
func TestEdge_HeadCutShortGetsJSON(t *testing.T) {
	h := MustOpenServer(t, sim.Config{})
	conn, br := dialH1(t, h)
	if _, err := io.WriteString(conn, "POST "+spec.BasePath+"/"+spec.PathCampaignList+" HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty"); err != nil {
		t.Fatal(err)
	}
	if err := conn.(*tls.Conn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	mustJSONAnswer(t, br, http.StatusBadRequest, "Request is not valid HTTP/1.1: its head is malformed or cut short (RFC 9112 §2.2)")
	mustEOF(t, conn, br)
}
