package partnerapi

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/controlapi"
	"github.com/partner-v3/conformance-kit/simulator/httpjson"
	"github.com/partner-v3/conformance-kit/simulator/profile"
)

// Error writes err as a JSON error. Only internal errors are logged: they
// are the ones nobody else will see; their detail never reaches the client.
// An error made withFinding notes its finding in the request's record, for
// the client report.
func (s *API) Error(w http.ResponseWriter, r *http.Request, err error) {
	var fe *findingError
	if errors.As(err, &fe) {
		noteFinding(r, fe.kind, fe.detail)
	}
	code := simulator.ErrorCode(err)
	var oe *outcomeError
	chosen := errors.As(err, &oe) // a profile's refusal: its own status
	if code == simulator.EINTERNAL && !chosen {
		s.logger().Error("internal error", "request_id", w.Header().Get(httpjson.RequestIDHeader),
			"method", r.Method, "path", r.URL.Path, "err", err)
	}
	status, message := errorStatus(err)
	if !partnerRequest(r) {
		httpjson.Write(w, status, &httpjson.ErrorResponse{Error: message})
		return
	}
	if code == simulator.ETOOLARGE && !chosen {
		// http.bodyLimit's refusal: decided before authentication, so
		// the server's own profile's.
		o := s.serverPlay().bodyLimit.Refusal
		status, message = o.Status, profile.Render(o.Message, profile.Request{Limit: s.maxBodyBytes()})
		if st := stateFrom(r); st != nil && st.account == nil {
			s.routingHeaders(w, r) // rateLimit.headerClasses: refused before the credentials
		}
	}
	pl := s.play(r)
	if status == http.StatusTooManyRequests {
		// §7 gives the 429 body; its Content-Type is the profile's
		// (rateLimit.refusalContentType).
		writeProfileError(w, status, message, rateLimitBody, pl.refusalContentType, nil)
		return
	}
	// rateLimit.headerClasses: a refusal after authentication carries
	// its class's rate-limit headers, exactly.
	s.refusedHeaders(w, r, pl, status)
	// errors.bodies shapes every other status.
	b, ct := pl.errorBody(status)
	writeProfileError(w, status, message, b, ct, faultyFields(err))
}

// rateLimitBody is §7's 429 body: {"error": message}.
var rateLimitBody = profile.ErrorBody{MessageField: "error"}

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
	if r.st != nil && r.st.exchange != (controlapi.ExchangeRef{}) {
		r.st.keepAnswer(b) // before it can reach the client
	}
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// discardLogger is the logger of a server without one, made once.
var discardLogger = slog.New(slog.DiscardHandler)

func (s *API) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return discardLogger
}

// recoverer turns a panic into a 500 answered by Error
// (httpjson.Recoverer).
func (s *API) recoverer(next http.Handler) http.Handler { return httpjson.Recoverer(next, s.Error) }
