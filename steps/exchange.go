package steps

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"
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

// secretHeaders are masked in every dump (spec §5 credentials).
var secretHeaders = []string{"X-Api-Key", "X-Api-Secret", "X-Account-Id", "Authorization"}

// mask shows enough of a credential to recognise it and no more.
func mask(v string) string {
	if len(v) <= 8 {
		return strings.Repeat("*", len(v))
	}
	return v[:4] + "…(" + fmt.Sprint(len(v)) + " chars)"
}

// dump renders the exchange for a failure message, secrets masked, bodies
// cut at 2 KiB.
func (x *exchange) dump() string {
	if x == nil {
		return "(no request was sent in this scenario)"
	}
	var b strings.Builder
	b.WriteString("--- request (credentials masked) ---\n")
	fmt.Fprintf(&b, "%s %s\n", x.method, x.url)
	writeHeaders(&b, x.header, true)
	if len(x.body) > 0 {
		b.WriteString(cut(x.body))
		b.WriteString("\n")
	}
	b.WriteString("--- response ---\n")
	if x.err != nil {
		fmt.Fprintf(&b, "no answer: %v\n", x.err)
		return b.String()
	}
	fmt.Fprintf(&b, "HTTP %d %s (after %s)\n", x.status, http.StatusText(x.status), x.recv.Sub(x.sent).Round(time.Millisecond))
	writeHeaders(&b, x.rheader, false)
	b.WriteString(cut(x.rbody))
	return b.String()
}

func writeHeaders(b *strings.Builder, h http.Header, request bool) {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !request && !slices.Contains([]string{"Content-Type", "Date", "Retry-After", "Allow", "Content-Length"}, k) {
			continue
		}
		for _, v := range h[k] {
			switch http.CanonicalHeaderKey(k) {
			case "X-Api-Secret", "Authorization":
				v = fmt.Sprintf("****(%d chars)", len(v))
			default:
				if slices.Contains(secretHeaders, http.CanonicalHeaderKey(k)) {
					v = mask(v)
				}
			}
			fmt.Fprintf(b, "%s: %s\n", k, v)
		}
	}
}

func cut(b []byte) string {
	const limit = 2048
	if len(b) > limit {
		return string(b[:limit]) + fmt.Sprintf("… (%d bytes in all)", len(b))
	}
	return string(b)
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
