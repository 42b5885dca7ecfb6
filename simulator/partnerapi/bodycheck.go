package partnerapi

import (
	"bytes"
	"io"
	"mime"
	"net/http"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/jsonbody"
	"github.com/partner-v3/conformance-kit/simulator/profile"
)

// bodyError returns the error the operation's handler would answer for r's
// body under r's profile (Content-Type, size, JSON, the operation's
// fields), or nil when the body is one the handler serves. It reads the
// body without consuming it: r.Body is restored, whole, for the handler.
// For the choices that put the body before another check: auth
// (credentialsFirst false: a wrong key and an invalid body answer the
// body's 400) and the rate limit (rateLimit.limitFirst, countsBadRequests).
// r must have passed Handler's operation routing (its record names the
// operation); a request of no operation has no body error.
func (s *API) bodyError(r *http.Request) error {
	if err := s.contentTypeError(r); err != nil {
		return err
	}
	limit := s.maxBodyBytes()
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	r.Body = restoredBody{Reader: io.MultiReader(bytes.NewReader(body), r.Body), Closer: r.Body}
	if err != nil {
		return jsonbody.ReadError(err)
	}
	if int64(len(body)) > limit {
		return simulator.Errorf(simulator.ETOOLARGE, "Request body exceeds %d bytes", limit)
	}
	f, err := jsonbody.Parse(body)
	if err != nil {
		return withFinding(simulator.FindingMalformedJSON, "", err)
	}
	return operations[recordFrom(r).Entry.Operation].body(s, r, f)
}

// restoredBody is a request body read ahead and put back.
type restoredBody struct {
	io.Reader
	io.Closer
}

// bodyFirst returns the body's error in place of authErr when the profile
// checks the body before the credentials (auth.credentialsFirst false),
// else authErr.
func (s *API) bodyFirst(r *http.Request, authErr error) error {
	if s.play(r).credentialsFirst {
		return authErr
	}
	if err := s.bodyError(r); err != nil && simulator.ErrorCode(err) != simulator.EINTERNAL {
		return err
	}
	return authErr
}

// contentTypeError is requireJSON's check of the Content-Type under the
// profile's http.requestContentType: a JSON body sent as text/plain is
// refused with the profile's outcome, or read as JSON. Any other
// Content-Type but JSON's is the simulator's own 415.
func (s *API) contentTypeError(r *http.Request) error {
	err := jsonMediaType(r)
	if err == nil {
		return nil
	}
	cts := r.Header.Values("Content-Type")
	if len(cts) == 0 {
		return s.missingContentTypeError(r) // http.missingContentType
	}
	if len(cts) != 1 {
		return err
	}
	if mt, _, perr := mime.ParseMediaType(cts[0]); perr != nil || mt != profile.ProbeRequestContentType {
		return err
	}
	if o := s.play(r).requestContentType; !o.Accepted() {
		return refuse(o, profile.Request{ContentType: quoteHeader(cts[0])})
	}
	return nil
}
