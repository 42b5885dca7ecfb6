package server

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"runtime/debug"
	"strconv"
	"sync"
	"unsafe"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// codes maps application error codes to HTTP statuses (spec §4, §7).
var codes = map[string]int{
	simulator.EINVALID:      http.StatusBadRequest,
	simulator.EUNAUTHORIZED: http.StatusUnauthorized,
	simulator.EFORBIDDEN:    http.StatusForbidden,
	simulator.ENOTFOUND:     http.StatusNotFound,
	simulator.ECONFLICT:     http.StatusConflict,
	simulator.ENOTALLOWED:   http.StatusMethodNotAllowed,
	simulator.ETOOLARGE:     http.StatusRequestEntityTooLarge,
	simulator.EUNSUPPORTED:  http.StatusUnsupportedMediaType,
	simulator.ERATELIMIT:    http.StatusTooManyRequests,
	simulator.EINTERNAL:     http.StatusInternalServerError,

	eTimeout:        http.StatusRequestTimeout,
	eExpectation:    http.StatusExpectationFailed,
	eHeaderTooLarge: http.StatusRequestHeaderFieldsTooLarge,
}

// Codes of the HTTP layer, which only the server meets (no store returns
// them), beside the application's codes of package simulator.
const (
	eTimeout        = "timeout"            // 408: the body did not arrive in time
	eExpectation    = "expectation_failed" // 417: an Expect other than 100-continue
	eHeaderTooLarge = "header_too_large"   // 431: request line and headers over the cap
)

// ErrorStatusCode returns the HTTP status for an application error code.
func ErrorStatusCode(code string) int {
	if v, ok := codes[code]; ok {
		return v
	}
	return http.StatusInternalServerError
}

// ErrorResponse is every error body: the spec §7 shape of a 429, reused for
// every status so a client parses one shape.
type ErrorResponse struct {
	Error string `json:"error"`
}

// Error writes err as a JSON error. Only internal errors are logged: they
// are the ones nobody else will see; their detail never reaches the client.
// An error made withFinding notes its finding in the request's record, for
// the client report.
func (s *Server) Error(w http.ResponseWriter, r *http.Request, err error) {
	var fe *findingError
	if errors.As(err, &fe) {
		noteFinding(r, fe.kind, fe.detail)
	}
	code := simulator.ErrorCode(err)
	var oe *outcomeError
	if code == simulator.EINTERNAL && !errors.As(err, &oe) {
		s.logger().Error("internal error", "request_id", w.Header().Get(requestIDHeader),
			"method", r.Method, "path", r.URL.Path, "err", err)
	}
	status, message := errorStatus(err)
	if !partnerRequest(r) {
		writeJSON(w, status, &ErrorResponse{Error: message})
		return
	}
	pl := s.play(r)
	if code == simulator.ETOOLARGE {
		// http.bodyLimit's refusal: decided before authentication, so
		// the server's own profile's.
		if sp := s.serverPlay(); !sp.bodyLimitDefault && sp.bodyLimit.Refusal != nil {
			status, message = sp.bodyLimit.Refusal.Status, sp.bodyLimit.Refusal.Message
		}
	}
	// §7 gives the 429 body; its Content-Type is the profile's
	// (rateLimit.refusalContentType).
	if status == http.StatusTooManyRequests {
		if pl.refusalContentType == nil {
			writeJSON(w, status, &ErrorResponse{Error: message})
			return
		}
		writeProfileError(w, status, message, profile.ErrorBody{MessageField: "error"}, pl.refusalContentType)
		return
	}
	// errors.bodies shapes every other status.
	if pl.errorBodies == nil {
		if pl.contentType == nil {
			writeJSON(w, status, &ErrorResponse{Error: message})
			return
		}
		writeProfileError(w, status, message, profile.ErrorBody{MessageField: "error"}, pl.contentType)
		return
	}
	b := pl.errorBody(status)
	ct := pl.contentTypeOf()
	if b.ContentType != "" {
		ct = []string{b.ContentType}
	}
	writeProfileError(w, status, message, b, ct)
}

// writeJSON writes v with status, as spec §1 rule 3 wants of every body.
func writeJSON(w http.ResponseWriter, status int, v any) {
	buf := getBuffer()
	defer putBuffer(buf)
	b := bytes.NewBuffer((*buf)[:0])
	if err := json.NewEncoder(b).Encode(v); err != nil {
		// Only a programmer's error: every value written here encodes.
		panic(fmt.Sprintf("encode answer: %v", err))
	}
	*buf = b.Bytes()
	writeBody(w, status, *buf)
}

// jsonContentType is the Content-Type of every answer, shared rather than
// allocated per response (Header.Set would also canonicalise the name).
// Nothing edits a header value in place, so sharing is safe.
var jsonContentType = []string{spec.ContentType}

// writeBody writes an answer already encoded as JSON (ending in a newline,
// as json.Encoder ends a value), with its length: one write, no chunking.
func writeBody(w http.ResponseWriter, status int, body []byte) {
	writeBodyAs(w, status, body, jsonContentType)
}

// writeBodyAs is writeBody with the Content-Type contentType: the
// profile's (http.responseContentType).
func writeBodyAs(w http.ResponseWriter, status int, body []byte, contentType []string) {
	h := w.Header()
	h["Content-Type"] = contentType
	h["Content-Length"] = contentLength(len(body))
	w.WriteHeader(status)
	// An error means the client went away mid-body; nobody is left to tell.
	_, _ = w.Write(body)
}

// sharedLengths bounds the Content-Length values made once: every answer
// but a Campaign List page is shorter (a Stats answer is some 200 bytes,
// Add Contact's and an error's under 100).
const sharedLengths = 2048

// contentLengths[n] is the text of n, for the Content-Length of the
// answers shorter than sharedLengths: made once rather than a string and a
// slice per answer (issue 31). Like jsonContentType, shared: nothing edits
// a header value in place.
var contentLengths = func() *[sharedLengths]string {
	var v [sharedLengths]string
	for n := range v {
		v[n] = strconv.Itoa(n)
	}
	return &v
}()

// contentLength is the Content-Length header value of a body of n bytes.
// The shared slice has no room beyond its one value, so an append to it
// copies instead of writing into its neighbour's.
func contentLength(n int) []string {
	if n < sharedLengths {
		return contentLengths[n : n+1 : n+1]
	}
	return []string{strconv.Itoa(n)}
}

// buffers recycles answer buffers: a page of 50 campaigns is some 20 KB.
var buffers = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

func getBuffer() *[]byte { return buffers.Get().(*[]byte) }

// putBuffer returns b to the pool unless it grew past 64 KiB, so that one
// huge answer does not pin its memory for ever.
func putBuffer(b *[]byte) {
	if cap(*b) <= 64<<10 {
		buffers.Put(b)
	}
}

const requestIDHeader = "X-Request-Id"

var requestIDRE = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,64}$`)

// withRequestID gives every response an X-Request-Id: the client's own when
// it sent a sane one (so it can trace its calls), otherwise a new one.
func withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// requestIDHeader is canonical already: no Header.Get or Set
		// (issue 21).
		id := firstValue(r.Header[requestIDHeader])
		if requestIDRE.MatchString(id) {
			w.Header()[requestIDHeader] = []string{id}
		} else {
			w.Header()[requestIDHeader] = newRequestID()
		}
		next.ServeHTTP(w, r)
	})
}

// requestIDValue is a new request id and the header value holding it, in
// one allocation instead of a string and a slice (issue 31).
type requestIDValue struct {
	value [1]string
	text  [16]byte
}

// newRequestID returns the header value of a new request id: 8 random
// bytes in lower-case hex.
func newRequestID() []string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	v := new(requestIDValue)
	hex.Encode(v.text[:], b[:])
	// text is written once, above, and never again: the string may
	// share its bytes.
	v.value[0] = unsafe.String(&v.text[0], len(v.text))
	return v.value[:]
}

// recoverer turns a panic into a 500 JSON answer (spec §7) instead of a
// dropped connection. http.ErrAbortHandler is re-panicked: it is how a
// handler asks on purpose for the connection to be cut (the drop fault).
func (s *Server) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if errAbort(v) {
					panic(v)
				}
				s.Error(w, r, fmt.Errorf("panic: %v\n%s", v, debug.Stack()))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// statusRecorder remembers the status a handler wrote, for the journal.
type statusRecorder struct {
	http.ResponseWriter
	status int
	// st, if set, commits the request once with the status before the
	// header goes out: what it records is in place before the client can
	// read the answer.
	st *requestState
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
		if r.st != nil {
			r.st.commit(code)
		}
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.WriteHeader(http.StatusOK)
	}
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// discardLogger is the logger of a server without one, made once.
var discardLogger = slog.New(slog.DiscardHandler)

func (s *Server) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return discardLogger
}

// errAbort reports whether v is the sentinel panic value of a cut connection.
func errAbort(v any) bool {
	err, ok := v.(error)
	return ok && errors.Is(err, http.ErrAbortHandler)
}
