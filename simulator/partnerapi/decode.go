package partnerapi

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/httpjson"
	"github.com/partner-v3/conformance-kit/simulator/jsonbody"
)

// fields is a request body decoded one level deep (jsonbody.Fields).
type fields = jsonbody.Fields

// readFields reads a JSON object body (a body that is none is answered
// as the profile's requestBody.malformedJSON says: malformed). Bad JSON, a body that is not an
// object and a body over the size cap are all 4xx errors that say so.
//
// The client report counts a body that is not one JSON object (or ends
// before its Content-Length) as FindingMalformedJSON (spec §1 rule 2).
//
// Served by record, the body is read into a pooled buffer, handed back
// once the request is answered (requestState.release), and the fields
// into the request's own array: the fields alias the body, and nothing
// the answer or the stores keep does (every string is a copy).
func (s *API) readFields(r *http.Request) (fields, error) {
	var (
		dst  fields
		body []byte
		err  error
	)
	if st := stateFrom(r); st != nil && st.body == nil {
		st.body, dst = httpjson.GetBuffer(), st.fieldBuf[:0]
		body, err = jsonbody.ReadAll((*st.body)[:0], r)
		*st.body = body
	} else {
		body, err = jsonbody.ReadAll(nil, r)
	}
	if err != nil {
		if st := stateFrom(r); st != nil {
			st.bodyCut = true // what the exchange kept is its beginning
		}
		err = jsonbody.ReadError(err)
		if simulator.ErrorCode(err) == simulator.EINVALID {
			err = withFinding(simulator.FindingMalformedJSON, "", err)
		}
		return nil, err
	}
	f, err := jsonbody.ParseInto(dst, body)
	if err != nil {
		// requestBody.malformedJSON's answer, or the body read as {}.
		return s.play(r).malformed(body, err)
	}
	return f, nil
}

// only rejects fields outside allowed: a misspelt field ("phone") fails
// loudly instead of being dropped, which is what a partner testing a client
// wants to hear about.
func only(f fields, allowed ...string) error {
	var unknown []string
	for _, fv := range f {
		if !containsName(allowed, fv.Name) {
			unknown = append(unknown, strconv.Quote(httpjson.Shorten(string(fv.Name))))
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	if len(unknown) > 5 {
		unknown = append(unknown[:5], fmt.Sprintf("and %d more", len(unknown)-5))
	}
	return withFinding(simulator.FindingUnknownField, "", simulator.Errorf(simulator.EINVALID, "Unknown field %s: the fields are %s",
		strings.Join(unknown, ", "), strings.Join(allowed, ", ")))
}

// containsName reports whether list holds name, comparing without
// making a string of it.
func containsName(list []string, name []byte) bool {
	for _, v := range list {
		if v == string(name) {
			return true
		}
	}
	return false
}

// stringField is the string field name of f: "" when absent or null.
func stringField(f fields, name string) (string, error) {
	if !f.Present(name) {
		return "", nil
	}
	v, ok := jsonbody.String(f.Raw(name))
	if !ok {
		return "", invalidField(name, "%s must be a string", name)
	}
	if jsonbody.HasControl(v) {
		return "", invalidField(name, "%s must not contain control characters", name)
	}
	return v, nil
}

// integerField is the integer field name of f (jsonbody.Integer), ok false
// when absent or null.
func integerField(f fields, name string) (v int64, ok bool, err error) {
	if !f.Present(name) {
		return 0, false, nil
	}
	v, isInt := jsonbody.Integer(f.Raw(name))
	if !isInt {
		return 0, false, invalidField(name, "%s must be an integer", name)
	}
	return v, true, nil
}

// stringsField is the array of strings field name of f: nil when absent
// or null.
func stringsField(f fields, name string) ([]string, error) {
	if !f.Present(name) {
		return nil, nil
	}
	v, ok := jsonbody.Strings(f.Raw(name))
	if !ok {
		return nil, invalidField(name, "%s must be an array of strings", name)
	}
	for _, s := range v {
		if jsonbody.HasControl(s) {
			return nil, invalidField(name, "%s names must not contain control characters", name)
		}
	}
	return v, nil
}
