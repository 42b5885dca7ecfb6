package jsonbody

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// scanBodies are bodies of every kind the one-pass reader meets: fast says
// whether scanFields reads it itself (false: it leaves it to
// parseFieldsSlow, which accepts or refuses it with its own message).
var scanBodies = []struct {
	name string
	body string
	fast bool
}{
	{"an Add Contact body", `{"email":"bench-1@example.com","firstName":"Bench","tag":["x"]}`, true},
	{"a Campaign Stats body", `{"campaignId":1001}`, true},
	{"a Campaign List body", `{"limit":50,"page":2}`, true},
	{"an empty object", `{}`, true},
	{"an empty object with space inside", "{ \t\r\n}", true},
	{"space around everything", " \n{ \"a\" : 1 , \"b\"\t:\r\n[ 1 , 2 ] }\n ", true},
	{"every literal", `{"t":true,"f":false,"n":null}`, true},
	{"numbers of every kind", `{"a":0,"b":-0,"c":12,"d":-12.5,"e":1e9,"f":1E+9,"g":1.5e-3,"h":99999999999999999999999,"i":0.0}`, true},
	{"nested values", `{"a":{"b":[1,{"c":null}],"d":{}},"e":[[],[[]]]}`, true},
	{"names repeated inside a nested object", `{"a":{"x":1,"x":2}}`, true},
	{"escapes in a value", `{"a":"q\"b\\s\/f\b\f\n\r\t","b":"\u00e9\ud83d\ude00"}`, true},
	{"escapes in a nested name", `{"a":{"\u0078":1}}`, true},
	{"UTF-8 in names and values", `{"é":"日本","a":["ü"]}`, true},
	{"DEL and C1 characters in a value", "{\"a\":\"\x7f\xc2\x80\"}", true},

	{"an escape in a field name", `{"\u0065mail":"a@example.com"}`, false},
	{"a field given twice", `{"a":1,"a":2}`, false},
	{"a field given twice, the second with an escape", `{"a":1,"\u0061":2}`, false},
	{"a lone high surrogate", `{"a":"\ud800"}`, false},
	{"a lone low surrogate", `{"a":"\udc00"}`, false},
	{"a high surrogate before a non-surrogate", `{"a":"\ud800\u0041"}`, false},
	{"a high surrogate at the end", `{"a":"x\ud83d"}`, false},
	{"an unknown escape", `{"a":"\x"}`, false},
	{"a short unicode escape", `{"a":"\u12"}`, false},
	{"invalid UTF-8 in a value", "{\"a\":\"\xff\"}", false},
	{"invalid UTF-8 in a name", "{\"\xff\":1}", false},
	{"a surrogate in UTF-8", "{\"a\":\"\xed\xa0\x80\"}", false},
	{"a control byte in a string", "{\"a\":\"x\ny\"}", false},
	{"trailing data", `{"a":1}{"b":2}`, false},
	{"trailing garbage", `{"a":1}x`, false},
	{"a trailing comma", `{"a":1,}`, false},
	{"a trailing comma in an array", `{"a":[1,]}`, false},
	{"a missing colon", `{"a" 1}`, false},
	{"a missing value", `{"a":}`, false},
	{"an unquoted name", `{a:1}`, false},
	{"a leading zero", `{"a":01}`, false},
	{"a bare minus", `{"a":-}`, false},
	{"a point without digits", `{"a":1.}`, false},
	{"an exponent without digits", `{"a":1e+}`, false},
	{"a plus sign", `{"a":+1}`, false},
	{"a cut literal", `{"a":tru}`, false},
	{"a literal in capitals", `{"a":True}`, false},
	{"an unterminated string", `{"a":"x}`, false},
	{"an unterminated object", `{"a":1`, false},
	{"an array", `[1]`, false},
	{"a string", `"x"`, false},
	{"null", `null`, false},
	{"nothing", ``, false},
	{"space only", " \n", false},
	{"a byte-order mark", "\xef\xbb\xbf{}", false},
	{"a NUL after the brace", "{\x00}", false},
	{"non-JSON space", "{\"a\":1}\u00a0", false},
	{"nesting past the scanner's depth", `{"a":` + strings.Repeat("[", maxScanDepth+1) + strings.Repeat("]", maxScanDepth+1) + `}`, false},
}

// TestScanFields: scanFields reads the bodies it should itself, and what it
// reads is exactly what parseFieldsSlow (json.Decoder) reads: the same
// names and the same raw bytes of each value. A body it leaves is still
// answered by parseFields, as parseFieldsSlow answers it.
func TestScanFields(t *testing.T) {
	for _, tt := range scanBodies {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := scanFields([]byte(tt.body))
			if ok != tt.fast {
				t.Fatalf("scanFields(%q) read it itself: %v, want %v", tt.body, ok, tt.fast)
			}
			slow, slowErr := parseFieldsSlow([]byte(tt.body))
			if ok {
				if slowErr != nil {
					t.Fatalf("scanFields accepted %q, which parseFieldsSlow refuses: %v", tt.body, slowErr)
				}
				assertSameFields(t, got, slow)
			}
			f, err := Parse([]byte(tt.body))
			if (err == nil) != (slowErr == nil) || err != nil && err.Error() != slowErr.Error() {
				t.Fatalf("Parse(%q) = %v, want %v", tt.body, err, slowErr)
			}
			if err == nil {
				assertSameFields(t, f, slow)
			}
		})
	}
}

func assertSameFields(t *testing.T, got, want Fields) {
	t.Helper()
	if got == nil || len(got) != len(want) {
		t.Fatalf("fields %q, want %q", got, want)
	}
	for _, w := range want {
		k, v := string(w.Name), w.Value
		if g, ok := got.Raw(k), got.Has(k); !ok || !bytes.Equal(g, v) {
			t.Fatalf("field %q = %q, want %q", k, g, v)
		}
	}
}

// TestPlainValues: the shortcuts of str, strings and integer read what
// encoding/json and jsonInteger read, and leave what they should.
func TestPlainValues(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		str  bool // plainString reads it
		strs bool // plainStrings reads it
		ints bool // smallInteger reads it
	}{
		{"a plain string", `"Bench"`, true, false, false},
		{"an empty string", `""`, true, false, false},
		{"a string with UTF-8", `"日本"`, true, false, false},
		{"a string with an escape", `"a\nb"`, false, false, false},
		{"a string with a unicode escape", `"\u00e9"`, false, false, false},
		{"a number", `12`, false, false, true},
		{"a negative number", `-12`, false, false, true},
		{"minus zero", `-0`, false, false, true},
		{"18 digits", `999999999999999999`, false, false, true},
		{"19 digits", `9223372036854775807`, false, false, false},
		{"a fraction", `1.0`, false, false, false},
		{"an exponent", `1e3`, false, false, false},
		{"an array of strings", `["a","b"]`, false, true, false},
		{"an array with space", `[ "a" ,	"b" ]`, false, true, false},
		{"an empty array", `[]`, false, true, false},
		{"an empty array with space", `[ ]`, false, true, false},
		{"an array with an escape", `["a\"b"]`, false, false, false},
		{"an array with null", `["a",null]`, false, false, false},
		{"an array of numbers", `[1]`, false, false, false},
		{"a nested array", `[["a"]]`, false, false, false},
		{"null", `null`, false, false, false},
		{"true", `true`, false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, ok := plainString([]byte(tt.raw))
			if ok != tt.str {
				t.Fatalf("plainString(%s) read it: %v, want %v", tt.raw, ok, tt.str)
			}
			if ok {
				var want string
				if err := json.Unmarshal([]byte(tt.raw), &want); err != nil || s != want {
					t.Fatalf("plainString(%s) = %q, encoding/json reads %q (%v)", tt.raw, s, want, err)
				}
			}
			ss, ok := plainStrings([]byte(tt.raw))
			if ok != tt.strs {
				t.Fatalf("plainStrings(%s) read it: %v, want %v", tt.raw, ok, tt.strs)
			}
			if ok {
				var want []string
				if err := json.Unmarshal([]byte(tt.raw), &want); err != nil || !reflect.DeepEqual(ss, want) {
					t.Fatalf("plainStrings(%s) = %#v, encoding/json reads %#v (%v)", tt.raw, ss, want, err)
				}
			}
			n, ok := smallInteger(tt.raw)
			if ok != tt.ints {
				t.Fatalf("smallInteger(%s) read it: %v, want %v", tt.raw, ok, tt.ints)
			}
			if ok {
				if want, isInt := jsonInteger(tt.raw); !isInt || n != want {
					t.Fatalf("smallInteger(%s) = %d, jsonInteger reads %d (%v)", tt.raw, n, want, isInt)
				}
			}
		})
	}
}

// FuzzScanFields: whatever scanFields reads, parseFieldsSlow reads the
// same, name for name and byte for byte; and parseFields answers every body
// as parseFieldsSlow does, refusals word for word. The value shortcuts
// agree with encoding/json on every value read.
func FuzzScanFields(f *testing.F) {
	for _, tt := range scanBodies {
		f.Add([]byte(tt.body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		slow, slowErr := parseFieldsSlow(body)
		fast, ok := scanFields(body)
		if ok {
			if slowErr != nil {
				t.Fatalf("scanFields accepted %q, which parseFieldsSlow refuses: %v", body, slowErr)
			}
			assertSameFields(t, fast, slow)
		}
		got, err := Parse(body)
		if (err == nil) != (slowErr == nil) || err != nil && err.Error() != slowErr.Error() {
			t.Fatalf("Parse(%q) = %v, want %v", body, err, slowErr)
		}
		for _, fv := range got {
			name, raw := fv.Name, fv.Value
			if s, ok := plainString(raw); ok {
				var want string
				if err := json.Unmarshal(raw, &want); err != nil || s != want {
					t.Fatalf("%s: plainString(%s) = %q, encoding/json reads %q (%v)", name, raw, s, want, err)
				}
			}
			if ss, ok := plainStrings(raw); ok {
				var want []string
				if err := json.Unmarshal(raw, &want); err != nil || !reflect.DeepEqual(ss, want) || hasNull(raw) {
					t.Fatalf("%s: plainStrings(%s) = %#v, encoding/json reads %#v (%v)", name, raw, ss, want, err)
				}
			}
			if n, ok := smallInteger(string(raw)); ok {
				if want, isInt := jsonInteger(string(raw)); !isInt || n != want {
					t.Fatalf("%s: smallInteger(%s) = %d, jsonInteger reads %d", name, raw, n, want)
				}
			}
		}
	})
}
