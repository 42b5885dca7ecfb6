package mask

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"
)

// Value is one secret value of a run and how it is shown once hidden.
type Value struct {
	Text string
	// Secret shows the value as Secret (its length only); otherwise as
	// Credential (its first four characters and its length).
	Secret bool
}

// Secrets knows one run's secret values (the credentials of spec §5 of
// both accounts, the control API's token) and hides them in any text the
// suite shows: bodies, headers, URLs, failure messages. A nil *Secrets hides
// nothing in text; its Header still masks the credential headers by name.
//
// What it hides, and why:
//
//   - Every occurrence of a value, compared without regard to ASCII case (a
//     target may echo it upper-cased), in any of the forms a body or a URL
//     writes it in: as it is, JSON-escaped (`\"`, `\\`, `\/`, `\u003c`,
//     `\u00e9`...) and percent-encoded. It becomes the value's masked form
//     (Credential or Secret), so a reader still sees which credential it
//     was. Overlapping matches (a value that is part of another) become one,
//     shown as the longest of them.
//   - Every run of at least nearRun(len) characters that the value also
//     holds. The suite sends wrong credentials derived from the right ones
//     on purpose (§5: the right key with its last character changed), and a
//     target that echoes one, truncates one or quotes a part of one would
//     otherwise show most of the real value. Matching runs rather than the
//     values the suite derived catches what the target derives too. Such a
//     run shows only its length, `****(21 chars)`, and the characters
//     around it stay: `****(21 chars)X` says which character differed.
//   - Values shorter than minLen are not searched for in text: they
//     would blank out ordinary words and numbers (a one-character secret,
//     every "a"), and hide next to nothing. Their headers still mask them.
type Secrets struct {
	forms []form     // every written form of every value, longest first
	near  []nearForm // the runs of the values long enough for them
}

// form is one way a value is written, lower-cased, and what replaces it.
type form struct {
	text, show string
}

// nearForm holds every run of k characters of the values whose runs are
// that long (of each of their written forms), lower-cased.
type nearForm struct {
	k    int
	runs map[string]bool
}

// minLen is the length below which a value is not looked for in text.
const minLen = 6

// minRun is the shortest run of a value that counts as a part of it.
const minRun = 8

// nearRun is how long a run of a value of n characters must be to be
// hidden: a third of it, at least minRun. What stays visible of a
// value's derivative is then less than a third of it.
func nearRun(n int) int { return max(minRun, n/3) }

// NewSecrets returns what hides the given values; empty and duplicate
// values are ignored (a value given both as a credential and as a secret is
// shown as a secret).
func NewSecrets(values ...Value) *Secrets {
	secret := map[string]bool{}
	var texts []string
	for _, v := range values {
		if v.Text == "" {
			continue
		}
		if _, seen := secret[v.Text]; !seen {
			texts = append(texts, v.Text)
		}
		secret[v.Text] = secret[v.Text] || v.Secret
	}
	s := &Secrets{}
	for _, v := range texts {
		if len(v) < minLen {
			continue
		}
		show := Credential(v)
		if secret[v] {
			show = Secret(v)
		}
		written := writtenForms(v)
		for _, w := range written {
			s.forms = append(s.forms, form{text: lower(w), show: show})
		}
		if k := nearRun(len(v)); k < len(v) {
			// One set per run length: one pass over a text for all the
			// values of that length.
			i := slices.IndexFunc(s.near, func(n nearForm) bool { return n.k == k })
			if i < 0 {
				i = len(s.near)
				s.near = append(s.near, nearForm{k: k, runs: map[string]bool{}})
			}
			for _, w := range written {
				w = lower(w)
				for j := 0; j+k <= len(w); j++ {
					s.near[i].runs[w[j:j+k]] = true
				}
			}
		}
	}
	// Longest first (then by text, for Compact): where two forms start at
	// the same place, the longer one is the match.
	slices.SortStableFunc(s.forms, func(a, b form) int {
		if len(a.text) != len(b.text) {
			return len(b.text) - len(a.text)
		}
		return strings.Compare(a.text, b.text)
	})
	s.forms = slices.CompactFunc(s.forms, func(a, b form) bool { return a.text == b.text })
	return s
}

// writtenForms are the ways a body or a URL may write v: as it is,
// JSON-escaped with and without `\/`, `\u003c` for <, > and &, and
// `\uXXXX` for non-ASCII (Go, PHP, JavaScript and Python encoders differ
// in exactly these), and percent-encoded.
func writtenForms(v string) []string {
	out := []string{v}
	for _, slash := range []bool{false, true} {
		for _, html := range []bool{false, true} {
			for _, ascii := range []bool{false, true} {
				out = append(out, jsonEscape(v, slash, html, ascii))
			}
		}
	}
	out = append(out, url.QueryEscape(v), url.PathEscape(v))
	slices.Sort(out)
	return slices.Compact(out)
}

// jsonEscape writes v as the inside of a JSON string.
func jsonEscape(v string, slash, html, ascii bool) string {
	var b strings.Builder
	for i := 0; i < len(v); {
		r, size := utf8.DecodeRuneInString(v[i:])
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteByte(v[i-1]) // not UTF-8: no encoder writes it back
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '/' && slash:
			b.WriteString(`\/`)
		case (r == '<' || r == '>' || r == '&') && html:
			fmt.Fprintf(&b, `\u%04x`, r)
		case r < 0x20 || r == 0x2028 || r == 0x2029:
			fmt.Fprintf(&b, `\u%04x`, r)
		case r >= 0x80 && ascii:
			if r > 0xFFFF {
				r -= 0x10000
				fmt.Fprintf(&b, `\u%04x\u%04x`, 0xD800+(r>>10), 0xDC00+(r&0x3FF))
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// lower lower-cases ASCII letters only, so that every byte keeps its
// offset (strings.ToLower may change the length of non-ASCII text).
func lower(s string) string {
	i := strings.IndexFunc(s, func(r rune) bool { return 'A' <= r && r <= 'Z' })
	if i < 0 {
		return s
	}
	b := []byte(s)
	for ; i < len(b); i++ {
		if 'A' <= b[i] && b[i] <= 'Z' {
			b[i] += 'a' - 'A'
		}
	}
	return string(b)
}

// span is a stretch of text to replace.
type span struct {
	start, end int
	show       string
}

// String returns text with every secret value hidden.
func (s *Secrets) String(text string) string {
	if s == nil || len(text) < minLen {
		return text
	}
	low := lower(text)
	// Whole values, in any of their forms.
	var exact []span
	for _, f := range s.forms {
		for i := 0; ; {
			j := strings.Index(low[i:], f.text)
			if j < 0 {
				break
			}
			exact = append(exact, span{i + j, i + j + len(f.text), f.show})
			i += j + 1
		}
	}
	// Overlapping matches are one, shown as the longest.
	slices.SortStableFunc(exact, func(a, b span) int {
		if a.start != b.start {
			return a.start - b.start
		}
		return b.end - a.end
	})
	var merged []span
	longest := 0 // of the last merged span's matches
	for _, sp := range exact {
		n := len(merged)
		if n == 0 || sp.start >= merged[n-1].end {
			merged, longest = append(merged, sp), sp.end-sp.start
			continue
		}
		last := &merged[n-1]
		last.end = max(last.end, sp.end)
		if sp.end-sp.start > longest {
			last.show, longest = sp.show, sp.end-sp.start
		}
	}
	// Parts of values.
	var partial []bool
	for _, n := range s.near {
		for i := 0; i+n.k <= len(low); i++ {
			if n.runs[low[i:i+n.k]] {
				if partial == nil {
					partial = make([]bool, len(low))
				}
				for j := i; j < i+n.k; j++ {
					partial[j] = true
				}
			}
		}
	}
	if len(merged) == 0 && partial == nil {
		return text
	}
	if partial != nil {
		wholeRunes(text, partial)
	}
	var b strings.Builder
	b.Grow(len(text))
	next := 0 // index into merged
	for i := 0; i < len(text); {
		if next < len(merged) && merged[next].start == i {
			b.WriteString(merged[next].show)
			i = merged[next].end
			next++
			continue
		}
		stop := len(text)
		if next < len(merged) {
			stop = merged[next].start
		}
		if partial != nil && partial[i] {
			j := i
			for j < stop && partial[j] {
				j++
			}
			b.WriteString(Secret(text[i:j]))
			i = j
			continue
		}
		j := i
		for j < stop && (partial == nil || !partial[j]) {
			j++
		}
		b.WriteString(text[i:j])
		i = j
	}
	return b.String()
}

// wholeRunes widens the runs marked in partial to whole UTF-8 characters:
// runs are found byte by byte, and a value may hold non-ASCII characters.
func wholeRunes(text string, partial []bool) {
	cont := func(i int) bool { return !utf8.RuneStart(text[i]) }
	for i := 1; i < len(text); i++ {
		switch {
		case partial[i] && !partial[i-1] && cont(i):
			for k := i - 1; k >= 0 && !partial[k]; k-- {
				partial[k] = true
				if !cont(k) {
					break
				}
			}
		case !partial[i] && partial[i-1] && cont(i):
			for ; i < len(text) && cont(i); i++ {
				partial[i] = true
			}
		}
	}
}

// Bytes returns b with every secret value hidden: b itself when there is
// none in it.
func (s *Secrets) Bytes(b []byte) []byte {
	if s == nil || len(b) == 0 {
		return b
	}
	in := string(b)
	if out := s.String(in); out != in {
		return []byte(out)
	}
	return b
}

// Header returns a copy of h to show: the credential headers masked by
// name (HeaderValue), and every secret value hidden in the other names and
// values, such as a response header in which a target echoes one.
func (s *Secrets) Header(h http.Header) http.Header {
	if h == nil {
		return nil
	}
	out := make(http.Header, len(h))
	for k, vs := range h {
		name := s.String(k)
		for _, v := range vs {
			out[name] = append(out[name], s.String(HeaderValue(k, v)))
		}
	}
	return out
}
