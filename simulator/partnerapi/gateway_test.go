package partnerapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/simulator/sim"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// allRateHeaders returns every rate-limit header of a that is set.
func allRateHeaders(a probeAnswer) map[string]string {
	out := map[string]string{}
	for _, n := range append(profile.PlayableRateHeaders(), "Retry-After") {
		if v := a.header.Get(n); v != "" {
			out[n] = v
		}
	}
	return out
}

// TestProfile_RateHeaderClasses: each class of answer carries exactly the
// rate-limit headers its choice names (issue 28; §8 names none): a 200
// and a 429 rateLimit.headers' (the IETF draft's four separate fields,
// name for name), a 404, 405 or 413 before the credentials to a key naming
// the account headerClasses.routing's, a 401 or 403 whose key names the
// account headerClasses.unauthenticated's, a body refusal the limit did
// not count headerClasses.refused's, a refusal it counted onSuccess's; an
// answer to a key naming nobody none. A limit of 2 per minute, the clock at 10:00:00.
func TestProfile_RateHeaderClasses(t *testing.T) {
	four := []string{"Ratelimit-Limit", "Ratelimit-Policy", "Ratelimit-Remaining", "Ratelimit-Reset"}
	p := playing("a gateway's headers on every answer naming an account", func(p *profile.Profile) {
		p.Rate.Headers.Value = profile.RateHeaders{Scheme: profile.SchemeRateLimit, OnSuccess: four, OnRefusal: append([]string{"Retry-After"}, four...)}
		p.Rate.HeaderClasses.Value = profile.RateHeaderClasses{Unauthenticated: four, Refused: []string{"Ratelimit-Limit"}, Routing: []string{"Ratelimit-Remaining"}}
		p.Rate.CountsBadRequests.Value, p.Rate.LimitFirst.Value = false, false
	})
	h := mustOpenProfile(t, p, sim.Config{RateLimit: 2})
	standing := func(remaining string) map[string]string {
		return map[string]string{"Ratelimit-Limit": "2", "Ratelimit-Policy": "2;w=60", "Ratelimit-Remaining": remaining, "Ratelimit-Reset": "60"}
	}
	list := `{"limit": 1, "page": 1}`
	steps := []struct {
		name   string
		p      probe
		status int
		want   map[string]string
	}{
		{"an unknown path", probe{path: "nothing/here", body: list, as: h.alpha}, 404, map[string]string{"Ratelimit-Remaining": "2"}},
		{"another method", probe{method: http.MethodGet, path: spec.PathCampaignList, as: h.alpha}, 405, map[string]string{"Ratelimit-Remaining": "2"}},
		{"a body over the limit", probe{path: spec.PathCampaignList, body: list + strings.Repeat(" ", 300<<10), as: h.alpha}, 413, map[string]string{"Ratelimit-Remaining": "2"}},
		{"an unknown path, a key naming nobody", probe{path: "nothing/here", body: list, header: map[string]string{spec.HeaderAPIKey: "nobody"}}, 404, map[string]string{}},
		{"a wrong secret", probe{path: spec.PathCampaignList, body: list, as: h.alpha, header: map[string]string{spec.HeaderAPISecret: "wrong"}}, 401, standing("2")},
		{"no x-account-id", probe{path: spec.PathCampaignList, body: list, as: h.alpha, header: map[string]string{spec.HeaderAccountID: ""}}, 403, standing("2")},
		{"a key naming nobody", probe{path: spec.PathCampaignList, body: list, header: map[string]string{spec.HeaderAPIKey: "nobody", spec.HeaderAPISecret: "x", spec.HeaderAccountID: "y"}}, 401, map[string]string{}},
		{"a body refused before the limit", probe{path: spec.PathCampaignStats, body: `{}`, as: h.alpha}, 400, map[string]string{"Ratelimit-Limit": "2"}},
		{"served", probe{path: spec.PathCampaignList, body: list, as: h.alpha}, 200, standing("1")},
		{"an unknown campaign, counted", probe{path: spec.PathCampaignStats, body: `{"campaignId": 987654321}`, as: h.alpha}, 404, standing("0")},
		{"refused by the limit", probe{path: spec.PathCampaignList, body: list, as: h.alpha}, 429,
			map[string]string{"Ratelimit-Limit": "2", "Ratelimit-Policy": "2;w=60", "Ratelimit-Remaining": "0", "Ratelimit-Reset": "60", "Retry-After": "60"}},
	}
	for _, st := range steps {
		a := h.probe(st.p)
		if got := allRateHeaders(a); a.status != st.status || !equalMaps(got, st.want) {
			t.Errorf("%s: %d %v, want %d %v (%s)", st.name, a.status, got, st.status, st.want, a.body)
		}
	}
}

// TestProfile_RateHeaderClassesDefault: the simulator's own choices (and
// a profile written before headerClasses, which reads it as unknown): no
// rate-limit header on a 401 nor on an unknown path, and a body refusal
// carries X-RateLimit-Limit and -Remaining.
func TestProfile_RateHeaderClassesDefault(t *testing.T) {
	old, err := profile.Parse([]byte(`{"profileVersion": 1, "rateLimit": {"countsBadRequests": {"value": false}, "limitFirst": {"value": false}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name    string
		p       *profile.Profile
		refused map[string]string
	}{
		{"default.json", profile.Default(), map[string]string{"X-Ratelimit-Limit": "2", "X-Ratelimit-Remaining": "1"}},
		{"a profile without headerClasses, the body refused before the limit", old, map[string]string{"X-Ratelimit-Limit": "2", "X-Ratelimit-Remaining": "2"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := mustOpenProfile(t, tt.p, sim.Config{RateLimit: 2})
			a := h.probe(probe{path: spec.PathCampaignList, body: `{"limit": 1, "page": 1}`, as: h.alpha, header: map[string]string{spec.HeaderAPISecret: "wrong"}})
			if got := allRateHeaders(a); a.status != http.StatusUnauthorized || len(got) != 0 {
				t.Errorf("a wrong secret: %d %v, want 401 and no rate-limit header", a.status, got)
			}
			a = h.probe(probe{path: "nothing/here", body: `{}`, as: h.alpha})
			if got := allRateHeaders(a); a.status != http.StatusNotFound || len(got) != 0 {
				t.Errorf("an unknown path: %d %v, want 404 and no rate-limit header", a.status, got)
			}
			a = h.probe(probe{path: spec.PathCampaignStats, body: `{}`, as: h.alpha})
			if got := allRateHeaders(a); a.status != http.StatusBadRequest || !equalMaps(got, tt.refused) {
				t.Errorf("no campaignId: %d %v, want 400 %v", a.status, got, tt.refused)
			}
		})
	}
}

// TestProfile_MissingContentType: a request without a Content-Type is
// answered as http.missingContentType says (§1 rule 2 wants
// application/json; without one is not shown): the simulator's 415, or
// read as JSON, no body then {} (the missing field's 400) or the
// profile's refusal of an empty body, or the simulator's own.
func TestProfile_MissingContentType(t *testing.T) {
	noCT := map[string]string{"Content-Type": ""}
	tests := []struct {
		name     string
		v        *profile.NoContentType // nil: default.json's
		valid    int                    // status of a valid body
		validMsg string
		empty    int
		emptyMsg string
	}{
		{name: "default.json: 415", valid: 415, validMsg: "Content-Type must be application/json (got none)", empty: 415, emptyMsg: "Content-Type must be application/json (got none)"},
		{name: "read as JSON, no body as {}", v: &profile.NoContentType{Outcome: profile.Outcome{Status: 200}, EmptyAsObject: true},
			valid: 200, empty: 400, emptyMsg: spec.MsgCampaignIDRequired},
		{name: "read as JSON, no body refused as the profile learned", v: &profile.NoContentType{Outcome: profile.Outcome{Status: 200}, Empty: &profile.Outcome{Status: 400, Message: "Body is not a JSON object"}},
			valid: 200, empty: 400, emptyMsg: "Body is not a JSON object"},
		{name: "read as JSON, no body refused as the simulator does", v: &profile.NoContentType{Outcome: profile.Outcome{Status: 200}},
			valid: 200, empty: 400, emptyMsg: "Request body is empty: a JSON object is required"},
		{name: "refused with the profile's own", v: &profile.NoContentType{Outcome: profile.Outcome{Status: 400, Message: "send JSON"}},
			valid: 400, validMsg: "send JSON", empty: 400, emptyMsg: "send JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := playing(tt.name, func(p *profile.Profile) {
				if tt.v != nil {
					p.HTTP.MissingContentType.Value = *tt.v
				}
			})
			if err := p.Check(); err != nil {
				t.Fatal(err)
			}
			h := mustOpenProfile(t, p, sim.Config{})
			a := h.probe(probe{path: spec.PathCampaignList, body: `{"limit": 1, "page": 1}`, as: h.alpha, header: noCT})
			if a.status != tt.valid || (tt.validMsg != "" && a.object(t)["error"] != tt.validMsg) {
				t.Errorf("a valid body: %d %s, want %d %q", a.status, a.body, tt.valid, tt.validMsg)
			}
			a = h.probe(probe{path: spec.PathCampaignStats, as: h.alpha, header: noCT})
			if a.status != tt.empty || a.object(t)["error"] != tt.emptyMsg {
				t.Errorf("no body: %d %s, want %d %q", a.status, a.body, tt.empty, tt.emptyMsg)
			}
		})
	}
}
