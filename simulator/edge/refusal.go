package edge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/partner-v3/conformance-kit/simulator/httpjson"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// What net/http refuses before any handler runs (a head it cannot parse,
// framing it will not follow, a version it does not serve) it answers by
// writing a text/plain answer straight to the connection and closing it.
// The edge keeps net/http the judge of whether, when and with which status
// a request is refused, and only changes the words: h1Conn.Write
// recognises net/http's answer (netHTTPRefusal) and writes a JSON one with
// the same status in its place, its message explaining what net/http found
// in the head it refused (explainRefusal), which the edge still holds.
//
// Answering from the edge before net/http reads the head was the other
// way, and is the worse one: the edge would have to refuse exactly what
// net/http refuses (refuse more and a request net/http serves is lost,
// less and its text comes back), and it would answer from inside a Read,
// possibly while a handler is still writing the previous request's answer
// on the same connection. Replacing the answer on its way out keeps
// net/http's decision, its order of answers and its close, and costs the
// happy path nothing: the head is examined only once net/http has refused
// it.

// netHTTPErrorHeaders sit between the status line and the body of every
// answer net/http writes itself before a handler (server.go, errorHeaders).
// An answer net/http writes for a handler never has them in this order: it
// sorts its header names (Connection before Content-Type) and adds a Date.
const netHTTPErrorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// netHTTPRefusal reports whether p, one Write, is such an answer of
// net/http's ("HTTP/1.1 <code> <text>" and a body repeating the status,
// or 501's "Unsupported transfer encoding"), and its status.
func netHTTPRefusal(p []byte) (int, bool) {
	const prefix = "HTTP/1.1 "
	// Most writes are answers of handlers (2xx, or longer than any of
	// net/http's own) or bodies: they are told apart in a few comparisons.
	if len(p) < len(prefix)+len(netHTTPErrorHeaders)+4 || len(p) > 512 || p[len(prefix)] < '4' ||
		string(p[:len(prefix)]) != prefix {
		return 0, false
	}
	// The block follows the status line at once (a handler's answer has
	// Connection or Content-Length there): one look at the first CR.
	i := bytes.IndexByte(p, '\r')
	if i < 0 || !bytes.HasPrefix(p[i:], []byte(netHTTPErrorHeaders)) {
		return 0, false
	}
	status, body := p[len(prefix):i], p[i+len(netHTTPErrorHeaders):]
	if len(status) < 5 || status[3] != ' ' {
		return 0, false
	}
	code, err := strconv.Atoi(string(status[:3]))
	if err != nil || code < 400 || code > 599 {
		return 0, false
	}
	if !bytes.Equal(body, status) && !(code == http.StatusNotImplemented && string(body) == "Unsupported transfer encoding") {
		return 0, false
	}
	return code, true
}

// refusalAnswer is the JSON answer put in place of net/http's refusal with
// status code of head (nil if the edge no longer holds it): the message
// explains the head when net/http's status is the one the explanation
// reaches, and names the status's cause in general otherwise.
func refusalAnswer(code int, head []byte) []byte {
	msg := ""
	if head != nil {
		if c, m := explainRefusal(head); c == code {
			msg = m
		}
	}
	if msg == "" {
		msg = refusalMessage(code)
	}
	body, _ := json.Marshal(httpjson.ErrorResponse{Error: msg}) // a struct of one string always encodes
	body = append(body, '\n')
	return fmt.Appendf(nil, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		code, http.StatusText(code), spec.ContentType, len(body), body)
}

// refusalMessage is the message for a refusal the edge cannot explain
// from the head (a head net/http cut off at its cap: 431; a head the
// client stopped sending halfway, which net/http answers 400).
func refusalMessage(code int) string {
	switch code {
	case http.StatusRequestHeaderFieldsTooLarge:
		// Guard's own message for headers over its (lower) cap.
		return "Request headers exceed " + strconv.Itoa(MaxHeaderBytes) + " bytes"
	case http.StatusNotImplemented:
		return "Transfer-Encoding is not supported: the only transfer coding accepted is chunked (RFC 9112 §6.1)"
	case http.StatusHTTPVersionNotSupported:
		return "HTTP version is not supported: send HTTP/1.1 (RFC 9110 §15.6.6)"
	case http.StatusBadRequest:
		return "Request is not valid HTTP/1.1: its head is malformed or cut short (RFC 9112 §2.2)"
	}
	return http.StatusText(code)
}

// explainRefusal finds why net/http refuses a request head, checking what
// net/http checks in the order it checks it (request.go readRequest,
// transfer.go readTransfer, server.go conn.readRequest), and returns the
// status net/http answers and a message for the client; status 0 if it
// finds nothing wrong. It runs only once net/http has refused the head,
// never on a request that is served.
func explainRefusal(head []byte) (int, string) {
	bad := func(format string, a ...any) (int, string) {
		return http.StatusBadRequest, fmt.Sprintf(format, a...)
	}
	lines := splitHead(nil, head)
	if len(lines) == 0 {
		return bad("Request line is empty: a request starts with its method, target and HTTP version (RFC 9112 §3)")
	}
	line := string(lines[0].text)
	method, rest, ok1 := strings.Cut(line, " ")
	target, proto, ok2 := strings.Cut(rest, " ")
	switch {
	case !ok1 || !ok2:
		return bad("Request line %s is not a method, a target and an HTTP version separated by single spaces (RFC 9112 §3)", quoteHTTP(line))
	case !isToken(method):
		return bad("Method %s is not a token (RFC 9110 §9.1)", quoteHTTP(method))
	}
	major, minor, ok := http.ParseHTTPVersion(proto)
	if !ok {
		return bad("HTTP version %s is malformed: send HTTP/1.1 (RFC 9112 §2.3)", quoteHTTP(proto))
	}
	rawURL := target
	if method == http.MethodConnect && !strings.HasPrefix(target, "/") {
		rawURL = "http://" + target
	}
	if _, err := url.ParseRequestURI(rawURL); err != nil {
		return bad("Request target %s is not a valid URI: send an absolute path such as %s/%s (RFC 9112 §3.2)",
			quoteHTTP(target), spec.BasePath, spec.PathCampaignList)
	}
	var hosts, te, cl []string
	badName := ""
	for i, l := range lines[1:] {
		if i == 0 && (l.text[0] == ' ' || l.text[0] == '\t') {
			return bad("The first header line starts with whitespace, which would fold it onto the request line (RFC 9112 §5.2)")
		}
		first, text := fieldLine(l.raw)
		if bytes.IndexByte(first, ':') < 0 {
			return bad("Header line %s has no colon: each header is a name, a colon and a value (RFC 9112 §5)", quoteHTTP(string(first)))
		}
		name, value, _ := bytes.Cut(text, []byte(":"))
		space := false
		for _, b := range name {
			switch {
			case b == ' ':
				// net/http reads "Name :" and refuses it further on.
				space = true
			case !isTokenByte(b):
				return bad("Header name %s is not a token (RFC 9110 §5.1)", quoteHTTP(string(name)))
			}
		}
		if len(name) == 0 {
			return bad("Header line %s has an empty name (RFC 9110 §5.1)", quoteHTTP(string(text)))
		}
		for _, b := range value {
			if b < ' ' && b != '\t' || b == 0x7f {
				return bad("Header %s holds a control character (0x%02x) in its value (RFC 9110 §5.5)", quoteHTTP(string(name)), b)
			}
		}
		if space {
			if badName == "" {
				badName = string(name)
			}
			continue
		}
		v := string(bytes.TrimLeft(value, " \t")) // the line's end is trimmed already
		switch {
		case strings.EqualFold(string(name), "Host"):
			hosts = append(hosts, v)
		case strings.EqualFold(string(name), "Transfer-Encoding"):
			te = append(te, v)
		case strings.EqualFold(string(name), "Content-Length"):
			cl = append(cl, strings.Trim(v, " \t")) // textproto.TrimString, in fixLength

		}
	}
	if len(hosts) > 1 {
		return bad("Request has %d Host headers: send exactly one (RFC 9112 §3.2)", len(hosts))
	}
	if len(te) > 0 && (major > 1 || major == 1 && minor >= 1) {
		// net/http ignores Transfer-Encoding over HTTP/1.0 (the edge
		// refuses it there, edge.go).
		if len(te) != 1 || !strings.EqualFold(te[0], "chunked") {
			return http.StatusNotImplemented, fmt.Sprintf("Transfer-Encoding %s is not supported: the only transfer coding accepted is chunked, sent once (RFC 9112 §6.1)",
				quoteHTTP(strings.Join(te, ", ")))
		}
	}
	for _, v := range cl[min(1, len(cl)):] {
		if v != cl[0] {
			return bad("Request has %d different Content-Length values (%s): its length is ambiguous, send one (RFC 9112 §6.3)",
				len(cl), quoteHTTP(strings.Join(cl, ", ")))
		}
	}
	if len(cl) > 0 {
		if cl[0] == "" {
			return bad("Content-Length is empty: send the body's length in bytes (RFC 9110 §8.6)")
		}
		if _, err := strconv.ParseUint(cl[0], 10, 63); err != nil {
			return bad("Content-Length %s is not a number of bytes (RFC 9110 §8.6)", quoteHTTP(cl[0]))
		}
	}
	h2Preface := method == "PRI" && target == "*" && major == 2 && minor == 0
	if major != 1 && !h2Preface {
		return http.StatusHTTPVersionNotSupported, fmt.Sprintf("HTTP version %s is not supported: send HTTP/1.1, or HTTP/2 negotiated by TLS ALPN (RFC 9110 §15.6.6)", proto)
	}
	if (major > 1 || minor >= 1) && len(hosts) == 0 && !h2Preface && method != http.MethodConnect {
		return bad("Request has no Host header: HTTP/1.1 requires one (RFC 9112 §3.2)")
	}
	if len(hosts) == 1 && !validHost(hosts[0]) {
		return bad("Host header %s is not a valid host (RFC 9112 §3.2, RFC 3986 §3.2.2)", quoteHTTP(hosts[0]))
	}
	if badName != "" {
		return bad("Header name %s has whitespace before its colon (RFC 9112 §5.1)", quoteHTTP(badName))
	}
	return 0, ""
}

// fieldLine reads one header line and its obs-fold continuations (raw, as
// sent) as net/http's textproto does: each line without its line end and
// trimmed of spaces and tabs, joined by one space. first is the first line.
func fieldLine(raw []byte) (first, joined []byte) {
	for n := 0; len(raw) > 0; n++ {
		line, rest, _ := bytes.Cut(raw, []byte("\n"))
		raw = rest
		line = bytes.Trim(bytes.TrimSuffix(line, []byte("\r")), " \t")
		if n == 0 {
			first, joined = line, line
			continue
		}
		joined = append(append(append([]byte(nil), joined...), ' '), line...)
	}
	return first, joined
}

// quoteHTTP quotes a piece of a client's head for a message, cut short.
func quoteHTTP(s string) string { return strconv.Quote(httpjson.Shorten(s)) }

// isTokenByte: RFC 9110 §5.6.2 tchar.
func isTokenByte(b byte) bool {
	switch {
	case b >= '0' && b <= '9', b >= 'a' && b <= 'z', b >= 'A' && b <= 'Z':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", b) >= 0
}

func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isTokenByte(s[i]) {
			return false
		}
	}
	return s != ""
}

// validHost is net/http's check of a Host value (httpguts.ValidHostHeader):
// only bytes that may appear in a uri-host and port.
func validHost(h string) bool {
	for i := 0; i < len(h); i++ {
		b := h[i]
		switch {
		case b >= '0' && b <= '9', b >= 'a' && b <= 'z', b >= 'A' && b <= 'Z':
		case strings.IndexByte("!$%&'()*+,-.:;=[]_~", b) >= 0:
		default:
			return false
		}
	}
	return true
}
