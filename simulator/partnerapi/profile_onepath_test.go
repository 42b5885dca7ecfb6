package partnerapi_test

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/simulator/sim"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// TestOneCodePath_DefaultProfile (issue 31, step 2): the simulator's own
// choices are default.json, played by the code that plays any profile. The
// whole request corpus of the golden tests (the bad-input matrix, the
// default profile's probes, the golden pages, a contact added and merged,
// and the client report they leave) gets the same answers, byte for byte,
// from a simulator without a profile, one playing profile.Default(), and
// one playing default.json written and read back (another pointer, the
// path a --profile file takes): no branch tells the default apart.
func TestOneCodePath_DefaultProfile(t *testing.T) {
	data, err := profile.Default().Marshal()
	if err != nil {
		t.Fatal(err)
	}
	roundTripped, err := profile.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for i, side := range []struct {
		name string
		p    *profile.Profile
	}{{"no profile", nil}, {"profile.Default()", profile.Default()}, {"default.json round-tripped", roundTripped}} {
		got := defaultCorpus(t, openMatrixPlaying(t, side.p))
		if len(got) < 100 {
			t.Fatalf("%s: %d answers, want the whole corpus", side.name, len(got))
		}
		if i == 0 {
			want = got
			continue
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d answers, no profile %d", side.name, len(got), len(want))
		}
		for j := range got {
			if got[j] != want[j] {
				t.Errorf("%s answers otherwise than no profile:\n got  %s\n want %s", side.name, got[j], want[j])
			}
		}
	}
}

// contactIDRE and requestIDRE match a contactId in an answer and a
// request id in a report: new ones each time.
var (
	contactIDRE = regexp.MustCompile(`"contactId":"[^"]*"`)
	requestIDRE = regexp.MustCompile(`"exampleRequestId":"[^"]*"`)
)

// defaultCorpus sends the corpus to m's simulators and returns each answer
// as one line: what a client can observe of it (status, the headers that
// carry a choice, the body), with a new contactId written as such.
func defaultCorpus(t *testing.T, m *matrix) []string {
	t.Helper()
	var out []string
	body := func(b []byte) string { return contactIDRE.ReplaceAllString(string(b), `"contactId":"<new>"`) }
	for _, tt := range badInputMatrix() {
		h := m.h
		if tt.req.slow {
			h = m.slow
		}
		m.resetRate(t, h)
		a := m.send(t, tt.req)
		out = append(out, fmt.Sprintf("%s: %s: %d %q allow=%q closed=%v noAnswer=%v %s",
			tt.class, tt.name, a.status, a.contentType, a.allow, a.closed, a.noAnswer, body(a.body)))
	}
	h := m.h
	m.resetRate(t, h)
	id := h.firstCampaignID(h.alpha)
	probes := defaultProbes(h, profile.Default(), id)
	for _, page := range []int{1, 2, 3, 4, 8} {
		probes = append(probes, struct {
			name string
			p    probe
			want profile.Outcome
		}{fmt.Sprintf("page %d", page), probe{path: spec.PathCampaignList, body: fmt.Sprintf(`{"limit":20,"page":%d}`, page), as: h.alpha}, profile.Outcome{}})
	}
	for _, p := range []probe{
		{path: spec.PathCampaignStats, body: fmt.Sprintf(`{"campaignId":%d}`, id), as: h.alpha},
		{path: spec.PathCampaignList, body: `{"limit":50,"page":1}`, as: h.bravo},
		{path: spec.PathContactAdd, body: `{"email":"one@example.com","tag":["a"]}`, as: h.alpha},
		{path: spec.PathContactAdd, body: `{"email":"one@example.com","firstName":"Merged"}`, as: h.alpha},
		{path: spec.PathContactAdd, body: `{"phoneNo":"+14155550100"}`, as: h.alpha},
		{path: spec.PathContactAdd, body: `{"phoneNo":"+14155550100","lastName":"Again"}`, as: h.alpha},
		{path: spec.PathContactAdd, body: `{"email":"two@example.com","nickname":"x","alias":"y"}`, as: h.alpha},
		{path: spec.PathContactAdd, body: `{"email":"bad","firstName":5,"gender":"x"}`, as: h.alpha},
		{path: spec.PathContactAdd, body: `{"email":"ok@example.com","tag":"vip","smsOptStatus":"1"}`, as: h.alpha},
		{path: spec.PathCampaignList, body: `{"limit":"5","page":"2"}`, as: h.alpha},
		{path: spec.PathCampaignList, body: `{"limit":5,"page":"2"}`, as: h.alpha},
		{path: spec.PathCampaignList, body: `{"limit":5,"page":1,"a":1,"b":2,"c":3,"d":4,"e":5,"f":6}`, as: h.alpha},
		{path: spec.PathCampaignStats, body: `{"campaignId":"12","x":1}`, as: h.alpha},
		{method: http.MethodPut, path: spec.PathContactAdd, as: h.alpha},
		{method: http.MethodDelete, path: spec.PathCampaignStats},
		{path: "nothing/else/here", body: `{}`},
		{path: "/elsewhere", body: `{}`},
		{path: spec.PathCampaignList, body: `{"limit":5,"page":1}`, as: h.alpha, header: map[string]string{"Content-Type": "text/plain; charset=utf-8"}},
	} {
		probes = append(probes, struct {
			name string
			p    probe
			want profile.Outcome
		}{p.method + " " + p.path + " " + p.body, p, profile.Outcome{}})
	}
	for _, pr := range probes {
		a := h.probe(pr.p)
		var hs []string
		for k, v := range a.header {
			if k != "Date" && k != "X-Request-Id" {
				hs = append(hs, k+": "+strings.Join(v, ", "))
			}
		}
		slices.Sort(hs)
		out = append(out, fmt.Sprintf("%s: %d [%s] %s", pr.name, a.status, strings.Join(hs, "; "), body(a.body)))
	}
	for _, a := range []string{h.alpha.AccountID, h.bravo.AccountID} {
		r := h.admin().GET("/accounts/" + a + "/report").Expect().Status(http.StatusOK).Body().Raw()
		out = append(out, "report "+a+": "+requestIDRE.ReplaceAllString(r, `"exampleRequestId":"<random>"`))
	}
	return out
}

// openMatrixPlaying is openMatrix with simulators playing p (nil: none).
func openMatrixPlaying(t *testing.T, p *profile.Profile) *matrix {
	t.Helper()
	h := MustOpenServer(t, sim.Config{Profile: p})
	slow := openSlowPlaying(t, p)
	pool := h.client.Transport.(*http.Transport).TLSClientConfig.RootCAs
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &matrix{t: t, h: h, slow: slow, pool: pool, h2: &http.Client{Transport: tr, Timeout: 10 * time.Second},
		rateLimit: spec.RateLimit, alpha: h.alpha, bra: h.bravo}
}

// openSlowPlaying is mustOpenWithReadTimeout's simulator (a one-second
// read timeout) playing p.
func openSlowPlaying(t *testing.T, p *profile.Profile) *harness {
	t.Helper()
	return openHarness(t, sim.Config{Profile: p}, time.Second, false)
}
