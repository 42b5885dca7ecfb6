package steps

// §2.2 writes every timestamp as "ISO 8601 UTC with milliseconds". A time
// in UTC is written with Z or with the zero offset +00:00 (Python's
// datetime.isoformat writes the latter): both are UTC, so both pass
// (checkFormat). Z is what clients most often parse, so +00:00 is a
// WARNING. Another offset (local time) or none is not UTC: a FAILURE.

import (
	"slices"
	"strings"

	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// utcLayout parses a timestamp of §2.2 with Z or a numeric offset; the
// offset is held to +00:00 by timestampRE.
const utcLayout = "2006-01-02T15:04:05.000Z07:00"

// timestampFields are the fields of §2.2 whose format is "timestamp".
var timestampFields = func() []string {
	var out []string
	for _, r := range campaignShape {
		if r.format == "timestamp" {
			out = append(out, r.field)
		}
	}
	return out
}()

// warnTimestampForms warns (once per scenario and set of fields) about the campaign
// timestamps of a Campaign List 200 written with +00:00 rather than Z.
func (s *scenario) warnTimestampForms(x *exchange) {
	if x.err != nil || x.status != 200 || opOf(x) != spec.OpCampaignList {
		return
	}
	m, err := x.object()
	if err != nil {
		return
	}
	var fields []string
	for _, c := range asArray(m["campaigns"]) {
		o, _ := c.(map[string]any)
		for _, f := range timestampFields {
			if v, _ := o[f].(string); strings.HasSuffix(v, "+00:00") && !slices.Contains(fields, f) {
				fields = append(fields, f)
			}
		}
	}
	if len(fields) > 0 {
		s.warn([]string{"2.2"}, x, "campaigns write %s with the zero offset +00:00: UTC, as §2.2 asks, but Z is the form clients most often expect", quoted(fields))
	}
}
