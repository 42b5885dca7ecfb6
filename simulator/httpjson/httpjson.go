// Package httpjson is what the simulator's two APIs share in answering
// over HTTP: every error body in one JSON shape (spec §7's), the HTTP
// status of each error code, the answer writer and its buffers, the
// X-Request-Id every answer carries, the recoverer that turns a panic into
// a JSON 500, and the quoting of a client's input in a message. The
// partner API (simulator/partnerapi), the control API (simulator/controlapi)
// and the connection edge (simulator/edge) answer through it, each with
// its own words.
package httpjson

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/partner-v3/conformance-kit/simulator"
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

	ETimeout:        http.StatusRequestTimeout,
	EExpectation:    http.StatusExpectationFailed,
	EHeaderTooLarge: http.StatusRequestHeaderFieldsTooLarge,
}

// Codes of the HTTP layer, which only the servers meet (no store returns
// them), beside the application's codes of package simulator.
const (
	ETimeout        = "timeout"            // 408: the body did not arrive in time
	EExpectation    = "expectation_failed" // 417: an Expect other than 100-continue
	EHeaderTooLarge = "header_too_large"   // 431: request line and headers over the cap
)

// StatusCode returns the HTTP status for an application error code; 500
// for a code it does not know.
func StatusCode(code string) int {
	if v, ok := codes[code]; ok {
		return v
	}
	return http.StatusInternalServerError
}

// Code is the application code of an HTTP status (codes read backwards),
// for a refusal a profile chose by its status: a 4xx of none is EINVALID,
// anything else EINTERNAL.
func Code(status int) string {
	if c, ok := statusCodes[status]; ok {
		return c
	}
	if status >= 400 && status < 500 {
		return simulator.EINVALID
	}
	return simulator.EINTERNAL
}

var statusCodes = func() map[int]string {
	m := make(map[int]string, len(codes))
	for c, s := range codes {
		m[s] = c
	}
	return m
}()

// ErrorResponse is every error body: the spec §7 shape of a 429, reused for
// every status so a client parses one shape.
type ErrorResponse struct {
	Error string `json:"error"`
}

// Write writes v with status, as spec §1 rule 3 wants of every body.
func Write(w http.ResponseWriter, status int, v any) {
	buf := GetBuffer()
	defer PutBuffer(buf)
	b := bytes.NewBuffer((*buf)[:0])
	if err := json.NewEncoder(b).Encode(v); err != nil {
		// Only a programmer's error: every value written here encodes.
		panic(fmt.Sprintf("encode answer: %v", err))
	}
	*buf = b.Bytes()
	WriteBody(w, status, *buf)
}

// ContentType is the Content-Type of every JSON answer, shared rather than
// allocated per response (Header.Set would also canonicalise the name).
// Nothing edits a header value in place, so sharing is safe.
var ContentType = []string{spec.ContentType}

// WriteBody writes an answer already encoded as JSON (ending in a newline,
// as json.Encoder ends a value), with its length: one write, no chunking.
func WriteBody(w http.ResponseWriter, status int, body []byte) {
	WriteBodyAs(w, status, body, ContentType)
}

// WriteBodyAs is WriteBody with the Content-Type contentType (a profile's
// http.responseContentType, for the partner API).
func WriteBodyAs(w http.ResponseWriter, status int, body []byte, contentType []string) {
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
// slice per answer (issue 31). Like ContentType, shared: nothing edits a
// header value in place.
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

// GetBuffer returns an answer buffer from the pool; give it back with
// PutBuffer once the answer is written.
func GetBuffer() *[]byte { return buffers.Get().(*[]byte) }

// PutBuffer returns b to the pool unless it grew past 64 KiB, so that one
// huge answer does not pin its memory for ever.
func PutBuffer(b *[]byte) {
	if cap(*b) <= 64<<10 {
		buffers.Put(b)
	}
}

// RequestIDHeader is the header of every answer's request ID.
const RequestIDHeader = "X-Request-Id"

var requestIDRE = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,64}$`)

// RequestID gives every response an X-Request-Id: the client's own when
// it sent a sane one (so it can trace its calls), otherwise a new one.
func RequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// RequestIDHeader is canonical already: no Header.Get or Set
		// (issue 21).
		var id string
		if vv := r.Header[RequestIDHeader]; len(vv) > 0 {
			id = vv[0]
		}
		if requestIDRE.MatchString(id) {
			w.Header()[RequestIDHeader] = []string{id}
		} else {
			w.Header()[RequestIDHeader] = newRequestID()
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

// Recoverer turns a panic into a 500 answered by writeError (spec §7)
// instead of a dropped connection. http.ErrAbortHandler is re-panicked:
// it is how a handler asks on purpose for the connection to be cut (the
// drop fault).
func Recoverer(next http.Handler, writeError func(w http.ResponseWriter, r *http.Request, err error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if IsAbort(v) {
					panic(v)
				}
				writeError(w, r, fmt.Errorf("panic: %v\n%s", v, debug.Stack()))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// IsAbort reports whether v, a recovered panic's value, is the sentinel of
// a cut connection (http.ErrAbortHandler).
func IsAbort(v any) bool {
	err, ok := v.(error)
	return ok && errors.Is(err, http.ErrAbortHandler)
}

// IsTimeout reports whether err is a timeout (a read deadline passed).
func IsTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// QuoteField names a field in a message: as it is when it is a plain name,
// quoted (and so escaped) otherwise, and never longer than 64 bytes.
func QuoteField(name string) string {
	if fieldNameRE.MatchString(name) {
		return name
	}
	return strconv.Quote(Shorten(name))
}

// Shorten cuts a client's string to 64 bytes for a message.
func Shorten(s string) string {
	if len(s) > 64 {
		return strings.ToValidUTF8(s[:64], "") + "…"
	}
	return s
}

var fieldNameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,63}$`)

// QuotePath shows a path in a message: at most 200 bytes of it.
func QuotePath(p string) string {
	if len(p) > 200 {
		return p[:200] + "…"
	}
	return p
}
