package edge

import (
	"net/http"
	"strings"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/httpjson"
)

// MaxHeaderBytes caps a request's line and headers; over it the answer is a
// JSON 431. The spec shows no limit (§8). net/http's own cap
// (http.Server.MaxHeaderBytes, netHTTPMaxHeaderBytes) lies well above it;
// past that one net/http answers before any handler, and the edge
// (edge.go) puts this JSON 431 in place of its plain-text one.
const MaxHeaderBytes = 64 << 10

// netHTTPMaxHeaderBytes is http.Server.MaxHeaderBytes (NewServer): net/http answers
// past it (plus its 4 KiB of slack) before any handler runs.
const netHTTPMaxHeaderBytes = 1 << 20

// Guard answers what is wrong with a request at the HTTP level before
// anything else looks at it (so before authentication, and uncounted by the
// rate limit): over HTTP/1, framing made ambiguous by Transfer-Encoding
// (which the edge notes, edge.go); headers over MaxHeaderBytes, an Expect
// other than 100-continue, a declared Content-Length over maxBody. Each is
// answered at once, without reading a body that may never come or whose
// length is in doubt, and the connection is closed rather than drained.
// writeError answers the refusal, in the words of the API behind the
// guard (codes of package httpjson: EHeaderTooLarge, EExpectation).
func Guard(next http.Handler, maxBody int64, writeError func(w http.ResponseWriter, r *http.Request, err error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		note := takeHeadNote(r)
		// By its canonical key, straight from the map: Header.Values
		// would canonicalise the name on every request (issue 31).
		expect := r.Header["Expect"]
		if note.expect != nil {
			expect = note.expect // the edge took them out of the head
		}
		var err error
		switch {
		case note.framing != "":
			// RFC 9112 §6.1: a server MAY reject it, and MUST close the
			// connection after answering it (below).
			err = simulator.Errorf(simulator.EINVALID, "%s", note.framing)
		case headerBytes(r) > MaxHeaderBytes:
			err = simulator.Errorf(httpjson.EHeaderTooLarge, "Request headers exceed %d bytes", MaxHeaderBytes)
		case len(expect) > 1 || len(expect) == 1 && !strings.EqualFold(expect[0], "100-continue"):
			// Over HTTP/1 net/http would answer a bare 417 itself: the edge
			// takes the lines out of the head and notes them.
			err = simulator.Errorf(httpjson.EExpectation, "Expect %s is not supported: the only expectation is 100-continue",
				httpjson.QuoteField(strings.Join(expect, ", ")))
		case r.ContentLength > maxBody:
			err = simulator.Errorf(simulator.ETOOLARGE, "Request body exceeds %d bytes", maxBody)
		}
		if err == nil {
			next.ServeHTTP(w, r)
			return
		}
		if r.ProtoMajor == 1 {
			// The body, if any, is not read: the connection cannot carry
			// another request.
			w.Header().Set("Connection", "close")
		}
		writeError(w, r, err)
	})
}

// headerBytes is the size of a request's line and headers as sent, near
// enough: net/http keeps no count.
func headerBytes(r *http.Request) int {
	n := len(r.Method) + len(r.RequestURI) + len(r.Host) + 16
	for k, vv := range r.Header {
		for _, v := range vv {
			n += len(k) + len(v) + 4
		}
	}
	return n
}
