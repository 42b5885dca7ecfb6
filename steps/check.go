package steps

import (
	"fmt"
	"mime"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cucumber/godog"

	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// fieldRow is one row of a "field | type | format" table.
type fieldRow struct{ field, typ, format string }

func tableRows(t *godog.Table) ([]fieldRow, error) {
	if t == nil || len(t.Rows) < 2 {
		return nil, fmt.Errorf("the step needs a table with a header row and a row per field")
	}
	var rows []fieldRow
	for _, r := range t.Rows[1:] {
		var fr fieldRow
		for i, c := range r.Cells {
			switch strings.TrimSpace(t.Rows[0].Cells[i].Value) {
			case "field":
				fr.field = c.Value
			case "type":
				fr.typ = c.Value
			case "format":
				fr.format = c.Value
			}
		}
		rows = append(rows, fr)
	}
	return rows, nil
}

// checkObject checks obj against the table: every field there, of its type
// and format (problems, each a FAILURE), and names the fields the table
// does not list (extra: a WARNING where the spec lists fields without
// forbidding others).
func checkObject(obj map[string]any, rows []fieldRow) (problems, extra []string) {
	want := make(map[string]bool)
	for _, r := range rows {
		want[r.field] = true
		v, ok := obj[r.field]
		if !ok {
			problems = append(problems, fmt.Sprintf("field %q is missing", r.field))
			continue
		}
		if p := checkType(v, r.typ); p != "" {
			problems = append(problems, fmt.Sprintf("field %q: %s", r.field, p))
			continue
		}
		if p := checkFormat(v, r.format); p != "" {
			problems = append(problems, fmt.Sprintf("field %q: %s", r.field, p))
		}
	}
	for k := range obj {
		if !want[k] {
			extra = append(extra, k)
		}
	}
	slices.Sort(extra)
	return problems, extra
}

// quoted renders names as "a", "b".
func quoted(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

func checkType(v any, typ string) string {
	got := kindOf(v)
	switch typ {
	case "null or string":
		if got == "null" || got == "string" {
			return ""
		}
	case got:
		return ""
	}
	return fmt.Sprintf("is %s, want %s", got, typ)
}

var (
	// §2.2 "ISO 8601 UTC with milliseconds": Z, or the zero offset +00:00
	// that is UTC too (Python's isoformat writes it; timestamps.go warns).
	timestampRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}(?:Z|\+00:00)$`)
	offsetRE    = regexp.MustCompile(`^[+-]\d{2}:[0-5]\d$`)
	colourRE    = regexp.MustCompile(`^#(?:[0-9A-Fa-f]{3}|[0-9A-Fa-f]{4}|[0-9A-Fa-f]{6}|[0-9A-Fa-f]{8})$`)
)

// checkFormat checks the "format" column: the spec §2 formats.
func checkFormat(v any, format string) string {
	switch format {
	case "":
		return ""
	case "timestamp":
		s, _ := v.(string)
		if !timestampRE.MatchString(s) {
			return fmt.Sprintf("%q is not an ISO 8601 UTC timestamp with milliseconds (YYYY-MM-DDTHH:MM:SS.mmmZ)", s)
		}
		if _, err := time.Parse(utcLayout, s); err != nil {
			return fmt.Sprintf("%q is not a real date and time", s)
		}
	case "utc offset":
		s, _ := v.(string)
		if !offsetRE.MatchString(s) {
			return fmt.Sprintf("%q is not a UTC offset of the form +HH:MM or -HH:MM", s)
		}
	case "hex colour":
		s, _ := v.(string)
		if !colourRE.MatchString(s) {
			return fmt.Sprintf("%q is not a hexadecimal colour with a leading #", s)
		}
	case "0 or 1":
		if i, _ := intOf(v); i != 0 && i != 1 {
			return fmt.Sprintf("%v is neither 0 nor 1", v)
		}
	case "email or sms":
		if s, _ := v.(string); s != "email" && s != "sms" {
			return fmt.Sprintf("%q is neither email nor sms", s)
		}
	case "count":
		if i, _ := intOf(v); i < 0 {
			return fmt.Sprintf("%v is negative; a count is 0 or more", v)
		}
	default:
		return fmt.Sprintf("unknown format %q in the scenario", format)
	}
	return ""
}

// isJSONType reports whether a media type says JSON: application/json or a
// +json type (RFC 6839).
func isJSONType(mt string) bool {
	return mt == spec.ContentType || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")
}

// inspect looks at every answer for what the spec allows but a vendor should
// know: an unusual JSON media type or parameter (§1 rule 3), headers that
// contradict each other or the run's rate limit (§8). Each is a WARNING.
func (s *scenario) inspect(x *exchange) {
	cts := x.rheader.Values("Content-Type")
	if len(slices.Compact(slices.Clone(cts))) > 1 {
		s.warn([]string{"1"}, x, "the answer carries %d different Content-Type headers (%s): a client may read either", len(cts), quoted(cts))
	}
	if len(cts) > 0 {
		if mt, params, err := mime.ParseMediaType(cts[0]); err == nil && isJSONType(mt) {
			if mt != spec.ContentType {
				s.warn([]string{"1"}, x, "the answer is labelled %s: JSON, but not application/json as clients expect", mt)
			}
			for k, v := range params {
				if k != "charset" || !strings.EqualFold(v, "utf-8") {
					s.warn([]string{"1"}, x, "the answer's media type has the parameter %s=%s: JSON is UTF-8 (RFC 8259) and takes no other parameter", k, v)
				}
			}
		}
	}
	s.warnExtraFields(x)
	s.warnTimestampForms(x)
	limit, window := s.env.Pacer.Limit(), s.env.Pacer.Window()
	if v := x.rheader.Get("X-RateLimit-Limit"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n != limit {
			s.warn([]string{"8"}, x, "X-RateLimit-Limit says %d, but the run checks a limit of %d per %s (spec §8: %d per %s)", n, limit, window, spec.RateLimit, spec.RateWindowName)
		}
	}
	if x.status == 429 {
		if n, err := strconv.Atoi(x.rheader.Get("X-RateLimit-Remaining")); err == nil && n > 0 {
			s.warn([]string{"8"}, x, "a 429 says X-RateLimit-Remaining: %d: the refusal and the header contradict each other", n)
		}
		if n, err := strconv.Atoi(x.rheader.Get("Retry-After")); err == nil && time.Duration(n)*time.Second > window+time.Second {
			s.warn([]string{"8"}, x, "a 429 says Retry-After: %d, longer than the %s window of spec §8: a client that obeys waits longer than it must", n, window)
		}
	}
}

// mentions reports whether the body carries the message: the spec shows no
// body shape for errors other than 429 (§7), so the suite looks for the text
// in the body, not for a field name.
func mentions(body []byte, msg string) bool {
	if strings.Contains(string(body), msg) {
		return true
	}
	// The text may be JSON-escaped ("\u0027", "\/"): compare decoded strings.
	v, err := decodeJSON(body)
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

// warnExtraFields warns, for every 200 answer of an operation, about the
// fields its body carries that the spec does not list: the spec lists
// fields but never forbids others, so they are a WARNING wherever they
// appear, whichever scenario met them. The messages are those of the
// field-table steps, so one warning is counted, not two.
func (s *scenario) warnExtraFields(x *exchange) {
	if x.err != nil || x.status != 200 || x.method != "POST" {
		return
	}
	m, err := x.object()
	if err != nil {
		return
	}
	op := opOf(x)
	if op == "" {
		return
	}
	sh := answerShapeOf(op)
	s.warnExtra(x, "the body", m, sh.body)
	if sh.innerExtra != nil {
		sh.innerExtra(s, x, m)
	}
}

// warnExtra warns about the fields of obj that rows do not list.
func (s *scenario) warnExtra(x *exchange, what string, obj map[string]any, rows []fieldRow) {
	if _, ext := checkObject(obj, rows); len(ext) > 0 {
		s.warn(nil, x, "%s carries fields the spec does not list: %s", what, quoted(ext))
	}
}
