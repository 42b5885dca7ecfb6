package violation_test

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/partner-v3/conformance-kit/simulator/spec"
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
		"campaign-id-lowercase":         {run: field(nil, func(c map[string]any) { c["id"] = c["Id"]; delete(c, "Id") })},
		"campaign-id-string":            {run: field(nil, func(c map[string]any) { c["Id"] = c["Id"].(json.Number).String() })},
		"campaign-id-float-sms":         {run: field(sms, func(c map[string]any) { c["Id"] = json.Number(c["Id"].(json.Number).String() + ".0") })},
		"campaign-name-missing-deleted": {run: field(isDeleted, func(c map[string]any) { delete(c, "campaignName") })},
		"campaign-name-null-sms":        {run: field(sms, func(c map[string]any) { c["campaignName"] = nil })},
		"campaign-type-string": {run: field(nil, func(c map[string]any) {
			c["campaignType"] = map[json.Number]string{"0": "static", "1": "dynamic"}[c["campaignType"].(json.Number)]
		})},
		"campaign-type-range-last-page":  {run: onLastPage(func(c map[string]any) { c["campaignType"] = json.Number("2") })},
		"campaign-channel-case":          {run: field(nil, func(c map[string]any) { c["campaignChannel"] = strings.ToUpper(str(c, "campaignChannel")) })},
		"campaign-channel-missing-email": {run: field(email, func(c map[string]any) { delete(c, "campaignChannel") })},
		"campaign-status-number-deleted": {run: field(isDeleted, func(c map[string]any) { c["status"] = json.Number("0") })},
		"campaign-status-null-last-page": {run: onLastPage(func(c map[string]any) { c["status"] = nil })},
		"campaign-color-no-hash":         {run: field(nil, func(c map[string]any) { c["statusColor"] = str(c, "statusColor")[1:] })},
		"campaign-color-name-sms":        {run: field(sms, func(c map[string]any) { c["statusColor"] = "green" })},
		"campaign-active-bool":           {run: field(nil, func(c map[string]any) { c["active"] = c["active"] == json.Number("1") })},
		"campaign-active-range":          {run: field(isDeleted, func(c map[string]any) { c["active"] = json.Number("-1") })},
		"campaign-no-millis": {run: field(nil, func(c map[string]any) {
			for _, k := range []string{"scheduledOn", "broadcastOn", "createdAt", "updatedAt"} {
				c[k] = str(c, k)[:19] + "Z"
			}
		})},
		"campaign-scheduled-offset": {run: field(sms, func(c map[string]any) {
			c["scheduledOn"] = strings.TrimSuffix(str(c, "scheduledOn"), "Z") + "+01:00"
		})},
		"campaign-broadcast-on-epoch": {run: onLastPage(func(c map[string]any) {
			t, _ := time.Parse(spec.TimestampLayout, str(c, "broadcastOn"))
			c["broadcastOn"] = num(t.UnixMilli())
		})},
		"campaign-created-date-only":     {run: field(isDeleted, func(c map[string]any) { c["createdAt"] = str(c, "createdAt")[:10] })},
		"campaign-updated-null-email":    {run: field(email, func(c map[string]any) { c["updatedAt"] = nil })},
		"campaign-timezone-missing-last": {run: onLastPage(func(c map[string]any) { delete(c, "scheduledTimeZone") })},
		"campaign-timezone-number": {run: field(sms, func(c map[string]any) {
			off := str(c, "offset")
			mins := (int64(off[1]-'0')*10+int64(off[2]-'0'))*60 + int64(off[4]-'0')*10 + int64(off[5]-'0')
			if off[0] == '-' {
				mins = -mins
			}
			c["scheduledTimeZone"] = num(mins)
		})},
		"campaign-offset-format":          {run: field(nil, func(c map[string]any) { c["offset"] = strings.Replace(str(c, "offset"), ":", "", 1) })},
		"campaign-offset-no-sign":         {run: field(email, func(c map[string]any) { c["offset"] = str(c, "offset")[1:] })},
		"campaign-autoresend-bool":        {run: field(nil, func(c map[string]any) { c["autoResend"] = c["autoResend"] == json.Number("1") })},
		"campaign-autoresend-missing-sms": {run: field(sms, func(c map[string]any) { delete(c, "autoResend") })},
		"campaign-broadcast-string":       {run: field(isDeleted, func(c map[string]any) { c["broadcast"] = c["broadcast"].(json.Number).String() })},
		"campaign-broadcast-null-last":    {run: onLastPage(func(c map[string]any) { c["broadcast"] = nil })},
		"campaign-reason-absent":          {run: field(func(c map[string]any) bool { return c["reason"] == nil }, func(c map[string]any) { delete(c, "reason") })},
		"campaign-reason-number": {run: field(func(c map[string]any) bool { return email(c) && c["reason"] == nil }, func(c map[string]any) {
			c["reason"] = json.Number("0")
		})},
	})
}
