package violation_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/internal/apitest"
	"github.com/partner-v3/conformance-kit/simulator/sim"
	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/simulator/violation"
)

// A probe shows one switch at work: it sends the same requests to a
// faithful simulator and to one with the switch on, and requires the
// switched one to answer differently in exactly the way the switch
// describes, and, where the switch has a context, the same elsewhere.
type probe struct {
	// rateLimit configures both simulators; zero means the spec's 100.
	rateLimit int
	// listen serves the switched simulator on a real listener too.
	listen bool
	run    func(p *pair)
}

// probes is every switch's probe, filled by the probes_*_test.go files.
var probes = map[violation.Name]probe{}

func register(ps map[violation.Name]probe) {
	for n, p := range ps {
		if _, dup := probes[n]; dup {
			panic("two probes for " + n)
		}
		probes[n] = p
	}
}

// TestEverySwitchBreaksItsRule runs every switch's probe: none may be a
// no-op, and each breaks what it says and nothing else the probe sees.
func TestEverySwitchBreaksItsRule(t *testing.T) {
	for n := range probes {
		if _, ok := violation.Lookup(string(n)); !ok {
			t.Errorf("probe for %s, which the catalogue does not have", n)
		}
	}
	for _, v := range violation.Catalogue() {
		pr, ok := probes[v.Name]
		if !ok {
			t.Errorf("%s has no probe", v.Name)
			continue
		}
		t.Run(string(v.Name), func(t *testing.T) {
			t.Parallel()
			p := &pair{t: t, f: openSim(t, pr.rateLimit, false), b: openSim(t, pr.rateLimit, pr.listen, string(v.Name))}
			pr.run(p)
			if !t.Failed() && !p.differed {
				t.Fatalf("%s: no answer differed from the faithful simulator's", v.Rule)
			}
		})
	}
}

// sut is one simulator under test, served in-process.
type sut struct {
	t     *testing.T
	sim   *sim.Simulator
	h     http.Handler
	admin http.Handler
	clock *apitest.Clock
}

func openSim(t *testing.T, rateLimit int, listen bool, violations ...string) *sut {
	t.Helper()
	c := apitest.NewClock(time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC))
	cfg := sim.Config{Insecure: true, RateLimit: rateLimit, Now: c.Now, AdminToken: "probe", Violations: violations}
	if listen {
		cfg.Addr = "127.0.0.1:0"
	}
	s, err := sim.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if listen {
		if err := s.Open(); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { s.Close() })
	return &sut{t: t, sim: s, h: s.Handler(), admin: s.AdminHandler(), clock: c}
}

// call is one partner request. The zero fields mean: POST, the spec's
// path of op, the primary account's three headers, application/json.
type call struct {
	method string
	path   string
	op     string
	body   string
	as     int               // index of the account whose credentials are sent
	header map[string]string // replaces a header; "-" removes it
}

func post(op, body string) call { return call{op: op, body: body} }

func list(limit, page int) call {
	return post(spec.PathCampaignList, fmt.Sprintf(`{"limit":%d,"page":%d}`, limit, page))
}

func stats(id int64) call {
	return post(spec.PathCampaignStats, fmt.Sprintf(`{"campaignId":%d}`, id))
}

func contact(body string) call { return post(spec.PathContactAdd, body) }

func (c call) with(header, value string) call {
	h := maps.Clone(c.header)
	if h == nil {
		h = map[string]string{}
	}
	h[header] = value
	c.header = h
	return c
}

func (c call) asAccount(i int) call { c.as = i; return c }

// answer is a response as a probe compares it.
type answer struct {
	Status int
	Type   string
	Header http.Header
	Raw    []byte
	Doc    any // Raw decoded, when it is exactly one JSON value; else nil
}

func (s *sut) do(c call) answer {
	s.t.Helper()
	method, path := c.method, c.path
	if method == "" {
		method = http.MethodPost
	}
	if path == "" {
		path = spec.BasePath + "/" + c.op
	}
	req := httptest.NewRequest(method, path, strings.NewReader(c.body))
	a := s.sim.Accounts[c.as]
	for k, v := range map[string]string{"Content-Type": "application/json; charset=utf-8",
		"x-api-key": a.APIKey, "x-api-secret": a.APISecret, "x-account-id": a.AccountID} {
		req.Header.Set(k, v)
	}
	for k, v := range c.header {
		if v == "-" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	w := httptest.NewRecorder()
	s.h.ServeHTTP(w, req)
	return toAnswer(w.Code, w.Header(), w.Body.Bytes())
}

func toAnswer(status int, h http.Header, body []byte) answer {
	return answer{Status: status, Type: h.Get("Content-Type"), Header: h, Raw: body, Doc: decode(body)}
}

var contactIDRE = regexp.MustCompile(`^ct_[0-9a-f]{24}$`)

// decode reads one JSON value, numbers as json.Number. A contactId the
// simulator made up reads as "ct_*", so two simulators' answers compare.
func decode(b []byte) any {
	v := violation.DecodeJSON(b)
	if m, ok := v.(map[string]any); ok {
		if id, ok := m["contactId"].(string); ok && contactIDRE.MatchString(id) {
			m["contactId"] = "ct_*"
		}
	}
	return v
}

func (a answer) obj() map[string]any {
	m, _ := a.Doc.(map[string]any)
	return m
}

func (a answer) String() string {
	return fmt.Sprintf("%d %s %s", a.Status, a.Type, bytes.TrimSpace(a.Raw))
}

func (a answer) clone() answer {
	a.Doc = deepCopy(a.Doc)
	a.Raw = slices.Clone(a.Raw)
	return a
}

func deepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[k] = deepCopy(x)
		}
		return m
	case []any:
		s := make([]any, len(v))
		for i, x := range v {
			s[i] = deepCopy(x)
		}
		return s
	}
	return v
}

// equal compares status, label and body (as JSON when both are JSON).
func (a answer) equal(b answer) bool {
	if a.Status != b.Status || a.Type != b.Type {
		return false
	}
	if a.Doc != nil || b.Doc != nil {
		return reflect.DeepEqual(a.Doc, b.Doc)
	}
	return bytes.Equal(a.Raw, b.Raw)
}

// pair is a faithful simulator (f) and a switched one (b).
type pair struct {
	t        *testing.T
	f, b     *sut
	differed bool
}

// both sends c to both simulators.
func (p *pair) both(c call) (faithful, broken answer) {
	p.t.Helper()
	faithful, broken = p.f.do(c), p.b.do(c)
	if !faithful.equal(broken) {
		p.differed = true
	}
	return faithful, broken
}

// expect sends c to both; the broken answer must be the faithful one as
// edit changes it. edit must change something.
func (p *pair) expect(c call, edit func(a *answer)) answer {
	p.t.Helper()
	f, b := p.both(c)
	want := f.clone()
	edit(&want)
	if want.equal(f) {
		p.t.Fatalf("%s %s: the probe expects no change (faithful %s)", c.op, c.body, f)
	}
	if !want.equal(b) {
		p.t.Fatalf("%s %s %v:\n got  %s\n want %s\n (faithful %s)", c.op, c.body, c.header, b, render(want), f)
	}
	return b
}

// same sends c to both; the answers must be equal: the switch leaves that
// request alone.
func (p *pair) same(c call) answer {
	p.t.Helper()
	f, b := p.both(c)
	if !f.equal(b) {
		p.t.Fatalf("%s %s %v: the switch should leave this alone:\n got  %s\n want %s", c.op, c.body, c.header, b, f)
	}
	return f
}

// status sends c to both and checks their statuses.
func (p *pair) status(c call, faithful, broken int) (answer, answer) {
	p.t.Helper()
	f, b := p.both(c)
	if f.Status != faithful || b.Status != broken {
		p.t.Fatalf("%s %s %v: statuses faithful %d, broken %d; want %d, %d\n faithful %s\n broken   %s",
			c.op, c.body, c.header, f.Status, b.Status, faithful, broken, f, b)
	}
	return f, b
}

func render(a answer) string {
	if a.Doc != nil {
		b, _ := json.Marshal(a.Doc)
		return fmt.Sprintf("%d %s %s", a.Status, a.Type, b)
	}
	return a.String()
}

// errorAnswer is the answer a switch gives itself: a JSON error.
func errorAnswer(a *answer, status int, msg string) {
	a.Status, a.Type, a.Doc = status, "application/json", map[string]any{"error": msg}
}

// campaigns edits every campaign of a Campaign List answer that in
// selects (nil: all); it fails unless some campaign is selected and, with
// in, some is not.
func campaigns(t *testing.T, in func(c map[string]any) bool, edit func(c map[string]any)) func(a *answer) {
	return func(a *answer) {
		t.Helper()
		cs, _ := a.obj()["campaigns"].([]any)
		hit, miss := 0, 0
		for _, c := range cs {
			c := c.(map[string]any)
			if in == nil || in(c) {
				edit(c)
				hit++
			} else {
				miss++
			}
		}
		if hit == 0 || in != nil && miss == 0 {
			t.Fatalf("the probe's page has %d campaigns in the switch's context and %d outside it; it needs both", hit, miss)
		}
	}
}

func sms(c map[string]any) bool       { return c["campaignChannel"] == spec.ChannelSMS }
func email(c map[string]any) bool     { return c["campaignChannel"] == spec.ChannelEmail }
func isDeleted(c map[string]any) bool { return c["active"] == json.Number("0") }

// account returns the primary account's campaigns from the faithful
// store (no request spent).
func (p *pair) account() []*simulator.Campaign {
	p.t.Helper()
	cs, _, err := p.f.sim.Campaigns.FindCampaigns(context.Background(), simulator.CampaignFilter{AccountID: p.f.sim.Accounts[0].AccountID})
	if err != nil || len(cs) < 101 {
		p.t.Fatalf("campaigns: %d, %v", len(cs), err)
	}
	return cs
}

// campaignOf returns the primary account's first campaign that ok holds
// for, with counts.
func (p *pair) campaignOf(ok func(c *simulator.Campaign) bool) *simulator.Campaign {
	p.t.Helper()
	for _, c := range p.account() {
		if ok(c) && c.Stats != (simulator.CampaignStats{}) {
			return c
		}
	}
	p.t.Fatal("no such campaign")
	return nil
}

func (p *pair) smsCampaign() *simulator.Campaign {
	return p.campaignOf(func(c *simulator.Campaign) bool { return c.CampaignChannel == spec.ChannelSMS })
}

func (p *pair) emailCampaign() *simulator.Campaign {
	return p.campaignOf(func(c *simulator.Campaign) bool { return c.CampaignChannel == spec.ChannelEmail })
}

// obj returns the object at key of a decoded body.
func obj(v any, key string) map[string]any {
	m, _ := v.(map[string]any)
	o, _ := m[key].(map[string]any)
	return o
}

func num(n int64) json.Number { return json.Number(fmt.Sprint(n)) }

// spend sends n requests of c to a simulator, each of which must succeed.
func spend(t *testing.T, s *sut, c call, n int) {
	t.Helper()
	for i := range n {
		if a := s.do(c); a.Status != http.StatusOK {
			t.Fatalf("request %d of %d: %s", i+1, n, a)
		}
	}
}
