package partnerapi

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/profile"
)

// Classes of rateLimit.headerClasses, as play.classSend holds them.
const (
	classUnauthenticated = 0
	classRefused         = 1
)

// rateHeaderNames are every rate-limit header the simulator writes: a
// class's answer carries exactly its own (issue 28), so those an earlier
// step wrote (limitRate's, for the request it admitted) go first.
var rateHeaderNames = profile.PlayableRateHeaders()

// classHeaders writes the rate-limit headers of class (rateLimit.headerClasses)
// for account a on an answer that is neither a 200 nor a 429: exactly the
// class's names, none of the others. The values are the account's budget:
// the request's own decision when limitRate admitted it, else the count
// of its window as it stands (nothing counted for it).
func (s *API) classHeaders(w http.ResponseWriter, r *http.Request, pl *play, class int, a *simulator.Account) {
	h := w.Header()
	for _, n := range rateHeaderNames {
		delete(h, n)
	}
	send := pl.classSend[class]
	if send == (rateSend{}) {
		return
	}
	limit, window := s.rateLimit()
	st := stateFrom(r)
	var d simulator.RateDecision
	now := st.rateNow()
	if st != nil && st.rated {
		d = st.rate
	} else {
		t, err := s.accountClock(r.Context(), a.AccountID)
		if err != nil {
			return // the clock's failure: the answer goes without them
		}
		n, err := simulator.CountPolicy(r.Context(), s.Counter, a.AccountID, t, pl.ratePolicy)
		if err != nil {
			return
		}
		d, now = simulator.RateDecision{Allowed: true, Count: n}, t
	}
	reset := window
	if d.Reset > 0 {
		reset = d.Reset
	}
	var vals *[2]string
	if st != nil {
		vals = &st.rateVals
	}
	writeRateSend(h, send, pl.rateHeaders.Reset, vals, limit, window, max(limit-d.Count, 0), reset, now)
}

// rateNow is when limitRate counted the request (its record's Now).
func (st *requestState) rateNow() (now time.Time) {
	if st != nil {
		now = st.record.Now
	}
	return now
}

// unauthenticatedHeaders writes the headers of rateLimit.headerClasses'
// unauthenticated class on a 401 whose x-api-key names an account (a
// wrong or missing secret): the account's profile's. Only the server's
// profile or a throwaway account's can name any, so other 401s cost no
// lookup (as countUnauthenticated).
func (s *API) unauthenticatedHeaders(w http.ResponseWriter, r *http.Request, key string) {
	if key == "" || (s.serverPlay().classSend[classUnauthenticated] == (rateSend{}) && !isThrowawayKey(key)) {
		return
	}
	a, err := s.Accounts.LookupAccount(r.Context(), simulator.AccountLookup{APIKeys: []string{key}})
	if err != nil {
		return // the key names nobody: no account's headers
	}
	s.classHeaders(w, r, s.accountPlay(r.Context(), a), classUnauthenticated, a)
}

// refusedHeaders writes the headers of rateLimit.headerClasses' refused
// class on an error answered after authentication that is not the
// limit's (a 400 for the body, a 404 for an unknown campaign): exactly
// the class's, whatever limitRate wrote for the request it admitted.
func (s *API) refusedHeaders(w http.ResponseWriter, r *http.Request, pl *play, status int) {
	if status == http.StatusTooManyRequests {
		return
	}
	var a *simulator.Account
	if st := stateFrom(r); st != nil {
		a = st.account
	} else {
		a = simulator.AccountFromContext(r.Context())
	}
	if a == nil {
		return // before authentication: authenticate's class
	}
	s.classHeaders(w, r, pl, classRefused, a)
}

// missingContentTypeError plays http.missingContentType for a request
// sent without a Content-Type: the profile's refusal, or nil when the
// body is read as JSON (an empty one as {} when the profile says so).
// Content-Encoding is checked as for a JSON body.
func (s *API) missingContentTypeError(r *http.Request) error {
	o := s.play(r).missingContentType
	if !o.Accepted() {
		return refuse(o.Outcome, profile.Request{ContentType: "none"})
	}
	for _, ce := range r.Header["Content-Encoding"] {
		if !strings.EqualFold(strings.TrimSpace(ce), "identity") {
			return simulator.Errorf(simulator.EUNSUPPORTED, "Content-Encoding %s is not supported: send the body uncompressed", quoteHeader(ce))
		}
	}
	if o.EmptyAsObject {
		emptyAsObject(r)
	}
	return nil
}

// emptyAsObject makes an empty body {}: a deployment that reads a body
// without Content-Type as JSON may read none at all as an empty object
// (http.missingContentType's emptyAsObject).
func emptyAsObject(r *http.Request) {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		r.Body, r.ContentLength = io.NopCloser(strings.NewReader("{}")), 2
		return
	}
	if r.ContentLength > 0 {
		return
	}
	// A body of unknown length (chunked): one byte tells.
	br := bufio.NewReaderSize(r.Body, 16)
	if _, err := br.Peek(1); err == io.EOF {
		r.Body, r.ContentLength = io.NopCloser(strings.NewReader("{}")), 2
		return
	}
	r.Body = restoredBody{Reader: br, Closer: r.Body}
}
