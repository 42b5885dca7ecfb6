package partnerapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/httpjson"
)

// fields is a request body decoded one level deep, so that every error can
// name the field at fault and the JSON type it should have: its top-level
// names, distinct, in body order, each with its value's raw JSON. A slice
// looked up name by name rather than a map (issue 31): a body of the spec
// has at most 16 fields, and the one-pass reader fills the request's own
// array (requestState.fieldBuf) with names and values aliasing the body,
// allocating nothing.
type fields []field

// field is one top-level name of a body and its value.
type field struct {
	name  []byte
	value json.RawMessage
}

// raw returns the value of the field name, or nil when it is absent (as a
// map's index would).
func (f fields) raw(name string) json.RawMessage {
	for i := range f {
		if string(f[i].name) == name {
			return f[i].value
		}
	}
	return nil
}

// has reports whether the body gives the field name, null included.
func (f fields) has(name string) bool {
	for i := range f {
		if string(f[i].name) == name {
			return true
		}
	}
	return false
}

// readFields reads a JSON object body. Bad JSON, a body that is not an
// object and a body over the size cap are all 4xx errors that say so.
//
// The client report counts a body that is not one JSON object (or ends
// before its Content-Length) as FindingMalformedJSON (spec §1 rule 2).
//
// Served by record, the body is read into a pooled buffer, handed back
// once the request is answered (requestState.release), and the fields
// into the request's own array: the fields alias the body, and nothing
// the answer or the stores keep does (every string is a copy).
func readFields(r *http.Request) (fields, error) {
	var (
		dst  fields
		body []byte
		err  error
	)
	if st := stateFrom(r); st != nil && st.body == nil {
		st.body, dst = httpjson.GetBuffer(), st.fieldBuf[:0]
		body, err = readBody((*st.body)[:0], r)
		*st.body = body
	} else {
		body, err = readBody(nil, r)
	}
	if err != nil {
		err = bodyReadError(err)
		if simulator.ErrorCode(err) == simulator.EINVALID {
			err = withFinding(simulator.FindingMalformedJSON, "", err)
		}
		return nil, err
	}
	f, err := parseFieldsInto(dst, body)
	if err != nil {
		return nil, withFinding(simulator.FindingMalformedJSON, "", err)
	}
	return f, nil
}

// readBody appends r's body to b until its end, as io.ReadAll does, first
// growing b to the size the request declares (Content-Length, when the
// body cap would allow it): one read, no growth, for nearly every body.
func readBody(b []byte, r *http.Request) ([]byte, error) {
	if n := r.ContentLength; n > 0 && n < 1<<20 && int64(cap(b)) <= n {
		b = slices.Grow(b, int(n)+1) // +1: room to read the end
	}
	for {
		n, err := r.Body.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // let append pick the growth
		}
	}
}

// bodyReadError turns a failed body read into a client error. Its message
// never carries err's text: a net.OpError names the server's own socket
// addresses.
func bodyReadError(err error) error {
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return simulator.Errorf(simulator.ETOOLARGE, "Request body exceeds %d bytes", tooLarge.Limit)
	case errors.Is(err, os.ErrDeadlineExceeded) || httpjson.IsTimeout(err):
		// ASSUMPTION (spec §8 shows no timeout): 408, and the connection is
		// not reused (the body's remainder may still be on its way).
		return simulator.Errorf(httpjson.ETimeout, "Request body was not received in time: the whole request must arrive within the server's read timeout")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return simulator.Errorf(simulator.EINVALID, "Request body ended before its declared Content-Length")
	default:
		return simulator.Errorf(simulator.EINVALID, "Request body could not be read")
	}
}

// parseFields decodes a JSON object one level deep: in one pass
// (scanFields) when it can, else parseFieldsSlow, which answers every body
// scanFields leaves to it, refusals included.
func parseFields(body []byte) (fields, error) {
	return parseFieldsInto(nil, body)
}

// parseFieldsInto is parseFields, the one-pass reader filling dst's
// array when dst has room.
func parseFieldsInto(dst fields, body []byte) (fields, error) {
	if f, ok := scanFieldsInto(dst, body); ok {
		return f, nil
	}
	return parseFieldsSlow(body)
}

// parseFieldsSlow decodes a JSON object one level deep. Beyond the JSON
// grammar it refuses what would otherwise be read silently in a way the
// client did not mean: a byte-order mark or UTF-16, invalid UTF-8 or a lone
// surrogate escape (encoding/json would store U+FFFD in their place), a
// field given twice (encoding/json keeps the last), and anything after the
// object.
func parseFieldsSlow(body []byte) (fields, error) {
	body = trimJSONSpace(body)
	if len(body) == 0 {
		return nil, simulator.Errorf(simulator.EINVALID, "Request body is empty: a JSON object is required")
	}
	if enc := unicodeBOM(body); enc != "" {
		return nil, simulator.Errorf(simulator.EINVALID, "Request body must be UTF-8 JSON without a byte-order mark (got %s)", enc)
	}
	if body[0] != '{' {
		return nil, simulator.Errorf(simulator.EINVALID, "Request body must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if _, err := dec.Token(); err != nil { // the '{'
		return nil, invalidJSON(err)
	}
	f := fields{}
	seen := map[string]bool{} // a field given twice, found in time that does not grow with the body's fields
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, invalidJSON(err)
		}
		key, ok := t.(string)
		if !ok {
			return nil, simulator.Errorf(simulator.EINVALID, "Request body is not valid JSON: object key expected")
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, invalidJSON(err)
		}
		if seen[key] {
			// ASSUMPTION (RFC 8259 §4 leaves it to the receiver): a field
			// given twice is ambiguous, so it is refused, never "last wins".
			return nil, simulator.Errorf(simulator.EINVALID, "Field %s is given more than once", httpjson.QuoteField(key))
		}
		if !validJSONText(raw) {
			return nil, simulator.Errorf(simulator.EINVALID, "%s is not valid UTF-8", httpjson.QuoteField(key))
		}
		seen[key] = true
		f = append(f, field{name: []byte(key), value: raw})
	}
	if _, err := dec.Token(); err != nil { // the '}'
		return nil, invalidJSON(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, simulator.Errorf(simulator.EINVALID, "Request body is not valid JSON: data after the object")
	}
	if !utf8.Valid(body) || !validJSONText(body) {
		// Only a key or the space between tokens is left to hold it.
		return nil, simulator.Errorf(simulator.EINVALID, "Request body is not valid UTF-8")
	}
	return f, nil
}

func invalidJSON(err error) error {
	return simulator.Errorf(simulator.EINVALID, "Request body is not valid JSON: %s", jsonErrorText(err))
}

// trimJSONSpace trims the four whitespace bytes of RFC 8259 §2 (not
// bytes.TrimSpace's Unicode spaces, which JSON does not allow).
func trimJSONSpace(b []byte) []byte {
	return bytes.Trim(b, " \t\r\n")
}

// unicodeBOM names the encoding a body's byte-order mark or NUL pattern
// reveals, or "" for none. RFC 8259 §8.1: JSON is UTF-8, without a BOM.
func unicodeBOM(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte{0xEF, 0xBB, 0xBF}):
		return "a UTF-8 byte-order mark"
	case bytes.HasPrefix(b, []byte{0xFE, 0xFF}), bytes.HasPrefix(b, []byte{0xFF, 0xFE}):
		return "UTF-16"
	case len(b) >= 2 && (b[0] == 0 || b[1] == 0):
		return "UTF-16 or UTF-32"
	}
	return ""
}

// validJSONText reports whether raw JSON holds only valid UTF-8 and no
// \u escape that stands for a lone surrogate: encoding/json replaces both
// with U+FFFD without a word.
func validJSONText(raw []byte) bool {
	if !utf8.Valid(raw) {
		return false
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' || i+1 >= len(raw) {
			continue
		}
		if raw[i+1] != 'u' {
			i++ // an escape of one character, e.g. \\ or \"
			continue
		}
		r, ok := hex4(raw[i+2:])
		if !ok {
			return false
		}
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return false // a low surrogate with no high one before it
		case r >= 0xD800 && r <= 0xDBFF:
			rest := raw[i+6:]
			if len(rest) < 6 || rest[0] != '\\' || rest[1] != 'u' {
				return false
			}
			lo, ok := hex4(rest[2:])
			if !ok || lo < 0xDC00 || lo > 0xDFFF {
				return false
			}
			i += 11
		default:
			i += 5
		}
	}
	return true
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	n, err := strconv.ParseUint(string(b[:4]), 16, 16)
	return rune(n), err == nil
}

func jsonErrorText(err error) string {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return fmt.Sprintf("%s (at byte %d)", syn.Error(), syn.Offset)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return "unexpected end of JSON input"
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// only rejects fields outside allowed: a misspelt field ("phone") fails
// loudly instead of being dropped, which is what a partner testing a client
// wants to hear about.
func (f fields) only(allowed ...string) error {
	var unknown []string
	for _, fv := range f {
		if !containsName(allowed, fv.name) {
			unknown = append(unknown, strconv.Quote(httpjson.Shorten(string(fv.name))))
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

// present reports whether the field is given and not null.
func (f fields) present(name string) bool {
	raw := f.raw(name)
	return raw != nil && string(raw) != "null"
}

// blank reports whether the field is absent, null or the empty string: not
// given, as far as spec §4.1's "missing" goes.
func (f fields) blank(name string) bool {
	return !f.present(name) || string(f.raw(name)) == `""`
}

func (f fields) str(name string) (string, error) {
	if !f.present(name) {
		return "", nil
	}
	// A string without escapes is its bytes: no decoding needed.
	raw := f.raw(name)
	v, ok := plainString(raw)
	if !ok {
		if v, ok = unmarshalString(raw); !ok {
			return "", invalidField(name, "%s must be a string", name)
		}
	}
	if hasControl(v) {
		return "", invalidField(name, "%s must not contain control characters", name)
	}
	return v, nil
}

// unmarshalString decodes raw as encoding/json does a string. Apart from
// str, so that str's own v stays on its stack: a pointer handed to
// json.Unmarshal moves it to the heap on every call, fast path or not
// (issue 31).
func unmarshalString(raw []byte) (string, bool) {
	var v string
	err := json.Unmarshal(raw, &v)
	return v, err == nil
}

// unmarshalStrings decodes raw as encoding/json does an array of strings
// (a null one is nil), apart from strings for the reason unmarshalString is.
func unmarshalStrings(raw []byte) ([]string, bool) {
	var v []string
	err := json.Unmarshal(raw, &v)
	return v, err == nil
}

// hasControl reports whether s holds a C0 or C1 control character or DEL.
// ASSUMPTION (spec §2.1 shows no character set): every string field is one
// line of text, so a NUL, a tab or a line break in it is a client's bug.
func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || (r >= 0x7F && r <= 0x9F) {
			return true
		}
	}
	return false
}

// numberRE is the JSON number grammar (RFC 8259 §6), in parts: sign,
// integer part, fraction digits, exponent.
var numberRE = regexp.MustCompile(`^(-?)(0|[1-9][0-9]*)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$`)

// integer decodes a JSON number whose value is an integer, as JSON Schema
// 2020-12 defines "integer" (Validation §6.1.1: "any number with a zero
// fractional part") and so as the OpenAPI document declares these fields:
// 5, 5.0, 50e-1 and 0.5e1 are all 5; 5.5, "5" and true are not integers.
// One beyond int64 is still an integer: it saturates, so that the caller's
// range check answers it like any other out-of-range value.
func (f fields) integer(name string) (v int64, ok bool, err error) {
	if !f.present(name) {
		return 0, false, nil
	}
	raw := string(f.raw(name))
	v, isInt := smallInteger(raw)
	if !isInt {
		v, isInt = jsonInteger(raw)
	}
	if !isInt {
		return 0, false, invalidField(name, "%s must be an integer", name)
	}
	return v, true, nil
}

// jsonInteger returns the value of a JSON number literal when it is an
// integer, saturated to the int64 range, reading it exactly (no float64 on
// the way: 9007199254740993.0 is not 9007199254740992), in time and memory
// that do not grow with an exponent (1e999999999 is an integer too).
func jsonInteger(raw string) (int64, bool) {
	m := numberRE.FindStringSubmatch(raw)
	if m == nil {
		return 0, false
	}
	neg, digits, exp := m[1] == "-", m[2]+m[3], int64(-len(m[3]))
	if m[4] != "" {
		e, err := strconv.ParseInt(m[4], 10, 64)
		if err != nil { // an exponent past int64: far beyond any digits
			e = math.MaxInt64 / 2
			if m[4][0] == '-' {
				e = -e
			}
		}
		exp += e
	}
	// The value is digits × 10^exp: drop the trailing zeros into exp, the
	// leading ones for nothing.
	trimmed := strings.TrimRight(digits, "0")
	exp += int64(len(digits) - len(trimmed))
	digits = strings.TrimLeft(trimmed, "0")
	switch {
	case digits == "":
		return 0, true // 0, -0, 0.000, 0e-7
	case exp < 0:
		return 0, false // a non-zero digit after the point
	case int64(len(digits))+exp > 19: // past int64's 19 digits
		return saturate(neg), true
	}
	v, err := strconv.ParseUint(digits+strings.Repeat("0", int(exp)), 10, 64)
	switch {
	case err != nil || !neg && v > math.MaxInt64 || neg && v > 1<<63:
		return saturate(neg), true
	case neg:
		return int64(-v), true // -(1<<63) wraps to math.MinInt64, as it should
	}
	return int64(v), true
}

func saturate(neg bool) int64 {
	if neg {
		return math.MinInt64
	}
	return math.MaxInt64
}

func (f fields) strings(name string) ([]string, error) {
	if !f.present(name) {
		return nil, nil
	}
	// An array of strings without escapes: no decoding needed.
	raw := f.raw(name)
	v, ok := plainStrings(raw)
	if !ok {
		if v, ok = unmarshalStrings(raw); !ok || hasNull(raw) {
			return nil, invalidField(name, "%s must be an array of strings", name)
		}
	}
	for _, s := range v {
		if hasControl(s) {
			return nil, invalidField(name, "%s names must not contain control characters", name)
		}
	}
	return v, nil
}

// hasNull reports whether a JSON array holds a null element (which
// encoding/json would read as "").
func hasNull(raw json.RawMessage) bool {
	var elems []json.RawMessage
	if json.Unmarshal(raw, &elems) != nil {
		return false
	}
	for _, e := range elems {
		if string(e) == "null" {
			return true
		}
	}
	return false
}
