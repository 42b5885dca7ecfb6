package partnerapi

import (
	"bufio"
	"io"
	"net/http"
	"strings"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/profile"
)

// Classes of rateLimit.headerClasses, as play.classSend holds them.
const (
	classUnauthenticated = iota
	classRefused
	classRouting
)

// rateHeaderNames are every rate-limit header the simulator writes: a
// class's answer carries exactly its own (issue 28), so any written before
// go first.
var rateHeaderNames = profile.PlayableRateHeaders()

// classHeaders writes the rate-limit headers of class
// (rateLimit.headerClasses) for account a on an answer the limit did not
// count: exactly the class's names, none of the others. The values are
// the account's budget as it stands (nothing counted for the request).
func (s *API) classHeaders(w http.ResponseWriter, r *http.Request, pl *play, class int, a *simulator.Account) {
	h := w.Header()
	for _, n := range rateHeaderNames {
		delete(h, n)
	}
	send := pl.classSend[class]
	if send == (rateSend{}) {
		return
	}
	now, err := s.accountClock(r.Context(), a.AccountID)
	if err != nil {
		return // the clock's failure: the answer goes without them
	}
	n, err := simulator.CountPolicy(r.Context(), s.Counter, a.AccountID, now, pl.ratePolicy)
	if err != nil {
		return
	}
	limit, window := s.rateLimit()
	var vals *[2]string
	if st := stateFrom(r); st != nil {
		vals = &st.rateVals
	}
	writeRateSend(h, send, pl.rateHeaders.Reset, vals, limit, window, max(limit-n, 0), window, now)
}

// unauthenticatedHeaders writes the headers of rateLimit.headerClasses'
// unauthenticated class on a 401 whose x-api-key names an account (a
// wrong or missing secret): the account's profile's.
func (s *API) unauthenticatedHeaders(w http.ResponseWriter, r *http.Request, key string) {
	s.keyHeaders(w, r, key, classUnauthenticated)
}

// routingHeaders writes the headers of rateLimit.headerClasses' routing
// class on an answer decided before the credentials (an unknown path,
// another method, a body over the limit) to a request whose x-api-key
// names an account: the account's profile's.
func (s *API) routingHeaders(w http.ResponseWriter, r *http.Request) {
	if key, ok := singleHeader(r, keyAPIKey); ok {
		s.keyHeaders(w, r, key, classRouting)
	}
}

// keyHeaders writes class's headers for the account key names, none when
// it names nobody. Only the server's profile or a throwaway account's can
// name any, so other answers cost no lookup (as countUnauthenticated).
func (s *API) keyHeaders(w http.ResponseWriter, r *http.Request, key string, class int) {
	if key == "" || (s.serverPlay().classSend[class] == (rateSend{}) && !isThrowawayKey(key)) {
		return
	}
	a, err := s.Accounts.LookupAccount(r.Context(), simulator.AccountLookup{APIKeys: []string{key}})
	if err != nil {
		return // the key names nobody: no account's headers
	}
	s.classHeaders(w, r, s.accountPlay(r.Context(), a), class, a)
}

// refusedHeaders writes the headers of rateLimit.headerClasses' refused
// class on an error answered after authentication, not the limit's, to a
// request the limit did not count (the body checked before it): exactly
// the class's. A request it counted keeps the headers limitRate wrote
// (rateLimit.headers' onSuccess), as a 200 would have.
func (s *API) refusedHeaders(w http.ResponseWriter, r *http.Request, pl *play, status int) {
	st := stateFrom(r)
	if status == http.StatusTooManyRequests || st == nil || st.rated || st.account == nil {
		return // a request served outside record is a test's: no state to tell
	}
	s.classHeaders(w, r, pl, classRefused, st.account)
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
	switch {
	case o.EmptyAsObject:
		if isEmpty(r) {
			r.Body, r.ContentLength = io.NopCloser(strings.NewReader("{}")), 2
		}
	case o.Empty != nil:
		if isEmpty(r) {
			return refuse(*o.Empty, profile.Request{ContentType: "none"})
		}
	}
	return nil
}

// isEmpty reports whether r has no body at all, reading at most one byte
// of one of unknown length (and putting it back): a deployment that reads
// a body without Content-Type as JSON may read none as an empty object,
// or refuse it (http.missingContentType).
func isEmpty(r *http.Request) bool {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return true
	}
	if r.ContentLength > 0 {
		return false
	}
	br := bufio.NewReaderSize(r.Body, 16)
	if _, err := br.Peek(1); err == io.EOF {
		return true
	}
	r.Body = restoredBody{Reader: br, Closer: r.Body}
	return false
}
