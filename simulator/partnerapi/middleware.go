package partnerapi

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/httpjson"
	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// authenticate applies spec §5: a key and secret that match no account
// answer 401 (missing ones included: an absent key is not the right key),
// and an account store that cannot tell (AccountStore.Authenticate's error
// other than EUNAUTHORIZED) answers 500 (§7);
// a matching pair with an x-account-id that is not theirs answers 403
// (an absent one included: ASSUMPTION, the spec's "does not match").
//
// Any of the three headers sent more than once answers 401, whether the
// copies agree or not (ASSUMPTION, spec §5 shows one of each): ambiguity is
// never an authorisation, and HTTP (RFC 9110 §5.3) would read two lines as
// one "a, a" value that is nobody's key.
func (s *API) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, okKey := singleHeader(r, keyAPIKey)
		secret, okSecret := singleHeader(r, keyAPISecret)
		account, okAccount := singleHeader(r, keyAccountID)
		if !okKey || !okSecret || !okAccount {
			s.Error(w, r, withFinding(simulator.FindingRepeatedHeader, firstOf(!okKey, spec.HeaderAPIKey, !okSecret, spec.HeaderAPISecret, spec.HeaderAccountID),
				&simulator.Error{Code: simulator.EUNAUTHORIZED, Message: spec.MsgInvalidCredentials}))
			return
		}
		a, err := s.Accounts.Authenticate(r.Context(), key, secret)
		if err != nil && simulator.ErrorCode(err) != simulator.EUNAUTHORIZED {
			// The store could not answer (Redis down): spec §7's 500, for
			// every kind of account. It says nothing of the credentials,
			// so it is neither a 401 (§5 rule 1) nor the client's finding.
			s.Error(w, r, fmt.Errorf("authenticate: %w", err))
			return
		}
		if err != nil {
			kind, detail := simulator.FindingWrongCredentials, ""
			if key == "" || secret == "" {
				kind, detail = simulator.FindingMissingHeader, firstOf(key == "", spec.HeaderAPIKey, secret == "", spec.HeaderAPISecret, "")
			}
			s.unauthenticatedHeaders(w, r, key) // rateLimit.headerClasses
			if order := s.play(r).checkOrder; profile.Before(order, profile.CheckAccount, profile.CheckCredentials) && s.unknownAccount(r, account) {
				// auth.checkOrder: the account first, and it names none:
				// 403, whatever the key (auth.missingAccount's answer for
				// none at all).
				s.Error(w, r, s.bodyFirst(r, profile.CheckAccount, s.accountRefusal(r, account)))
				return
			}
			s.Error(w, r, s.bodyFirst(r, profile.CheckCredentials, withFinding(kind, detail, &simulator.Error{Code: simulator.EUNAUTHORIZED, Message: spec.MsgInvalidCredentials})))
			return
		}
		if account != a.AccountID {
			recordFrom(r).Entry.AttributedTo = a.AccountID // the key and secret proved it
			s.classHeaders(w, r, s.accountPlay(r.Context(), a), classUnauthenticated, a)
			s.Error(w, r, s.bodyFirst(r, profile.CheckAccount, s.accountRefusal(r, account)))
			return
		}
		if st := stateFrom(r); st != nil {
			st.record.Entry.AccountID, st.account = a.AccountID, a
			next.ServeHTTP(w, r) // no copy of the request: st is in its context
			return
		}
		next.ServeHTTP(w, r.WithContext(simulator.NewContextWithAccount(r.Context(), a)))
	})
}

// firstOf returns a when ok, else b when okB, else c.
func firstOf(ok bool, a string, okB bool, b, c string) string {
	switch {
	case ok:
		return a
	case okB:
		return b
	}
	return c
}

// limitRate applies spec §8 and the control API's faults, in one step of
// the Gate (one Redis round trip): one counter per account for all
// operations together, on the simulator's clock, then the pending fault
// that applies to the request's operation and account. It runs after
// authentication, so requests answered 401 or 403 are not faulted (nor
// counted, unless the profile counts 401s: countUnauthenticated). An
// allowed request counts even when a fault then answers it: the partner's
// server saw it.
//
// Where §8 is silent the request's profile decides (playFor, issue
// 20): the window and whether refusals count (the Gate's RatePolicy),
// whether a request with an invalid body counts (countsBadRequests) and
// which refusal wins when the budget is spent too (limitFirst), the
// rate-limit headers and Retry-After (rateHeaders), and, with
// ProfileLatency, how long the answer takes (playLatency).
func (s *API) limitRate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, rec := simulator.AccountFromContext(r.Context()), recordFrom(r)
		pl := s.play(r)
		policy, counts, limitFirst := pl.ratePolicy, pl.countsBadRequests, pl.limitFirst
		s.playLatency(r, pl, rec.Entry.Operation)
		var badBody error
		if !counts || !limitFirst {
			badBody = s.bodyError(r)
		}
		if badBody != nil && !limitFirst && !counts {
			// The body is checked before the limit, and the request is
			// not counted.
			s.Error(w, r, badBody)
			return
		}
		if badBody != nil && !counts {
			// The limit first, but an invalid body is not counted: only a
			// spent budget answers 429, decided by the gate (which
			// counts nothing it refuses unless refusals count).
			spent, err := s.budgetSpent(r, a.AccountID, policy)
			if err != nil {
				s.Error(w, r, err)
				return
			}
			if !spent {
				s.Error(w, r, badBody)
				return
			}
		}
		ad, err := s.admit(r.Context(), simulator.Arrival{
			AccountID: a.AccountID, Operation: rec.Entry.Operation, Real: s.now()(), Draw: s.draw(), Policy: policy,
		})
		if err != nil {
			s.Error(w, r, err)
			return
		}
		d := ad.Rate
		limit, window := s.rateLimit()
		var vals *[2]string
		st := stateFrom(r)
		if st != nil {
			vals = &st.rateVals
		}
		rateHeaders(w.Header(), pl, vals, limit, window, d, ad.Now)
		rec.Now = ad.Now
		if st != nil {
			st.rated = true
		}
		if badBody != nil && !limitFirst {
			// Counted, but the body answers before the limit: a 400 says
			// nothing of when to come back.
			w.Header().Del("Retry-After")
			s.Error(w, r, badBody)
			return
		}
		if !d.Allowed {
			rec.Limited = true
			s.Error(w, r, &simulator.Error{Code: simulator.ERATELIMIT, Message: spec.MsgRateLimit})
			return
		}
		// The handler's "now" is the instant the request was counted at
		// (rec.Now): one clock read per request.
		if st != nil {
			st.admitted = true
		} else {
			r = r.WithContext(context.WithValue(r.Context(), nowKey{}, ad.Now))
		}
		if ad.Fault != nil && s.injectFault(w, r, ad.Fault) {
			return
		}
		next.ServeHTTP(w, r)
	})
}

// budgetSpent reports whether the account's budget is spent under policy
// at its clock, counting nothing.
func (s *API) budgetSpent(r *http.Request, accountID string, policy simulator.RatePolicy) (bool, error) {
	now, err := s.accountClock(r.Context(), accountID)
	if err != nil {
		return false, err
	}
	n, err := simulator.CountPolicy(r.Context(), s.Counter, accountID, now, policy)
	if err != nil {
		return false, fmt.Errorf("rate budget: %w", err)
	}
	limit, _ := s.rateLimit()
	return n >= limit, nil
}

// admit asks the Gate, or the stores composed when none is set, about an
// arrival; the composed one is called as a value, never boxed into a
// simulator.Gate (an allocation per request, issue 21).
func (s *API) admit(ctx context.Context, a simulator.Arrival) (simulator.Admission, error) {
	if s.Gate != nil {
		return s.Gate.Admit(ctx, a)
	}
	return simulator.StoreGate{Control: s.Control, Counter: s.Counter}.Admit(ctx, a)
}

func (s *API) draw() float64 {
	if s.Rand != nil {
		return s.Rand()
	}
	return rand.Float64()
}

// requestTime is the simulator time limitRate counted the request at, or,
// for a request it has not admitted (yet), the clock read now.
func (s *API) requestTime(r *http.Request) (time.Time, error) {
	if st := stateFrom(r); st != nil {
		if st.admitted {
			return st.record.Now, nil
		}
	} else if now, ok := r.Context().Value(nowKey{}).(time.Time); ok {
		return now, nil // a request served outside record (tests)
	}
	return s.clock(r.Context())
}

// nowKey holds the admission time of a request served outside record,
// which has no requestState.
type nowKey struct{}

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
//
// http.requestContentType: a profile may answer a JSON body sent as
// text/plain otherwise (refused with its own status, or read as JSON).
func (s *API) requireJSON(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := s.contentTypeError(r); err != nil {
			s.Error(w, r, withFinding(simulator.FindingWrongContentType, "", err))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.maxBodyBytes())
		next.ServeHTTP(w, r)
	})
}

// The §5 headers' names as net/http keys them (canonical form), made once:
// Header.Get and Values canonicalise the spec's lower-case names into a new
// string on every call (issue 21).
var (
	keyAPIKey    = http.CanonicalHeaderKey(spec.HeaderAPIKey)
	keyAPISecret = http.CanonicalHeaderKey(spec.HeaderAPISecret)
	keyAccountID = http.CanonicalHeaderKey(spec.HeaderAccountID)
)

// singleHeader returns a header's value and false when it is sent more than
// once. key is the name in canonical form (keyAPIKey …).
func singleHeader(r *http.Request, key string) (string, bool) {
	vv := r.Header[key]
	switch len(vv) {
	case 0:
		return "", true
	case 1:
		return vv[0], true
	}
	return "", false
}

// jsonMediaType checks the body's Content-Type and Content-Encoding. The
// two are read by their canonical names straight from the map
// (Header.Get and Values canonicalise the name on every call: some 4 % of
// Campaign Stats, issue 31).
func jsonMediaType(r *http.Request) error {
	cts, ces := r.Header["Content-Type"], r.Header["Content-Encoding"]
	if len(cts) > 1 {
		return simulator.Errorf(simulator.EUNSUPPORTED, "Content-Type must be sent once, as application/json (got %d)", len(cts))
	}
	ct := firstValue(cts)
	if ct == spec.ContentType && len(ces) == 0 {
		return nil // what nearly every client sends: no parsing needed
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || mt != spec.ContentType {
		if ct == "" {
			ct = "none"
		}
		return simulator.Errorf(simulator.EUNSUPPORTED, "Content-Type must be application/json (got %s)", quoteHeader(ct))
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return simulator.Errorf(simulator.EUNSUPPORTED, "Content-Type charset must be utf-8 (got %s)", quoteHeader(cs))
	}
	for _, ce := range ces {
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

// maxBodyBytes is the largest body served: the server's profile's
// http.bodyLimit (decided before authentication, so never an account's).
// A server without a profile, or whose profile does not know its limit,
// serves its Limits' (MaxBodyBytes, --max-body-bytes), which default.json's
// value stands for.
func (s *API) maxBodyBytes() int64 {
	if sp := s.serverPlay(); sp.bodyLimitKnown || s.MaxBodyBytes <= 0 {
		return int64(sp.bodyLimit.Accepted)
	}
	return s.MaxBodyBytes
}

// malformedBody is the body of a FaultMalformed: JSON cut off mid-value,
// as a proxy or a crashed server might leave it.
const malformedBody = `{"status":"success","data":[{"Id":1,"campaignName":"`

// injectFault applies f, taken for this request, and reports whether it
// answered the request itself. It is logged as what it is, never as an
// internal error, and the journal names it.
func (s *API) injectFault(w http.ResponseWriter, r *http.Request, f *simulator.Fault) bool {
	e := &recordFrom(r).Entry
	e.Fault, e.FaultID = f.Kind, f.ID
	s.logger().LogAttrs(r.Context(), slog.LevelInfo, "injected fault",
		slog.String("request_id", w.Header().Get(httpjson.RequestIDHeader)), slog.String("fault_id", f.ID),
		slog.String("kind", f.Kind), slog.String("operation", f.Operation), slog.String("account_id", e.AccountID))
	switch f.Kind {
	case simulator.FaultError:
		status := f.Status
		if status == 0 {
			status = http.StatusInternalServerError
		}
		// An error the partner's server answers: in the profile's shape
		// of its status (errors.bodies).
		s.Error(w, r, chosenError(status, faultMessage(status)))
		return true
	case simulator.FaultRateLimit:
		// Spec §7: the 429 body, word for word.
		w.Header().Set("Retry-After", strconv.Itoa(int(f.RetryAfter/time.Second)))
		httpjson.Write(w, http.StatusTooManyRequests, &httpjson.ErrorResponse{Error: spec.MsgRateLimit})
		return true
	case simulator.FaultMalformed:
		w.Header().Set("Content-Type", spec.ContentType)
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, malformedBody)
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

// faultMessage is the error of an injected 5xx: the spec §7 message for
// 500, the status's own name for the others (the spec shows no other).
func faultMessage(status int) string {
	if status == http.StatusInternalServerError {
		return spec.MsgInternal
	}
	if text := http.StatusText(status); text != "" {
		return text
	}
	return fmt.Sprintf("Server error %d", status)
}

// accountRefusal is the answer to an x-account-id that is not the
// account's: 403, or for a missing one auth.missingAccount's (§5 allows
// 401 or 403 there, each with its own message: Check holds the profile to
// them).
func (s *API) accountRefusal(r *http.Request, account string) error {
	if account != "" {
		return withFinding(simulator.FindingWrongAccountID, "", &simulator.Error{Code: simulator.EFORBIDDEN, Message: spec.MsgUnauthorizedAccount})
	}
	var refusal error = &simulator.Error{Code: simulator.EFORBIDDEN, Message: spec.MsgUnauthorizedAccount}
	if s.play(r).missingAccount.Status == http.StatusUnauthorized {
		refusal = &simulator.Error{Code: simulator.EUNAUTHORIZED, Message: spec.MsgInvalidCredentials}
	}
	return withFinding(simulator.FindingMissingHeader, spec.HeaderAccountID, refusal)
}
