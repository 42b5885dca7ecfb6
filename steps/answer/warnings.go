package answer

// What the spec allows but a vendor should know, seen in an answer: each
// is a WARNING, never a failure.
//
// §2.2 writes every timestamp as "ISO 8601 UTC with milliseconds". A time
// in UTC is written with Z or with the zero offset +00:00 (Python's
// datetime.isoformat writes the latter): both are UTC, so both pass
// (CheckFormat). Z is what clients most often parse, so +00:00 is a
// WARNING. Another offset (local time) or none is not UTC: a FAILURE.

import (
	"fmt"
	"mime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// Warnings are what an answer shows that the spec allows but a vendor
// should know, in the order a scenario records them: an unusual JSON
// media type or parameter (§1 rule 3), fields the spec does not list
// (ExtraFields), timestamps written with +00:00 rather than Z (§2.2),
// headers that contradict each other or the run's rate limit of limit
// requests per window (§8).
func Warnings(a *Answer, limit int, window time.Duration) []Warning {
	var ws []Warning
	warn := func(sections []string, format string, args ...any) {
		ws = append(ws, Warning{Sections: sections, Message: fmt.Sprintf(format, args...)})
	}
	cts := a.ResponseHeader.Values("Content-Type")
	if len(slices.Compact(slices.Clone(cts))) > 1 {
		warn([]string{"1"}, "the answer carries %d different Content-Type headers (%s): a client may read either", len(cts), Quoted(cts))
	}
	if len(cts) > 0 {
		if mt, params, err := mime.ParseMediaType(cts[0]); err == nil && IsJSONType(mt) {
			if mt != spec.ContentType {
				warn([]string{"1"}, "the answer is labelled %s: JSON, but not application/json as clients expect", mt)
			}
			for k, v := range params {
				if k != "charset" || !strings.EqualFold(v, "utf-8") {
					warn([]string{"1"}, "the answer's media type has the parameter %s=%s: JSON is UTF-8 (RFC 8259) and takes no other parameter", k, v)
				}
			}
		}
	}
	ws = append(ws, ExtraFields(a)...)
	ws = append(ws, timestampForms(a)...)
	if v := a.ResponseHeader.Get("X-RateLimit-Limit"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n != limit {
			warn([]string{"8"}, "X-RateLimit-Limit says %d, but the run checks a limit of %d per %s (spec §8: %d per %s)", n, limit, window, spec.RateLimit, spec.RateWindowName)
		}
	}
	if a.Status == 429 {
		if n, err := strconv.Atoi(a.ResponseHeader.Get("X-RateLimit-Remaining")); err == nil && n > 0 {
			warn([]string{"8"}, "a 429 says X-RateLimit-Remaining: %d: the refusal and the header contradict each other", n)
		}
		if n, err := strconv.Atoi(a.ResponseHeader.Get("Retry-After")); err == nil && time.Duration(n)*time.Second > window+time.Second {
			warn([]string{"8"}, "a 429 says Retry-After: %d, longer than the %s window of spec §8: a client that obeys waits longer than it must", n, window)
		}
	}
	return ws
}

// timestampFields are the fields of §2.2 whose format is "timestamp".
var timestampFields = func() []string {
	var out []string
	for _, r := range CampaignShape {
		if r.Format == "timestamp" {
			out = append(out, r.Field)
		}
	}
	return out
}()

// timestampForms warns (once per set of fields) about the campaign
// timestamps of a Campaign List 200 written with +00:00 rather than Z.
func timestampForms(a *Answer) []Warning {
	if a.Err != nil || a.Status != 200 || a.Operation() != spec.OpCampaignList {
		return nil
	}
	m, err := a.Object()
	if err != nil {
		return nil
	}
	var fields []string
	for _, c := range AsArray(m["campaigns"]) {
		o, _ := c.(map[string]any)
		for _, f := range timestampFields {
			if v, _ := o[f].(string); strings.HasSuffix(v, "+00:00") && !slices.Contains(fields, f) {
				fields = append(fields, f)
			}
		}
	}
	if len(fields) == 0 {
		return nil
	}
	return []Warning{{Sections: []string{"2.2"}, Message: fmt.Sprintf("campaigns write %s with the zero offset +00:00: UTC, as §2.2 asks, but Z is the form clients most often expect", Quoted(fields))}}
}
