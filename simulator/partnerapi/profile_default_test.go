package partnerapi_test

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
	// named is o's message as its probe meets it (profile.ProbeRequest).
	named := func(o profile.Outcome, choice string) profile.Outcome {
		req := profile.ProbeRequest(choice)
		req.Limit = int64(d.HTTP.BodyLimit.Value.Accepted)
		o.Message = profile.Render(o.Message, req)
		return o
	}
	rows := []row{
		{"auth.missingAccount", probe{path: spec.PathContactAdd, body: `{"email":"p@example.com"}`, as: a, header: map[string]string{spec.HeaderAccountID: ""}}, named(d.Auth.MissingAccount.Value, "auth.missingAccount")},
		{"campaignList.limitAboveMax", probe{path: spec.PathCampaignList, body: `{"limit":80,"page":1}`, as: a}, named(d.List.LimitAboveMax.Value, "campaignList.limitAboveMax")},
		{"campaignList.limitBelowOne", probe{path: spec.PathCampaignList, body: `{"limit":0,"page":1}`, as: a}, named(d.List.LimitBelowOne.Value, "campaignList.limitBelowOne")},
		{"campaignList.pageBelowOne", probe{path: spec.PathCampaignList, body: `{"limit":10,"page":0}`, as: a}, named(d.List.PageBelowOne.Value, "campaignList.pageBelowOne")},
		{"campaignList.limitMissing", probe{path: spec.PathCampaignList, body: `{"page":1}`, as: a}, named(d.List.LimitMissing.Value, "campaignList.limitMissing")},
		{"campaignList.pageMissing", probe{path: spec.PathCampaignList, body: `{"limit":10}`, as: a}, named(d.List.PageMissing.Value, "campaignList.pageMissing")},
		{"campaignList.wrongType", probe{path: spec.PathCampaignList, body: `{"limit":"5","page":1}`, as: a}, named(d.List.WrongType.Value, "campaignList.wrongType")},
		{"campaignList.extraField", probe{path: spec.PathCampaignList, body: `{"limit":10,"page":1,"` + profile.ProbeExtraField + `":"x"}`, as: a}, named(d.List.ExtraField.Value, "campaignList.extraField")},
		{"campaignList.pastLast", probe{path: spec.PathCampaignList, body: `{"limit":10,"page":1000}`, as: a}, named(d.List.PastLast.Value.Outcome, "campaignList.pastLast")},
		{"campaignStats.unknown", probe{path: spec.PathCampaignStats, body: `{"campaignId":987654321}`, as: a}, named(d.Stats.Unknown.Value, "campaignStats.unknown")},
		{"campaignStats.numericString", probe{path: spec.PathCampaignStats, body: fmt.Sprintf(`{"campaignId":"%d"}`, campaignID), as: a}, named(d.Stats.NumericString.Value, "campaignStats.numericString")},
		{"campaignStats.extraField", probe{path: spec.PathCampaignStats, body: fmt.Sprintf(`{"campaignId":%d,"%s":"x"}`, campaignID, profile.ProbeExtraField), as: a}, named(d.Stats.ExtraField.Value, "campaignStats.extraField")},
		{"http.unknownPath", probe{path: profile.ProbeUnknownPath, body: `{}`, as: a}, named(d.HTTP.UnknownPath.Value, "http.unknownPath")},
		{"http.otherMethod", probe{method: profile.ProbeOtherMethod, path: profile.ProbeOtherMethodPath, as: a}, named(d.HTTP.OtherMethod.Value.Outcome, "http.otherMethod")},
		{"http.requestContentType", probe{path: spec.PathContactAdd, body: `{"email":"p@example.com"}`, as: a, header: map[string]string{"Content-Type": "text/plain"}}, named(d.HTTP.RequestContentType.Value, "http.requestContentType")},
		{"http.bodyLimit", probe{path: spec.PathContactAdd, body: `{"email":"p@example.com","firstName":"` + strings.Repeat("a", 256<<10) + `"}`, as: a}, named(*d.HTTP.BodyLimit.Value.Refusal, "http.bodyLimit")},
	}
	for _, vc := range profile.ValidationCases() {
		body := `{"email":"probe@example.com","` + vc.Field + `":` + vc.Value + `}`
		if vc.Field == "email" {
			body = `{"phoneNo":"+14155550100","email":` + vc.Value + `}`
		}
		want := named(d.Contact.Validation.Value[vc.Class], "contact.validation."+vc.Class)
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
