package server

import (
	"context"
	"fmt"
	"math"
	"mime"
	"net/http"
	"strconv"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
)

// Spec §5 header names.
const (
	headerAPIKey    = "x-api-key"
	headerAPISecret = "x-api-secret"
	headerAccountID = "x-account-id"
)

// authenticate applies spec §5: a key and secret that match no account
// answer 401 (missing ones included: an absent key is not the right key);
// a matching pair with an x-account-id that is not theirs answers 403
// (an absent one included: ASSUMPTION, the spec's "does not match").
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, err := s.Accounts.Authenticate(r.Context(), r.Header.Get(headerAPIKey), r.Header.Get(headerAPISecret))
		if err != nil {
			s.Error(w, r, &simulator.Error{Code: simulator.EUNAUTHORIZED, Message: simulator.ErrorMessage(err)})
			return
		}
		if r.Header.Get(headerAccountID) != a.AccountID {
			s.Error(w, r, &simulator.Error{Code: simulator.EFORBIDDEN, Message: simulator.MsgUnauthorizedAccount})
			return
		}
		entryFrom(r).AccountID = a.AccountID
		next.ServeHTTP(w, r.WithContext(simulator.NewContextWithAccount(r.Context(), a)))
	})
}

// limitRate applies spec §8: one counter per account for all operations
// together, on the simulator's clock. It runs after authentication, so
// requests answered 401 or 403 are not counted (they name no account the
// caller proved it owns); requests it refuses are not counted either.
func (s *Server) limitRate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := simulator.AccountFromContext(r.Context())
		now, err := s.clock(r.Context())
		if err != nil {
			s.Error(w, r, err)
			return
		}
		d, err := s.Counter.Take(r.Context(), a.AccountID, now)
		if err != nil {
			s.Error(w, r, fmt.Errorf("rate counter: %w", err))
			return
		}
		limit, _ := s.rateLimit()
		w.Header().Set("X-RateLimit-Limit", strconv.Itoa(limit))
		w.Header().Set("X-RateLimit-Remaining", strconv.Itoa(max(limit-d.Count, 0)))
		if d.Allowed {
			// The handler's "now" is the instant the request was counted at:
			// one clock read per request (a round trip, on Redis).
			r = r.WithContext(context.WithValue(r.Context(), nowKey{}, now))
		} else {
			w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds(d.RetryAfter)))
			s.Error(w, r, &simulator.Error{Code: simulator.ERATELIMIT, Message: simulator.MsgRateLimit})
			return
		}
		next.ServeHTTP(w, r)
	})
}

type nowKey struct{}

// requestTime is the simulator time limitRate counted the request at, or,
// for a request that did not pass through it, the clock read now.
func (s *Server) requestTime(r *http.Request) (time.Time, error) {
	if now, ok := r.Context().Value(nowKey{}).(time.Time); ok {
		return now, nil
	}
	return s.clock(r.Context())
}

// retryAfterSeconds rounds up: a client that waits the whole seconds
// Retry-After says is never refused again for the same reason.
func retryAfterSeconds(d time.Duration) int {
	return max(int(math.Ceil(d.Seconds())), 1)
}

// requireJSON enforces spec §1 rule 2 (bodies sent as application/json,
// parameters such as charset allowed) and caps the body size, which the
// spec leaves open (§8).
func (s *Server) requireJSON(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ct := r.Header.Get("Content-Type")
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			if ct == "" {
				ct = "none"
			}
			s.Error(w, r, simulator.Errorf(simulator.EUNSUPPORTED,
				"Content-Type must be application/json (got %s)", ct))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.maxBodyBytes())
		next.ServeHTTP(w, r)
	})
}

func (s *Server) maxBodyBytes() int64 {
	if s.MaxBodyBytes > 0 {
		return s.MaxBodyBytes
	}
	return DefaultMaxBodyBytes
}

// injectFault applies the next pending fault for op, if any, and reports
// whether it answered the request itself.
func (s *Server) injectFault(w http.ResponseWriter, r *http.Request, op string) bool {
	f, err := s.Control.TakeFault(r.Context(), op)
	if err != nil {
		s.Error(w, r, fmt.Errorf("take fault: %w", err))
		return true
	}
	if f == nil {
		return false
	}
	entryFrom(r).Fault = f.Kind
	switch f.Kind {
	case simulator.FaultError:
		s.Error(w, r, fmt.Errorf("injected fault %s", f.ID))
		return true
	case simulator.FaultDrop:
		// Cuts the connection (HTTP/1.1) or resets the stream (HTTP/2).
		panic(http.ErrAbortHandler)
	case simulator.FaultDelay:
		select {
		case <-time.After(min(f.Delay, MaxFaultDelay)):
		case <-r.Context().Done():
		}
	}
	return false
}
