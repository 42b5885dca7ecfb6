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
	chosen := errors.As(err, &oe) // a profile's refusal: its own status
	if code == simulator.EINTERNAL && !chosen {
		s.logger().Error("internal error", "request_id", w.Header().Get(requestIDHeader),
			"method", r.Method, "path", r.URL.Path, "err", err)
	}
	status, message := errorStatus(err)
	if !partnerRequest(r) {
		writeJSON(w, status, &ErrorResponse{Error: message})
		return
	}
	if code == simulator.ETOOLARGE && !chosen {
		// http.bodyLimit's refusal: decided before authentication, so
		// the server's own profile's.
		o := s.serverPlay().bodyLimit.Refusal
		status, message = o.Status, profile.Render(o.Message, profile.Request{Limit: s.maxBodyBytes()})
	}
	pl := s.play(r)
	if status == http.StatusTooManyRequests {
		// §7 gives the 429 body; its Content-Type is the profile's
		// (rateLimit.refusalContentType).
		writeProfileError(w, status, message, rateLimitBody, pl.refusalContentType)
		return
	}
	// errors.bodies shapes every other status.
	b, ct := pl.errorBody(status)
	writeProfileError(w, status, message, b, ct)
}

// rateLimitBody is §7's 429 body: {"error": message}.
var rateLimitBody = profile.ErrorBody{MessageField: "error"}

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
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(status)
	// An error means the client went away mid-body; nobody is left to tell.
	_, _ = w.Write(body)
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
		id := r.Header.Get(requestIDHeader)
		if !requestIDRE.MatchString(id) {
			var b [8]byte
			_, _ = rand.Read(b[:])
			id = hex.EncodeToString(b[:])
		}
		// requestIDHeader is canonical already: no Header.Set (issue 21).
		w.Header()[requestIDHeader] = []string{id}
		next.ServeHTTP(w, r)
	})
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
