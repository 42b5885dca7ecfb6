package answer

// The spec's field tables (§2): a field of its type and format, as the
// scenarios' "field | type | format" tables and the answer shapes state
// them.

import (
	"fmt"
	"regexp"
	"slices"
	"time"
)

// FieldRow is one row of a "field | type | format" table: the field's
// name, its JSON type as the spec's tables write it ("integer", "null or
// string") and its §2 format ("timestamp", "count"; "" for none).
type FieldRow struct{ Field, Type, Format string }

// CheckObject checks obj against the table: every field there, of its type
// and format (problems, each a FAILURE), and names the fields the table
// does not list (extra: a WARNING where the spec lists fields without
// forbidding others).
func CheckObject(obj map[string]any, rows []FieldRow) (problems, extra []string) {
	want := make(map[string]bool)
	for _, r := range rows {
		want[r.Field] = true
		if p := FieldProblem(obj, r); p != "" {
			problems = append(problems, p)
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

// FieldProblem checks one field of obj against its row: "" when it holds.
func FieldProblem(obj map[string]any, row FieldRow) string {
	v, ok := obj[row.Field]
	if !ok {
		return fmt.Sprintf("field %q is missing", row.Field)
	}
	if p := checkType(v, row.Type); p != "" {
		return fmt.Sprintf("field %q: %s", row.Field, p)
	}
	if p := CheckFormat(v, row.Format); p != "" {
		return fmt.Sprintf("field %q: %s", row.Field, p)
	}
	return ""
}

func checkType(v any, typ string) string {
	got := KindOf(v)
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

// utcLayout parses a timestamp of §2.2 with Z or a numeric offset; the
// offset is held to +00:00 by timestampRE.
const utcLayout = "2006-01-02T15:04:05.000Z07:00"

var (
	// §2.2 "ISO 8601 UTC with milliseconds": Z, or the zero offset +00:00
	// that is UTC too (Python's isoformat writes it; Warnings warns).
	timestampRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}(?:Z|\+00:00)$`)
	offsetRE    = regexp.MustCompile(`^[+-]\d{2}:[0-5]\d$`)
	colourRE    = regexp.MustCompile(`^#(?:[0-9A-Fa-f]{3}|[0-9A-Fa-f]{4}|[0-9A-Fa-f]{6}|[0-9A-Fa-f]{8})$`)
)

// CheckFormat checks the "format" column: the spec §2 formats; "" when v
// holds.
func CheckFormat(v any, format string) string {
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
		if i, _ := IntOf(v); i != 0 && i != 1 {
			return fmt.Sprintf("%v is neither 0 nor 1", v)
		}
	case "email or sms":
		if s, _ := v.(string); s != "email" && s != "sms" {
			return fmt.Sprintf("%q is neither email nor sms", s)
		}
	case "count":
		if i, _ := IntOf(v); i < 0 {
			return fmt.Sprintf("%v is negative; a count is 0 or more", v)
		}
	default:
		return fmt.Sprintf("unknown format %q in the scenario", format)
	}
	return ""
}
