package steps

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/partner-v3/conformance-kit/steps/result"

	"github.com/partner-v3/conformance-kit/steps/internal/mask"
)

// exchange is one request the suite sent and what came back, kept to check
// and to show on failure.
type exchange struct {
	method  string
	url     string
	header  http.Header // request headers as sent (secrets still in)
	body    []byte
	sent    time.Time
	recv    time.Time
	err     error // transport failure: no answer
	status  int
	rheader http.Header
	rbody   []byte
	tls     bool
	// budget is the transport's finding of §8 for this request: a 429
	// after a full quiet window.
	budget string
	// judged is set when a scenario's check failed on the answer: the
	// whole-run observer does not report it again (observer.go).
	judged atomic.Bool
}

// markJudged records that a scenario's check failed on x; x may be nil.
func (x *exchange) markJudged() {
	if x != nil {
		x.judged.Store(true)
	}
}

// json decodes the response body: exactly one JSON value, numbers kept as
// json.Number so integers stay exact.
func (x *exchange) json() (any, error) {
	return decodeJSON(x.rbody)
}

func decodeJSON(b []byte) (any, error) {
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

// object decodes the response body as a JSON object.
func (x *exchange) object() (map[string]any, error) {
	v, err := x.json()
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("body is JSON but not an object: %s", kindOf(v))
	}
	return m, nil
}

// bodyLimit cuts the bodies a report shows.
const bodyLimit = 4096

// report is the exchange as reports show it, the run's secrets hidden
// wherever they appear (URL, headers, bodies, error); nil for no exchange.
func (x *exchange) report(sec *mask.Secrets) *result.Exchange {
	if x == nil {
		return nil
	}
	r := &result.Exchange{Method: x.method, URL: sec.String(x.url), RequestHeader: sec.Header(x.header), RequestBody: cut(sec, x.body),
		Status: x.status, ResponseHeader: sec.Header(x.rheader), ResponseBody: cut(sec, x.rbody), Duration: x.recv.Sub(x.sent)}
	if x.err != nil {
		r.Error = sec.String(x.err.Error())
	}
	return r
}

// cut is a body as reports show it: secrets hidden, then cut at
// bodyLimit. The search looks a little past the cut, so that a secret the
// cut would halve is hidden whole.
func cut(sec *mask.Secrets, b []byte) string {
	const past = 256
	if len(b) <= bodyLimit {
		return sec.String(string(b))
	}
	s := sec.String(string(b[:min(len(b), bodyLimit+past)]))
	if len(s) > bodyLimit {
		s = s[:bodyLimit]
	}
	return s + fmt.Sprintf("… (%d bytes in all)", len(b))
}

// kindOf names the JSON type of a decoded value as the spec's tables do.
func kindOf(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case json.Number:
		if isInteger(v) {
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

// isInteger reports whether a JSON number is written as an integer: "7",
// not "7.0" or "7e0" (spec §2 tables say "integer").
func isInteger(n json.Number) bool {
	s := string(n)
	if strings.ContainsAny(s, ".eE") {
		return false
	}
	_, err := n.Int64()
	return err == nil
}

// intOf returns the value as an int64 when it is a JSON integer.
func intOf(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok || !isInteger(n) {
		return 0, false
	}
	i, err := n.Int64()
	return i, err == nil
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
