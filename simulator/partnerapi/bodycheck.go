package partnerapi

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"net/http"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/jsonbody"
	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/simulator/spec"
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
	return s.bodyErrorOf(r, true)
}

// bodyErrorOf is bodyError, the operation's fields checked or not
// (withFields): the JSON alone is the check auth.checkOrder names json.
func (s *API) bodyErrorOf(r *http.Request, withFields bool) error {
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
		if f, err = s.play(r).malformed(body, err); err != nil {
			return err
		}
	}
	if !withFields {
		return nil
	}
	return operations[recordFrom(r).Entry.Operation].body(s, r, f)
}

// restoredBody is a request body read ahead and put back.
type restoredBody struct {
	io.Reader
	io.Closer
}

// bodyFirst returns the body's error in place of authErr, the refusal of
// the check failed (profile.CheckCredentials or CheckAccount), when the
// profile checks the body before it (auth.checkOrder): the JSON alone, or
// the JSON and the fields; else authErr.
func (s *API) bodyFirst(r *http.Request, failed string, authErr error) error {
	order := s.play(r).checkOrder
	json, fields := profile.Before(order, profile.CheckJSON, failed), profile.Before(order, profile.CheckFields, failed)
	if !json && !fields {
		return authErr
	}
	// A body whose JSON comes after the check cannot be checked before it:
	// its fields are read from the JSON.
	if err := s.bodyErrorOf(r, fields); err != nil && simulator.ErrorCode(err) != simulator.EINTERNAL {
		if json || fields && !isMalformed(err) {
			return err
		}
	}
	return authErr
}

// isMalformed reports whether err is a body that is no JSON (its finding).
func isMalformed(err error) bool {
	var fe *findingError
	return errors.As(err, &fe) && fe.kind == simulator.FindingMalformedJSON
}

// contentTypeError is requireJSON's check of the Content-Type under the
// profile's http.requestContentType: a body sent with any media type but
// JSON's (text/plain, a form, XML...) is refused with the profile's
// outcome, its {contentType} the header sent, or read as JSON. The
// choice is learned from text/plain and played for every other media
// type, as deployments generalise it (issue 28: one that reads text/plain
// as JSON reads a form so too; one that refuses it refuses them all, in
// the same words). A Content-Type sent twice or that is no media type,
// and JSON's with another charset or a Content-Encoding, stay the
// simulator's own 415.
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
	if mt, _, perr := mime.ParseMediaType(cts[0]); perr != nil || mt == spec.ContentType {
		return err
	}
	if o := s.play(r).requestContentType; !o.Accepted() {
		return refuse(o, profile.Request{ContentType: quoteHeader(cts[0])})
	}
	return nil
}
