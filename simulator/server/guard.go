package server

import (
	"net/http"
	"strings"

	"github.com/partner-v3/conformance-kit/simulator"
)

// MaxHeaderBytes caps a request's line and headers; over it the answer is a
// JSON 431. The spec shows no limit (§8). net/http's own cap
// (http.Server.MaxHeaderBytes, netHTTPMaxHeaderBytes) lies well above it,
// so that only a request of over a megabyte of headers meets net/http's
// plain-text 431 instead of ours.
const MaxHeaderBytes = 64 << 10

// netHTTPMaxHeaderBytes is http.Server.MaxHeaderBytes: net/http answers
// past it (plus its 4 KiB of slack) before any handler runs.
const netHTTPMaxHeaderBytes = 1 << 20

// maxAdminBodyBytes caps a control API body.
const maxAdminBodyBytes = 1 << 20

// guard answers what is wrong with a request at the HTTP level before
// anything else looks at it (so before authentication, and uncounted by the
// rate limit): headers over MaxHeaderBytes, an Expect other than
// 100-continue, a declared Content-Length over maxBody. The last is
// answered at once, without waiting for a body that may never come, and
// the connection is closed rather than drained.
func (s *Server) guard(next http.Handler, maxBody int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var err error
		switch expect := r.Header.Values("Expect"); {
		case headerBytes(r) > MaxHeaderBytes:
			err = simulator.Errorf(eHeaderTooLarge, "Request headers exceed %d bytes", MaxHeaderBytes)
		case len(expect) > 1 || len(expect) == 1 && !strings.EqualFold(expect[0], "100-continue"):
			// Over HTTP/1.1 net/http answers this itself (a bare 417, see
			// docs/simulator.md, "Known limits"); over HTTP/2 it reaches us.
			err = simulator.Errorf(eExpectation, "Expect %s is not supported: the only expectation is 100-continue",
				quoteField(strings.Join(expect, ", ")))
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
		s.Error(w, r, err)
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
