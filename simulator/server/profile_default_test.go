package server_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/simulator/sim"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// outcomeOf reads an answer as a profile.Outcome: the status, a refusal's
// {"error"} message, a Campaign List 200's pageSize and pageNo.
func outcomeOf(tb testing.TB, a probeAnswer, path string) profile.Outcome {
	tb.Helper()
	o := profile.Outcome{Status: a.status}
	m := a.object(tb)
	if a.status != http.StatusOK {
		o.Message, _ = m["error"].(string)
		return o
	}
	if path == spec.PathCampaignList {
		o.PageSize, o.PageNo = int(m["pageSize"].(float64)), int(m["pageNo"].(float64))
	}
	return o
}

// defaultProbes are the probes of the default profile's Outcome choices, as
// the runner's prober sends them (steps/learn), each with the choice it
// shows.
func defaultProbes(h *harness, d *profile.Profile, campaignID int64) []struct {
	name string
	p    probe
	want profile.Outcome
} {
	a := h.alpha
	type row = struct {
		name string
		p    probe
		want profile.Outcome
	}
	named := func(o profile.Outcome, field string) profile.Outcome {
		o.Message = strings.ReplaceAll(o.Message, "{field}", field)
		return o
	}
	rows := []row{
		{"auth.missingAccount", probe{path: spec.PathContactAdd, body: `{"email":"p@example.com"}`, as: a, header: map[string]string{spec.HeaderAccountID: ""}}, d.Auth.MissingAccount.Value},
		{"campaignList.limitAboveMax", probe{path: spec.PathCampaignList, body: `{"limit":80,"page":1}`, as: a}, d.List.LimitAboveMax.Value},
		{"campaignList.limitBelowOne", probe{path: spec.PathCampaignList, body: `{"limit":0,"page":1}`, as: a}, d.List.LimitBelowOne.Value},
		{"campaignList.pageBelowOne", probe{path: spec.PathCampaignList, body: `{"limit":10,"page":0}`, as: a}, d.List.PageBelowOne.Value},
		{"campaignList.limitMissing", probe{path: spec.PathCampaignList, body: `{"page":1}`, as: a}, d.List.LimitMissing.Value},
		{"campaignList.pageMissing", probe{path: spec.PathCampaignList, body: `{"limit":10}`, as: a}, d.List.PageMissing.Value},
		{"campaignList.wrongType", probe{path: spec.PathCampaignList, body: `{"limit":"5","page":1}`, as: a}, d.List.WrongType.Value},
		{"campaignList.extraField", probe{path: spec.PathCampaignList, body: `{"limit":10,"page":1,"` + profile.ProbeExtraField + `":"x"}`, as: a}, named(d.List.ExtraField.Value, profile.ProbeExtraField)},
		{"campaignList.pastLast", probe{path: spec.PathCampaignList, body: `{"limit":10,"page":1000}`, as: a}, d.List.PastLast.Value.Outcome},
		{"campaignStats.unknown", probe{path: spec.PathCampaignStats, body: `{"campaignId":987654321}`, as: a}, d.Stats.Unknown.Value},
		{"campaignStats.numericString", probe{path: spec.PathCampaignStats, body: fmt.Sprintf(`{"campaignId":"%d"}`, campaignID), as: a}, d.Stats.NumericString.Value},
		{"campaignStats.extraField", probe{path: spec.PathCampaignStats, body: fmt.Sprintf(`{"campaignId":%d,"%s":"x"}`, campaignID, profile.ProbeExtraField), as: a}, named(d.Stats.ExtraField.Value, profile.ProbeExtraField)},
		{"http.unknownPath", probe{path: profile.ProbeUnknownPath, body: `{}`, as: a}, d.HTTP.UnknownPath.Value},
		{"http.otherMethod", probe{method: profile.ProbeOtherMethod, path: profile.ProbeOtherMethodPath, as: a}, d.HTTP.OtherMethod.Value.Outcome},
		{"http.requestContentType", probe{path: spec.PathContactAdd, body: `{"email":"p@example.com"}`, as: a, header: map[string]string{"Content-Type": "text/plain"}}, d.HTTP.RequestContentType.Value},
		{"http.bodyLimit", probe{path: spec.PathContactAdd, body: `{"email":"p@example.com","firstName":"` + strings.Repeat("a", 256<<10) + `"}`, as: a}, *d.HTTP.BodyLimit.Value.Refusal},
	}
	for _, vc := range profile.ValidationCases() {
		body := `{"email":"probe@example.com","` + vc.Field + `":` + vc.Value + `}`
		if vc.Field == "email" {
			body = `{"phoneNo":"+14155550100","email":` + vc.Value + `}`
		}
		want := d.Contact.Validation.Value[vc.Class]
		want.Message = strings.ReplaceAll(want.Message, "{field}", vc.Field)
		rows = append(rows, row{"contact.validation." + vc.Class, probe{path: spec.PathContactAdd, body: body, as: a}, want})
	}
	return rows
}

// TestDefaultProfile_IsToday holds default.json to what the simulator
// answers under it (issue 20): each Outcome choice's probe gets the
// default's status and message, exactly.
func TestDefaultProfile_IsToday(t *testing.T) {
	h := MustOpenServer(t, sim.Config{})
	d := profile.Default()
	for _, tt := range defaultProbes(h, d, h.firstCampaignID(h.alpha)) {
		t.Run(tt.name, func(t *testing.T) {
			got := outcomeOf(t, h.probe(tt.p), tt.p.path)
			if tt.want.PageSize == 0 {
				got.PageSize = 0
			}
			if tt.want.PageNo == 0 {
				got.PageNo = 0
			}
			if got != tt.want {
				t.Errorf("answer %+v, default.json says %+v", got, tt.want)
			}
		})
	}
	// The statuses the learner meets; the others take the 400's shape.
	t.Run("every error status the learner meets has its body in errors.bodies", func(t *testing.T) {
		for _, status := range []int{400, 401, 403, 404, 405, 413, 415} {
			if _, ok := d.Errors.Bodies.Value[strconv.Itoa(status)]; !ok {
				t.Errorf("errors.bodies has no %d", status)
			}
		}
	})
}
