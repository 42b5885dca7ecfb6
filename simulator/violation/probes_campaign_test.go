package violation_test

import (
	"encoding/json"
	"strings"

	"github.com/partner-v3/conformance-kit/simulator/violation"
)

// field edits one field of the campaigns of page 1 (limit 50) that in
// selects (nil: all of them).
func field(in func(c map[string]any) bool, edit func(c map[string]any)) func(p *pair) {
	return func(p *pair) { p.expect(list(50, 1), campaigns(p.t, in, edit)) }
}

// onLastPage edits every campaign of the last page, and leaves the page
// before it alone.
func onLastPage(edit func(c map[string]any)) func(p *pair) {
	return func(p *pair) {
		p.expect(list(50, lastPage), campaigns(p.t, nil, edit))
		p.same(list(50, 2))
	}
}

func str(c map[string]any, k string) string { return c[k].(string) }

// Spec §2.2 and §3: the campaign record of Campaign List.
func init() {
	register(map[violation.Name]probe{
		"campaign-id-lowercase":  {run: field(nil, func(c map[string]any) { c["id"] = c["Id"]; delete(c, "Id") })},
		"campaign-id-string":     {run: field(nil, func(c map[string]any) { c["Id"] = c["Id"].(json.Number).String() })},
		"campaign-channel-case":  {run: field(nil, func(c map[string]any) { c["campaignChannel"] = strings.ToUpper(str(c, "campaignChannel")) })},
		"campaign-color-no-hash": {run: field(nil, func(c map[string]any) { c["statusColor"] = str(c, "statusColor")[1:] })},
		"campaign-active-bool":   {run: field(nil, func(c map[string]any) { c["active"] = c["active"] == json.Number("1") })},
		"campaign-no-millis": {run: field(nil, func(c map[string]any) {
			for _, k := range []string{"scheduledOn", "broadcastOn", "createdAt", "updatedAt"} {
				c[k] = str(c, k)[:19] + "Z"
			}
		})},
		"campaign-offset-format": {run: field(nil, func(c map[string]any) { c["offset"] = strings.Replace(str(c, "offset"), ":", "", 1) })},
		"campaign-reason-absent": {run: field(func(c map[string]any) bool { return c["reason"] == nil }, func(c map[string]any) { delete(c, "reason") })},
	})
}
