package jsonbody

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/httpjson"
)

// Parse decodes a JSON object one level deep: in one pass (scanFields)
// when it can, else parseFieldsSlow, which answers every body scanFields
// leaves to it, refusals included.
func Parse(body []byte) (Fields, error) {
	return ParseInto(nil, body)
}

// ParseInto is Parse, the one-pass reader appending to dst[:0] (its array,
// when it has room: a caller's array of MaxFields) and aliasing body.
func ParseInto(dst Fields, body []byte) (Fields, error) {
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
func parseFieldsSlow(body []byte) (Fields, error) {
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
	f := Fields{}
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
		f = append(f, Field{Name: []byte(key), Value: raw})
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
	return simulator.Errorf(simulator.EINVALID, "Request body is not valid JSON: %s", ErrorText(err))
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

// ErrorText words an encoding/json error for a client: the syntax error
// and its byte offset, or the end of input.
func ErrorText(err error) string {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return fmt.Sprintf("%s (at byte %d)", syn.Error(), syn.Offset)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return "unexpected end of JSON input"
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}
