// Package answer is what the spec says of an answer, checked as pure
// functions of it: a JSON body labelled as such (§1 rule 3), the spec's
// messages (§5, §7), the field tables of every operation's 200 answer and
// their formats (§2.2, §2.3, §4), and what a vendor should know although
// the spec allows it (the warnings). The step library's checks and the
// whole-run observer (Observer, rule every-answer), which holds every
// answer of a run to what the spec says of every response, both judge with
// these functions: one piece of code per rule.
//
// The package knows nothing of scenarios: an Answer is a request and what
// came back, whoever sent it.
package answer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/internal/mask"
	"github.com/partner-v3/conformance-kit/steps/result"
)

// Answer is one request and what came back, as the checks read it.
type Answer struct {
	Method string
	URL    string
	// Header and Body are the request's, as sent (secrets still in).
	Header http.Header
	Body   []byte
	// Sent and Received time the exchange.
	Sent, Received time.Time
	// Err is a transport failure: no answer.
	Err            error
	Status         int
	ResponseHeader http.Header
	ResponseBody   []byte
}

// JSON decodes the response body: exactly one JSON value, numbers kept as
// json.Number so integers stay exact.
func (a *Answer) JSON() (any, error) { return DecodeJSON(a.ResponseBody) }

// Object decodes the response body as a JSON object.
func (a *Answer) Object() (map[string]any, error) {
	v, err := a.JSON()
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("body is JSON but not an object: %s", KindOf(v))
	}
	return m, nil
}

// Operation is the name of the spec operation a was sent to (by its
// path); "" for a path that is none of the spec's.
func (a *Answer) Operation() string { return OperationOf(a.URL) }

// Report is the answer as reports show it, the run's secrets hidden
// wherever they appear (URL, headers, bodies, error) and the bodies cut
// (result.Cut); nil for no answer. sec may be nil.
func (a *Answer) Report(sec *mask.Secrets) *result.Exchange {
	if a == nil {
		return nil
	}
	r := &result.Exchange{Method: a.Method, URL: sec.String(a.URL), RequestHeader: sec.Header(a.Header), RequestBody: result.Cut(sec, a.Body),
		Status: a.Status, ResponseHeader: sec.Header(a.ResponseHeader), ResponseBody: result.Cut(sec, a.ResponseBody), Duration: a.Received.Sub(a.Sent)}
	if a.Err != nil {
		r.Error = sec.String(a.Err.Error())
	}
	return r
}

// OperationOf names the spec operation whose path ends url; "" for none.
func OperationOf(url string) string {
	for _, o := range spec.Operations() {
		if strings.HasSuffix(url, "/"+o.Path) {
			return o.Name
		}
	}
	return ""
}

// DecodeJSON decodes b as exactly one JSON value, numbers kept as
// json.Number.
func DecodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("body is not JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("body is not one JSON value: data follows it")
	}
	return v, nil
}

// IsJSON reports whether the response body is one JSON value.
func IsJSON(a *Answer) bool {
	_, err := a.JSON()
	return err == nil
}

// IsJSONType reports whether a media type says JSON: application/json or a
// +json type (RFC 6839).
func IsJSONType(mt string) bool {
	return mt == spec.ContentType || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")
}

// LabelProblem says what is wrong with an answer's media type; "" when it
// is JSON.
func LabelProblem(a *Answer) string {
	ct := a.ResponseHeader.Get("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err != nil || !IsJSONType(mt) {
		return fmt.Sprintf("Content-Type is %q, want application/json: every response body is JSON (spec §1 rule 3)", ct)
	}
	return ""
}

// Mentions reports whether the body carries the message: the spec shows no
// body shape for errors other than 429 (§7), so the suite looks for the text
// in the body, not for a field name.
func Mentions(body []byte, msg string) bool {
	if strings.Contains(string(body), msg) {
		return true
	}
	// The text may be JSON-escaped ("\u0027", "\/"): compare decoded strings.
	v, err := DecodeJSON(body)
	if err != nil {
		return false
	}
	found := false
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			found = found || strings.Contains(v, msg)
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(v)
	return found
}

// KindOf names the JSON type of a decoded value as the spec's tables do.
func KindOf(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case json.Number:
		if IsInteger(v) {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// IsInteger reports whether a JSON number is written as an integer: "7",
// not "7.0" or "7e0" (spec §2 tables say "integer").
func IsInteger(n json.Number) bool {
	s := string(n)
	if strings.ContainsAny(s, ".eE") {
		return false
	}
	_, err := n.Int64()
	return err == nil
}

// IntOf returns the value as an int64 when it is a JSON integer.
func IntOf(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok || !IsInteger(n) {
		return 0, false
	}
	i, err := n.Int64()
	return i, err == nil
}

// JSONText is v written as JSON, for messages.
func JSONText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// Quoted renders names as "a", "b".
func Quoted(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// AsArray is v as a JSON array; nil when it is none.
func AsArray(v any) []any {
	a, _ := v.([]any)
	return a
}
