package learn

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/internal/target"
)

// TestEcho: a part of the request a message quotes becomes its
// placeholder where it stands as a word of its own, however often, and
// nowhere else (issue 28).
func TestEcho(t *testing.T) {
	const path = "/v3/partner/webhook/nothing/here"
	tests := []struct{ msg, part, placeholder, want string }{
		{`no route matches "` + path + `"`, path, "{path}", `no route matches "{path}"`},
		{path + " is no route; " + path + ".", path, "{path}", "{path} is no route; {path}."},
		{"No operation at " + path + "/more", path, "{path}", "No operation at " + path + "/more"},
		{"Method GET is not allowed: campaign/list takes POST", "GET", "{method}", "Method {method} is not allowed: campaign/list takes POST"},
		{"GETTING is not GET", "GET", "{method}", "GETTING is not {method}"},
		{"v2/campaign/list is gone", "campaign/list", "{operation}", "v2/campaign/list is gone"},
		{"unsupported media type text/plain: send JSON", "text/plain", "{contentType}", "unsupported media type {contentType}: send JSON"},
		{"Resource not found", path, "{path}", "Resource not found"},
	}
	for _, tt := range tests {
		if got := echo(tt.msg, tt.part, tt.placeholder); got != tt.want {
			t.Errorf("echo(%q, %q) = %q, want %q", tt.msg, tt.part, got, tt.want)
		}
	}
}

// TestHeaderClasses: the unauthenticated class is read from the refusals
// to the primary key with a wrong secret or account id, the refused class
// from the refusal of Campaign Stats {} with the right credentials, the
// routing class from the unknown path's, another method's and the body
// limit's; answers that disagree, or name a header the simulator cannot
// write, leave the choice unknown.
func TestHeaderClasses(t *testing.T) {
	pr := control.Credentials{APIKey: "k", APISecret: "s", AccountID: "a"}
	x := func(secret string, path string, status int, body string, rate ...string) *exch {
		h := http.Header{}
		for _, n := range rate {
			h.Set(n, "1")
		}
		rh := http.Header{}
		rh.Set(spec.HeaderAPIKey, pr.APIKey)
		rh.Set(spec.HeaderAPISecret, secret)
		rh.Set(spec.HeaderAccountID, pr.AccountID)
		rh.Set("Content-Type", spec.ContentType)
		req := `{"limit": 1, "page": 1}`
		if path == spec.PathCampaignStats && status != http.StatusNotFound {
			req = `{}`
		}
		return &exch{method: http.MethodPost, path: path, op: path, reqHeader: rh, reqBody: []byte(req), status: status, header: h, body: []byte(body)}
	}
	// route is the unknown path's answer, with the right credentials.
	route := func(rate ...string) *exch {
		r := x("s", profile.ProbeUnknownPath, 404, `{}`, rate...)
		r.op = ""
		return r
	}
	noID := `{"error": "` + spec.MsgCampaignIDRequired + `"}`
	tests := []struct {
		name   string
		xs     []*exch
		unauth []string
		ref    []string
		route  []string
		why    string
	}{
		{"a gateway: the whole family everywhere", []*exch{
			x("wrong", spec.PathCampaignList, 401, `{}`, "RateLimit-Limit", "RateLimit-Remaining"),
			x("s", spec.PathCampaignStats, 400, noID, "RateLimit-Limit", "RateLimit-Remaining"),
			x("s", spec.PathCampaignStats, 404, `{"error": "not found"}`), // counted: not the class's
			x("s", spec.PathCampaignList, 200, `{}`, "RateLimit-Limit"),
			route("RateLimit-Limit"),
		}, []string{"Ratelimit-Limit", "Ratelimit-Remaining"}, []string{"Ratelimit-Limit", "Ratelimit-Remaining"}, []string{"Ratelimit-Limit"}, ""},
		{"a service counting after authentication", []*exch{
			x("wrong", spec.PathCampaignStats, 400, noID), x("s", spec.PathCampaignStats, 400, noID, "X-RateLimit-Limit"), route(),
		}, []string{}, []string{"X-Ratelimit-Limit"}, []string{}, ""},
		{"a framework's 422, and a 429 that is no body's refusal", []*exch{
			x("wrong", spec.PathCampaignList, 401, `{}`), x("s", spec.PathCampaignStats, 422, `{"detail": []}`),
			x("s", spec.PathCampaignStats, 429, `{"error": "x"}`, "Retry-After"), route(),
		}, []string{}, []string{}, []string{}, ""},
		{"two 401s that disagree", []*exch{
			x("wrong", spec.PathCampaignList, 401, `{}`), x("", spec.PathCampaignList, 401, `{}`, "RateLimit"),
			x("s", spec.PathCampaignStats, 400, noID), route(),
		}, nil, nil, nil, "unauthenticated answers carry different"},
		{"a header the simulator cannot write", []*exch{
			x("wrong", spec.PathCampaignList, 401, `{}`), x("s", spec.PathCampaignStats, 400, noID, "X-Rate-Limit-Quota"), route(),
		}, nil, nil, nil, "cannot write"},
		{"no body refused", []*exch{x("wrong", spec.PathCampaignList, 401, `{}`), route()}, nil, nil, nil, "no refused answer"},
		{"another method's answer unlike the unknown path's", []*exch{
			x("wrong", spec.PathCampaignList, 401, `{}`), x("s", spec.PathCampaignStats, 400, noID), route("RateLimit"),
			{method: http.MethodGet, path: spec.PathCampaignList, op: spec.PathCampaignList, reqHeader: http.Header{"X-Api-Key": {pr.APIKey}, "X-Api-Secret": {pr.APISecret}, "X-Account-Id": {pr.AccountID}}, status: 405, header: http.Header{}},
		}, nil, nil, nil, "routing answers carry different"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, _ := url.Parse("https://example.test" + spec.BasePath)
			// A profile that knows nothing else, so that Check judges the
			// learned choice alone.
			p, err := profile.Parse([]byte(`{"profileVersion": 1}`))
			if err != nil {
				t.Fatal(err)
			}
			l := &learner{env: Env{Target: target.Target{BaseURL: u, Primary: pr}}, p: p, all: tt.xs}
			l.headerClasses()
			c := l.p.Rate.HeaderClasses
			if tt.why != "" {
				if c.Known() || !strings.Contains(c.Unknown, tt.why) {
					t.Fatalf("headerClasses = %+v, want unknown: %s", c, tt.why)
				}
				return
			}
			if !c.Known() || !slices.Equal(c.Value.Unauthenticated, tt.unauth) || !slices.Equal(c.Value.Refused, tt.ref) || !slices.Equal(c.Value.Routing, tt.route) {
				t.Fatalf("headerClasses = %+v, want unauthenticated %v, refused %v, routing %v", c, tt.unauth, tt.ref, tt.route)
			}
			if err := l.p.Check(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestEchoTemplates: the learned messages of the unknown path, another
// method and text/plain quote the request as placeholders; the unknown
// path's method only where the same path with another method says that
// one in its place.
func TestEchoTemplates(t *testing.T) {
	base := spec.BasePath + "/"
	tests := []struct {
		name, post, put, want string
	}{
		{"the method and the path echoed", "Cannot POST " + base + "nothing/here", "Cannot PUT " + base + "nothing/here", "Cannot {method} {path}"},
		{"POST of its own", "No operation at " + base + "nothing/here: the operations are POST", "No operation at " + base + "nothing/here: the operations are POST", "No operation at {path}: the operations are POST"},
		{"another method another answer", "Cannot POST " + base + "nothing/here", "Method not allowed", "Cannot POST {path}"},
		{"nothing echoed", "Not Found", "Not Found", "Not Found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, _ := url.Parse("https://example.test" + spec.BasePath)
			p, err := profile.Parse([]byte(`{"profileVersion": 1}`))
			if err != nil {
				t.Fatal(err)
			}
			p.HTTP.UnknownPath = profile.Choice[profile.Outcome]{Value: profile.Outcome{Status: 404, Message: tt.post}}
			p.HTTP.OtherMethod = profile.Choice[profile.MethodOutcome]{Value: profile.MethodOutcome{Outcome: profile.Outcome{Status: 405, Message: "GET is not allowed on " + base + "campaign/list (campaign/list takes POST)"}}}
			p.HTTP.RequestContentType = profile.Choice[profile.Outcome]{Value: profile.Outcome{Status: 415, Message: "text/plain is not JSON"}}
			put := &exch{method: http.MethodPut, path: profile.ProbeUnknownPath, status: 404, body: []byte(`{"message": "` + tt.put + `"}`), header: http.Header{}}
			l := &learner{env: Env{Target: target.Target{BaseURL: u}}, p: p, all: []*exch{put}}
			l.echoTemplates()
			if got := l.p.HTTP.UnknownPath.Value.Message; got != tt.want {
				t.Errorf("unknownPath %q, want %q", got, tt.want)
			}
			if got, want := l.p.HTTP.OtherMethod.Value.Message, "{method} is not allowed on {path} ({operation} takes POST)"; got != want {
				t.Errorf("otherMethod %q, want %q", got, want)
			}
			if got, want := l.p.HTTP.RequestContentType.Value.Message, "{contentType} is not JSON"; got != want {
				t.Errorf("requestContentType %q, want %q", got, want)
			}
		})
	}
}
