package server

import (
	"context"
	"fmt"
	"math"
	"mime"
	"net/http"
	"strconv"
	"strings"
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
//
// Any of the three headers sent more than once answers 401, whether the
// copies agree or not (ASSUMPTION, spec §5 shows one of each): ambiguity is
// never an authorisation, and HTTP (RFC 9110 §5.3) would read two lines as
// one "a, a" value that is nobody's key.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, okKey := singleHeader(r, headerAPIKey)
		secret, okSecret := singleHeader(r, headerAPISecret)
		account, okAccount := singleHeader(r, headerAccountID)
		if !okKey || !okSecret || !okAccount {
			s.Error(w, r, &simulator.Error{Code: simulator.EUNAUTHORIZED, Message: simulator.MsgInvalidCredentials})
			return
		}
		a, err := s.Accounts.Authenticate(r.Context(), key, secret)
		if err != nil {
			s.Error(w, r, &simulator.Error{Code: simulator.EUNAUTHORIZED, Message: simulator.ErrorMessage(err)})
			return
		}
		if account != a.AccountID {
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
// spec leaves open (§8). ASSUMPTIONS: a charset other than utf-8 (RFC 8259
// §8.1: JSON is UTF-8), a Content-Type sent twice and a Content-Encoding
// other than identity (the simulator decompresses nothing) answer 415.
func (s *Server) requireJSON(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := jsonMediaType(r); err != nil {
			s.Error(w, r, err)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.maxBodyBytes())
		next.ServeHTTP(w, r)
	})
}

// singleHeader returns a header's value and false when it is sent more than
// once.
func singleHeader(r *http.Request, name string) (string, bool) {
	vv := r.Header.Values(name)
	switch len(vv) {
	case 0:
		return "", true
	case 1:
		return vv[0], true
	}
	return "", false
}

func jsonMediaType(r *http.Request) error {
	cts := r.Header.Values("Content-Type")
	if len(cts) > 1 {
		return simulator.Errorf(simulator.EUNSUPPORTED, "Content-Type must be sent once, as application/json (got %d)", len(cts))
	}
	ct := r.Header.Get("Content-Type")
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/json" {
		if ct == "" {
			ct = "none"
		}
		return simulator.Errorf(simulator.EUNSUPPORTED, "Content-Type must be application/json (got %s)", quoteHeader(ct))
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return simulator.Errorf(simulator.EUNSUPPORTED, "Content-Type charset must be utf-8 (got %s)", quoteHeader(cs))
	}
	for _, ce := range r.Header.Values("Content-Encoding") {
		if !strings.EqualFold(strings.TrimSpace(ce), "identity") {
			return simulator.Errorf(simulator.EUNSUPPORTED, "Content-Encoding %s is not supported: send the body uncompressed", quoteHeader(ce))
		}
	}
	return nil
}

// quoteHeader shows a header value in a message: at most 100 bytes of it.
func quoteHeader(v string) string {
	if len(v) > 100 {
		v = strings.ToValidUTF8(v[:100], "") + "…"
	}
	return v
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
