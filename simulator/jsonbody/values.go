package jsonbody

import (
	"encoding/json"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// String returns the value of a JSON string, or false for any other value:
// one without escapes is its bytes, any other is decoded as encoding/json
// decodes it.
func String(raw []byte) (string, bool) {
	if v, ok := plainString(raw); ok {
		return v, true
	}
	return unmarshalString(raw)
}

// Strings returns the value of a JSON array of strings (a null one is
// nil), or false for any other value, an array with a null element
// included (encoding/json would read it as "").
func Strings(raw []byte) ([]string, bool) {
	if v, ok := plainStrings(raw); ok {
		return v, true
	}
	v, ok := unmarshalStrings(raw)
	if !ok || hasNull(raw) {
		return nil, false
	}
	return v, true
}

// Integer returns the value of a JSON number that is an integer, as JSON
// Schema 2020-12 defines "integer" (Validation §6.1.1: "any number with a
// zero fractional part"): 5, 5.0, 50e-1 and 0.5e1 are all 5; 5.5, "5" and
// true are not integers. One beyond int64 is still an integer: it
// saturates, so that the caller's range check answers it like any other
// out-of-range value.
func Integer(raw []byte) (int64, bool) {
	if v, ok := smallInteger(string(raw)); ok {
		return v, true
	}
	return jsonInteger(string(raw))
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

// HasControl reports whether s holds a C0 or C1 control character or DEL.
// ASSUMPTION (spec §2.1 shows no character set): every string field is one
// line of text, so a NUL, a tab or a line break in it is a client's bug.
func HasControl(s string) bool {
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
