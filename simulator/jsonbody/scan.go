package jsonbody

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// The one-pass reading of a request body (issue 21). parseFieldsSlow reads
// a body twice over (json.Decoder's token stream for the field names, then
// each value decoded again into a RawMessage, then validJSONText over
// every value and the whole body): a quarter of Add Contact's handler
// under load. scanFields reads the same bodies in one pass over the bytes,
// field names and values together, and allocates only the map.
//
// It accepts a subset of what parseFieldsSlow accepts, with the same
// result: a JSON object whose top-level names carry no escape and are
// distinct, whose values are valid JSON (RFC 8259) holding only valid UTF-8
// and no lone surrogate escape, nested at most maxScanDepth deep. For any
// other body it reports false and parseFields asks parseFieldsSlow, whose
// refusal and its message (docs/bad-input.md) stay exactly as they were.
// FuzzScanFields holds the two to that.

// maxScanDepth bounds the nesting scanFields follows itself; deeper values
// (never a valid Add Contact, List or Stats field) go the slow way.
const maxScanDepth = 32

// MaxFields bounds the fields scanFields reads itself, each name checked
// against those before it: a body with more (never one of the spec's,
// whose largest has 16) goes the slow way, which finds a repeated name in
// a map. A caller's array of MaxFields holds any body ParseInto reads in
// one pass.
const MaxFields = 16

// scanFields reads body as parseFieldsSlow would, in one pass, or reports
// false when it leaves the body to parseFieldsSlow.
func scanFields(body []byte) (Fields, bool) {
	return scanFieldsInto(nil, body)
}

// scanFieldsInto is scanFields, appending to dst[:0] (a new slice when
// dst is nil).
func scanFieldsInto(dst Fields, body []byte) (Fields, bool) {
	i := skipJSONSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return nil, false
	}
	i = skipJSONSpace(body, i+1)
	f := dst[:0]
	if f == nil {
		f = make(Fields, 0, 4)
	}
	if i < len(body) && body[i] == '}' {
		return f, skipJSONSpace(body, i+1) == len(body)
	}
	for {
		// A name: a string without escapes (one with escapes goes the
		// slow way, which unescapes it).
		if i >= len(body) || body[i] != '"' {
			return nil, false
		}
		start := i + 1
		end, plain := scanString(body, i)
		if end < 0 || !plain {
			return nil, false
		}
		key := body[start : end-1]
		i = skipJSONSpace(body, end)
		if i >= len(body) || body[i] != ':' {
			return nil, false
		}
		i = skipJSONSpace(body, i+1)
		vStart := i
		if i = scanValue(body, i, 0); i < 0 {
			return nil, false
		}
		if f.Has(string(key)) {
			return nil, false // refused, with its message, by the slow way
		}
		if len(f) == MaxFields {
			return nil, false
		}
		// The name and value alias body, which nothing writes to until the
		// request is answered (the caller's to keep so).
		f = append(f, Field{Name: key[:len(key):len(key)], Value: json.RawMessage(body[vStart:i:i])})
		var more bool
		if i, more = scanAfterMember(body, i, '}'); i < 0 {
			return nil, false
		}
		if !more {
			return f, skipJSONSpace(body, i) == len(body)
		}
	}
}

// skipJSONSpace returns the index of the first byte at or after i that is
// not one of RFC 8259's four whitespace bytes.
func skipJSONSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// scanValue returns the index just past the JSON value at b[i], or -1 when
// there is none, or one scanFields leaves to the slow way.
func scanValue(b []byte, i, depth int) int {
	if i >= len(b) {
		return -1
	}
	switch c := b[i]; {
	case c == '"':
		end, _ := scanString(b, i)
		return end
	case c == '-' || c >= '0' && c <= '9':
		return scanNumber(b, i)
	case c == 't':
		return scanLiteral(b, i, "true")
	case c == 'f':
		return scanLiteral(b, i, "false")
	case c == 'n':
		return scanLiteral(b, i, "null")
	case c == '[':
		if depth >= maxScanDepth {
			return -1
		}
		i = skipJSONSpace(b, i+1)
		if i < len(b) && b[i] == ']' {
			return i + 1
		}
		for {
			if i = scanValue(b, i, depth+1); i < 0 {
				return -1
			}
			var more bool
			if i, more = scanAfterMember(b, i, ']'); !more {
				return i
			}
		}
	case c == '{':
		if depth >= maxScanDepth {
			return -1
		}
		i = skipJSONSpace(b, i+1)
		if i < len(b) && b[i] == '}' {
			return i + 1
		}
		for {
			// Nested names may repeat and carry escapes: only the top
			// level's names are fields.
			if i >= len(b) || b[i] != '"' {
				return -1
			}
			if i, _ = scanString(b, i); i < 0 {
				return -1
			}
			i = skipJSONSpace(b, i)
			if i >= len(b) || b[i] != ':' {
				return -1
			}
			if i = scanValue(b, skipJSONSpace(b, i+1), depth+1); i < 0 {
				return -1
			}
			var more bool
			if i, more = scanAfterMember(b, i, '}'); !more {
				return i
			}
		}
	}
	return -1
}

// scanAfterMember reads what follows a member of an array or object,
// ending at b[i]: a comma (it returns the index of the next member and
// true) or the container's closing byte (the index just past it and
// false); anything else is -1 and false.
func scanAfterMember(b []byte, i int, closing byte) (int, bool) {
	i = skipJSONSpace(b, i)
	if i >= len(b) {
		return -1, false
	}
	switch b[i] {
	case ',':
		return skipJSONSpace(b, i+1), true
	case closing:
		return i + 1, false
	}
	return -1, false
}

func scanLiteral(b []byte, i int, lit string) int {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

// scanNumber follows RFC 8259 §6's grammar: -? (0 | [1-9][0-9]*)
// (. [0-9]+)? ([eE] [+-]? [0-9]+)?
func scanNumber(b []byte, i int) int {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = skipDigits(b, i)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		j := skipDigits(b, i+1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := skipDigits(b, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

func skipDigits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// scanString returns the index just past the JSON string whose opening
// quote is b[i] (-1: not a string scanFields accepts: a control byte,
// invalid UTF-8, an unknown escape, a lone surrogate escape), and whether
// it holds no escape at all (its bytes are its value).
func scanString(b []byte, i int) (end int, plain bool) {
	plain = true
	for i++; i < len(b); {
		c := b[i]
		switch {
		case c == '"':
			return i + 1, plain
		case c < 0x20:
			return -1, false
		case c == '\\':
			plain = false
			if i+1 >= len(b) {
				return -1, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
				continue
			case 'u':
			default:
				return -1, false
			}
			r, ok := scanHex4(b, i+2)
			switch {
			case !ok:
				return -1, false
			case r >= 0xDC00 && r <= 0xDFFF:
				return -1, false // a low surrogate with no high one
			case r >= 0xD800 && r <= 0xDBFF:
				// encoding/json would read a lone one as U+FFFD: only a
				// pair is a character.
				if i+11 >= len(b) || b[i+6] != '\\' || b[i+7] != 'u' {
					return -1, false
				}
				lo, ok := scanHex4(b, i+8)
				if !ok || lo < 0xDC00 || lo > 0xDFFF {
					return -1, false
				}
				i += 12
			default:
				i += 6
			}
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				return -1, false
			}
			i += size
		}
	}
	return -1, false
}

func scanHex4(b []byte, i int) (rune, bool) {
	if len(b)-i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// plainString returns the value of a JSON string literal that holds no
// escape (its bytes are its value; a body's strings are valid UTF-8 once
// parsed), or false for any other value, which json.Unmarshal reads.
func plainString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	for _, c := range raw[1 : len(raw)-1] {
		if c == '\\' || c == '"' || c < 0x20 {
			return "", false
		}
	}
	return string(raw[1 : len(raw)-1]), true
}

// plainStrings returns the value of a JSON array of strings none of which
// holds an escape, or false for any other value (null elements included),
// which the slow way reads. An empty array is an empty, non-nil slice, as
// json.Unmarshal makes it.
func plainStrings(raw []byte) ([]string, bool) {
	if len(raw) < 2 || raw[0] != '[' || raw[len(raw)-1] != ']' {
		return nil, false
	}
	i := skipJSONSpace(raw, 1)
	out := []string{}
	if i == len(raw)-1 {
		return out, true
	}
	for i < len(raw) {
		if raw[i] != '"' {
			return nil, false
		}
		end, plain := scanString(raw, i)
		if end < 0 || !plain {
			return nil, false
		}
		out = append(out, string(raw[i+1:end-1]))
		i = skipJSONSpace(raw, end)
		if i >= len(raw) {
			return nil, false
		}
		switch raw[i] {
		case ',':
			i = skipJSONSpace(raw, i+1)
		case ']':
			if i != len(raw)-1 {
				return nil, false
			}
			return out, true
		default:
			return nil, false
		}
	}
	return nil, false
}

// smallInteger reads a JSON integer literal of at most 18 digits (no
// fraction, no exponent), which int64 holds whatever the digits: the
// common case of jsonInteger without its regular expression.
func smallInteger(raw string) (int64, bool) {
	digits := raw
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 18 || len(digits) > 1 && digits[0] == '0' {
		return 0, false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(raw, 10, 64)
	return v, err == nil
}
