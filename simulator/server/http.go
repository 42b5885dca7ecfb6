package server

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/profile"
)

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
