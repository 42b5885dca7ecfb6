package session

// The values of rules auth-key, auth-secret and auth-account: for every
// condition of matrix.CredentialConditions, a value of a header that is not the
// right one but that a loose comparison (a prefix, a case fold, a trim, a
// Unicode normalisation, a lookup across accounts) would take for it.

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/partner-v3/conformance-kit/steps/matrix"
)

// CredentialVariant returns the value to send for cond, given the right
// value and the other account's (empty without one). omit asks for no
// header at all; ok is false when cond cannot be made from right (no
// letter to change the case of, no other account).
func CredentialVariant(cond, right, other string) (value string, omit, ok bool) {
	n := len(right)
	switch cond {
	case matrix.CondMissing:
		return "", true, true
	case matrix.CondEmpty:
		return "", false, true
	case matrix.CondOtherAccount:
		return other, false, other != "" && other != right
	}
	if n == 0 {
		return "", false, false
	}
	var v string
	switch cond {
	case matrix.CondOtherValue:
		v = "wrong-" + RandomHex(max(4, n/2))
	case matrix.CondFirstChar:
		v = changeByte(right, 0)
	case matrix.CondMiddleChar:
		v = changeByte(right, n/2)
	case matrix.CondLastChar:
		v = changeByte(right, n-1)
	case matrix.CondCase:
		v = strings.Map(func(r rune) rune {
			if unicode.IsUpper(r) {
				return unicode.ToLower(r)
			}
			return unicode.ToUpper(r)
		}, right)
	case matrix.CondInnerSpace:
		v = right[:n/2] + " " + right[n/2:]
	case matrix.CondNBSPSuffix:
		v = right + "\u00a0"
	case matrix.CondLatin1NBSP:
		// The single byte 0xA0: a no-break space to a server that reads
		// header bytes as Latin-1 (as Node.js and Python's ASGI servers do).
		v = right + "\xa0"
	case matrix.CondIdeographicLead:
		v = "\u3000" + right
	case matrix.CondPrefix:
		v = "X" + right
	case matrix.CondSuffix:
		v = right + "X"
	case matrix.CondTruncated:
		_, size := utf8.DecodeLastRuneInString(right)
		v = right[:n-size]
	case matrix.CondHalf:
		v = right[:n/2]
	case matrix.CondFullwidth:
		v = replaceFirst(right, func(r rune) (rune, bool) {
			if r > ' ' && r < 0x7f && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
				return r + 0xFEE0, true
			}
			return r, false
		})
	case matrix.CondCyrillic:
		v = replaceFirst(right, func(r rune) (rune, bool) {
			c, ok := matrix.CyrillicLookalikes[r]
			return c, ok
		})
	}
	return v, false, v != "" && v != right
}

// changeByte changes the character at i (by byte) into another of its
// kind: a letter stays a letter, a digit a digit.
func changeByte(s string, i int) string {
	b := []byte(s)
	switch c := b[i]; {
	case c == 'z' || c == 'Z' || c == '9':
		b[i]--
	case c >= 0x21 && c < 0x7e:
		b[i]++
	default:
		b[i] = 'x'
	}
	return string(b)
}

// replaceFirst replaces the first rune f maps.
func replaceFirst(s string, f func(rune) (rune, bool)) string {
	for i, r := range s {
		if to, ok := f(r); ok {
			return s[:i] + string(to) + s[i+utf8.RuneLen(r):]
		}
	}
	return s
}
