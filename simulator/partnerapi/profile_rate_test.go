package partnerapi_test

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/simulator/partnerapi"
	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/simulator/sim"
)

// playing returns the default profile named name with change applied.
func playing(name string, change func(p *profile.Profile)) *profile.Profile {
	p := profile.Default()
	p.Source.Name = name
	if change != nil {
		change(p)
	}
	return p
}

func profileJSON(t *testing.T, p *profile.Profile) json.RawMessage {
	t.Helper()
	data, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// rateHeaderNames are the headers a rate-limit scheme may send.
var rateHeaderNames = []string{"X-Ratelimit-Limit", "X-Ratelimit-Remaining", "X-Ratelimit-Reset", "Ratelimit", "Ratelimit-Policy", "Retry-After"}

// rateHeaders returns the rate-limit headers of resp that are set.
func rateHeaders(resp *http.Response) map[string]string {
	out := map[string]string{}
	for _, n := range rateHeaderNames {
		if v := resp.Header.Get(n); v != "" {
			out[n] = v
		}
	}
	return out
}

// TestProfile_RateHeaders: limitRate sends the headers the profile's
// rateLimit.headers scheme and retryAfter name (issue 20; §8 names none),
// on a 200 and on the 429, with a limit of 2 per minute and the clock at
// 10:00:00.
func TestProfile_RateHeaders(t *testing.T) {
	epoch := time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC).Unix()
	tests := []struct {
		name             string
		change           func(p *profile.Profile)
		success, refusal map[string]string
	}{
		{
			name:    "the default: X-RateLimit-Limit and -Remaining, Retry-After in seconds",
			success: map[string]string{"X-Ratelimit-Limit": "2", "X-Ratelimit-Remaining": "1"},
			refusal: map[string]string{"X-Ratelimit-Limit": "2", "X-Ratelimit-Remaining": "0", "Retry-After": "60"},
		},
		{
			name: "x-ratelimit with a Reset in delta-seconds where the profile lists it",
			change: func(p *profile.Profile) {
				p.Rate.Headers.Value = profile.RateHeaders{Scheme: profile.SchemeXRateLimit, Reset: profile.ResetDelta,
					OnSuccess: []string{"X-Ratelimit-Remaining", "X-Ratelimit-Reset"},
					OnRefusal: []string{"Retry-After", "X-Ratelimit-Limit", "X-Ratelimit-Remaining", "X-Ratelimit-Reset"}}
			},
			success: map[string]string{"X-Ratelimit-Remaining": "1", "X-Ratelimit-Reset": "60"},
			refusal: map[string]string{"X-Ratelimit-Limit": "2", "X-Ratelimit-Remaining": "0", "X-Ratelimit-Reset": "60", "Retry-After": "60"},
		},
		{
			name: "x-ratelimit with a Reset in epoch seconds",
			change: func(p *profile.Profile) {
				p.Rate.Headers.Value = profile.RateHeaders{Scheme: profile.SchemeXRateLimit, Reset: profile.ResetEpoch,
					OnSuccess: []string{"X-Ratelimit-Reset"}, OnRefusal: []string{"X-Ratelimit-Reset"}}
			},
			success: map[string]string{"X-Ratelimit-Reset": strconv.FormatInt(epoch+60, 10)},
			refusal: map[string]string{"X-Ratelimit-Reset": strconv.FormatInt(epoch+60, 10), "Retry-After": "60"},
		},
		{
			name: "the IETF draft's RateLimit-Policy and RateLimit",
			change: func(p *profile.Profile) {
				p.Rate.Headers.Value = profile.RateHeaders{Scheme: profile.SchemeRateLimit}
			},
			success: map[string]string{"Ratelimit-Policy": "2;w=60", "Ratelimit": "limit=2, remaining=1, reset=60"},
			refusal: map[string]string{"Ratelimit-Policy": "2;w=60", "Ratelimit": "limit=2, remaining=0, reset=60", "Retry-After": "60"},
		},
		{
			name: "none, and no Retry-After",
			change: func(p *profile.Profile) {
				p.Rate.Headers.Value = profile.RateHeaders{Scheme: profile.SchemeNone}
				p.Rate.RetryAfter.Value = profile.RetryAfter{}
			},
			success: map[string]string{},
			refusal: map[string]string{},
		},
		{
			name: "other: nothing of ours, and Retry-After as an HTTP-date",
			change: func(p *profile.Profile) {
				p.Rate.Headers.Value = profile.RateHeaders{Scheme: profile.SchemeOther}
				p.Rate.RetryAfter.Value = profile.RetryAfter{Present: true, Format: profile.RetryHTTPDate}
			},
			success: map[string]string{},
			refusal: map[string]string{"Retry-After": "Mon, 02 Nov 2026 10:01:00 GMT"},
		},
		{
			name: "an Unknown choice plays the default's",
			change: func(p *profile.Profile) {
				p.Rate.Headers = profile.Choice[profile.RateHeaders]{Unknown: "not probed"}
				p.Rate.RetryAfter = profile.Choice[profile.RetryAfter]{Unknown: "not probed"}
			},
			success: map[string]string{"X-Ratelimit-Limit": "2", "X-Ratelimit-Remaining": "1"},
			refusal: map[string]string{"X-Ratelimit-Limit": "2", "X-Ratelimit-Remaining": "0", "Retry-After": "60"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := MustOpenServer(t, sim.Config{RateLimit: 2, Profile: playing(tt.name, tt.change)})
			ok := h.list(h.alpha)
			if got := rateHeaders(ok); ok.StatusCode != http.StatusOK || !equalMaps(got, tt.success) {
				t.Fatalf("200: status %d, headers %v, want %v", ok.StatusCode, got, tt.success)
			}
			h.list(h.alpha)
			refused := h.list(h.alpha)
			if got := rateHeaders(refused); refused.StatusCode != http.StatusTooManyRequests || !equalMaps(got, tt.refusal) {
				t.Fatalf("429: status %d, headers %v, want %v", refused.StatusCode, got, tt.refusal)
			}
		})
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// fixedFirstRatelimit is a profile whose window opens at the first request
// and that speaks the IETF draft's headers: both tell it from the default.
func fixedFirstRatelimit(p *profile.Profile) {
	p.Rate.Window.Value = profile.WindowFixedFirst
	p.Rate.Headers.Value = profile.RateHeaders{Scheme: profile.SchemeRateLimit}
}

// playsWindows checks, with a limit of 2: a (fixed-first) gets both slots
// back a minute after its first request, b (sliding) one; a speaks the
// draft's headers, b X-RateLimit-*.
func playsWindows(t *testing.T, a, b *harness, fixed, sliding *simulator.Account) {
	t.Helper()
	for _, acc := range []*simulator.Account{fixed, sliding} {
		if got := a.list(acc).StatusCode; got != http.StatusOK {
			t.Fatalf("%s at +0s: %d", acc.AccountID, got)
		}
	}
	advance(a, b, 30*time.Second)
	for _, acc := range []*simulator.Account{fixed, sliding} {
		if got := b.list(acc).StatusCode; got != http.StatusOK {
			t.Fatalf("%s at +30s: %d", acc.AccountID, got)
		}
	}
	advance(a, b, 30*time.Second)
	var got []int
	for _, acc := range []*simulator.Account{fixed, fixed, sliding, sliding} {
		got = append(got, b.list(acc).StatusCode)
	}
	if want := []int{200, 200, 200, 429}; !slices.Equal(got, want) {
		t.Fatalf("at +60s fixed, fixed, sliding, sliding: %v, want %v", got, want)
	}
	if h := rateHeaders(a.list(fixed)); h["Ratelimit"] == "" || h["X-Ratelimit-Limit"] != "" {
		t.Fatalf("the profile's account: headers %v, want RateLimit only", h)
	}
	if h := rateHeaders(a.list(sliding)); h["Ratelimit"] != "" || h["X-Ratelimit-Limit"] != "2" {
		t.Fatalf("a configured account: headers %v, want X-RateLimit-*", h)
	}
}

// advance moves the clocks of a and b (the same one when a is b).
func advance(a, b *harness, d time.Duration) {
	a.clock.Advance(d)
	if b != a {
		b.clock.Advance(d)
	}
}

// TestProfile_AccountPlaysItsOwn: a throwaway account made with a profile
// (POST /accounts {"profile": …}) plays it, here its window and its
// headers, while the configured accounts keep the server's; GET
// /accounts/{id} names its digest.
func TestProfile_AccountPlaysItsOwn(t *testing.T) {
	h := MustOpenServer(t, sim.Config{RateLimit: 2})
	own := playing("fixed-first", fixedFirstRatelimit)
	a := h.createAccount(map[string]any{"profile": profileJSON(t, own)})
	want := partnerapi.ProfileInfo(own).Digest
	if a.ProfileDigest != want || !strings.HasPrefix(want, "sha256:") {
		t.Fatalf("created profileDigest %q, want %q", a.ProfileDigest, want)
	}
	var info simulator.AccountInfo
	h.admin().GET("/accounts/" + a.AccountID).Expect().Status(http.StatusOK).JSON().Decode(&info)
	if info.ProfileDigest != want {
		t.Fatalf("GET /accounts/{id} profileDigest %q, want %q", info.ProfileDigest, want)
	}
	playsWindows(t, h, h, &a.Account, h.alpha)
}

// TestProfile_AccountProfileRefused: POST /accounts refuses a profile that
// Parse refuses, 400 with the reason, and makes no account.
func TestProfile_AccountProfileRefused(t *testing.T) {
	h := MustOpenServer(t, sim.Config{})
	good := string(profileJSON(t, profile.Default()))
	tests := []struct {
		name, profile, want string
	}{
		{"a window §8 cannot have", strings.Replace(good, `"value": "sliding"`, `"value": "rolling"`, 1), "rateLimit.window"},
		{"another version", strings.Replace(good, `"profileVersion": 1`, `"profileVersion": 9`, 1), "profileVersion"},
		{"an unknown choice", strings.Replace(good, `"rateLimit": {`, `"rateLimit": {"burst": {"value": 5},`, 1), "burst"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.profile == good {
				t.Fatal("the replacement changed nothing")
			}
			msg := h.admin().POST("/accounts").WithJSON(map[string]any{"profile": json.RawMessage(tt.profile)}).Expect().
				Status(http.StatusBadRequest).JSON().Object().Value("error").String().Raw()
			if !strings.Contains(msg, tt.want) {
				t.Fatalf("error %q, want one naming %q", msg, tt.want)
			}
		})
	}
	var list control.AccountsResponse
	h.admin().GET("/accounts").Expect().Status(http.StatusOK).JSON().Decode(&list)
	for _, a := range list.Accounts {
		if a.Throwaway {
			t.Fatalf("a refused profile made account %s", a.AccountID)
		}
	}
}

// TestProfile_AccountProfileAcrossReplicas: two replicas on one Redis; an
// account made with a profile through one plays it on the other, which
// reads the profile by its digest.
func TestProfile_AccountProfileAcrossReplicas(t *testing.T) {
	addr := os.Getenv("SIM_REDIS_ADDR")
	if addr == "" {
		t.Skip("set SIM_REDIS_ADDR=127.0.0.1:PORT to run against a real redis-server")
	}
	cfg := sim.Config{RateLimit: 2, RedisURL: "redis://" + addr + "/0",
		RedisPrefix: "simtest:profile:" + time.Now().Format("150405.000000000") + ":"}
	one, two := MustOpenServer(t, cfg), MustOpenServer(t, cfg)
	a := one.createAccount(map[string]any{"profile": profileJSON(t, playing("fixed-first", fixedFirstRatelimit))})
	t.Cleanup(func() { one.admin().POST("/reset").Expect() })
	playsWindows(t, one, two, &a.Account, one.alpha)
}

// TestProfile_BadRequestsAndLimitFirst: rateLimit.countsBadRequests and
// limitFirst, with a limit of 2. A bad request's body is one Campaign
// List refuses (limit as a string, under the default's wrongType).
func TestProfile_BadRequestsAndLimitFirst(t *testing.T) {
	const good, bad = false, true
	tests := []struct {
		name          string
		counts, first bool
		sends         []bool // good or bad, in order
		want          []int
	}{
		{"counted and the limit first (the default): a bad body spends a slot", true, true,
			[]bool{bad, good, good, bad}, []int{400, 200, 429, 429}},
		{"not counted: bad bodies spend nothing", false, true,
			[]bool{bad, bad, bad, good, good, good}, []int{400, 400, 400, 200, 200, 429}},
		{"not counted, the limit first: a spent budget answers 429 before the body", false, true,
			[]bool{good, good, bad}, []int{200, 200, 429}},
		{"the body first: a spent budget and a bad body answer 400", true, false,
			[]bool{good, good, bad, good}, []int{200, 200, 400, 429}},
		{"the body first and counted: a bad body spends a slot", true, false,
			[]bool{bad, good, good}, []int{400, 200, 429}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := MustOpenServer(t, sim.Config{RateLimit: 2, Profile: playing(tt.name, func(p *profile.Profile) {
				p.Rate.CountsBadRequests.Value, p.Rate.LimitFirst.Value = tt.counts, tt.first
			})})
			var got []int
			for _, b := range tt.sends {
				req := h.as(h.alpha).POST("/campaign/list").WithJSON(map[string]int{"limit": 1, "page": 1})
				if b {
					req = h.as(h.alpha).POST("/campaign/list").WithJSON(map[string]any{"limit": "x", "page": 1})
				}
				got = append(got, req.Expect().Raw().StatusCode)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("statuses %v, want %v", got, tt.want)
			}
		})
	}
}

// TestProfile_CountsUnauthenticated: with countsUnauthenticated, a 401
// whose key is an account's (wrong secret) spends that account's budget;
// without it (the default), it spends nothing.
func TestProfile_CountsUnauthenticated(t *testing.T) {
	for _, counts := range []bool{false, true} {
		t.Run("counts "+strconv.FormatBool(counts), func(t *testing.T) {
			h := MustOpenServer(t, sim.Config{RateLimit: 2, Profile: playing("401s", func(p *profile.Profile) {
				p.Rate.CountsUnauthenticated.Value = counts
			})})
			wrong := *h.alpha
			wrong.APISecret = "not-the-secret"
			for range 2 {
				if got := h.list(&wrong).StatusCode; got != http.StatusUnauthorized {
					t.Fatalf("wrong secret: %d, want 401", got)
				}
			}
			want := http.StatusOK
			if counts {
				want = http.StatusTooManyRequests
			}
			if got := h.list(h.alpha).StatusCode; got != want {
				t.Fatalf("after two 401s: %d, want %d", got, want)
			}
			if got := h.list(h.bravo).StatusCode; got != http.StatusOK {
				t.Fatalf("another account: %d, want 200", got)
			}
		})
	}
}

// TestProfile_Config: GET /config names the profile played.
func TestProfile_Config(t *testing.T) {
	for _, p := range []*profile.Profile{nil, playing("staging", nil)} {
		h := MustOpenServer(t, sim.Config{Profile: p})
		var cfg control.ConfigResponse
		h.admin().GET("/config").Expect().Status(http.StatusOK).JSON().Decode(&cfg)
		want := partnerapi.ProfileInfo(p)
		if cfg.Profile == nil || *cfg.Profile != *want {
			t.Fatalf("profile %+v, want %+v", cfg.Profile, want)
		}
	}
}

// TestProfile_LatencyDraw: the draw is the log-normal fitted to the
// sample's median and p99, capped at twice the p99 and at 20 s.
func TestProfile_LatencyDraw(t *testing.T) {
	r := rand.New(rand.NewPCG(20, 26))
	const n = 20000
	tests := []struct {
		name          string
		sample        profile.Sample
		median, p99   float64 // ms, within 5% and 10%
		maxMS, fixMS  float64 // the cap; a draw that never varies
		wantZeroDelay bool
	}{
		{name: "median 100 ms, p99 400 ms", sample: profile.Sample{N: 50, Median: 100, P99: 400}, median: 100, p99: 400, maxMS: 800},
		{name: "a tight sample", sample: profile.Sample{N: 50, Median: 20, P99: 25}, median: 20, p99: 25, maxMS: 50},
		{name: "a p99 below the median plays the median", sample: profile.Sample{N: 3, Median: 30, P99: 10}, fixMS: 30},
		{name: "no median: no delay", sample: profile.Sample{}, wantZeroDelay: true},
		{name: "never above 20 s", sample: profile.Sample{N: 9, Median: 15000, P99: 60000}, maxMS: 20000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			draws := make([]float64, n)
			for i := range draws {
				draws[i] = float64(partnerapi.LatencyDraw(tt.sample, r.NormFloat64())) / float64(time.Millisecond)
			}
			slices.Sort(draws)
			switch {
			case tt.wantZeroDelay:
				if draws[n-1] != 0 {
					t.Fatalf("largest draw %v ms, want 0", draws[n-1])
				}
				return
			case tt.fixMS > 0:
				if draws[0] != tt.fixMS || draws[n-1] != tt.fixMS {
					t.Fatalf("draws from %v to %v ms, want %v always", draws[0], draws[n-1], tt.fixMS)
				}
				return
			}
			if draws[n-1] > tt.maxMS {
				t.Fatalf("largest draw %v ms, above the cap %v", draws[n-1], tt.maxMS)
			}
			if tt.median > 0 {
				if got := draws[n/2]; math.Abs(got-tt.median) > 0.05*tt.median {
					t.Errorf("median %v ms, want %v ±5%%", got, tt.median)
				}
				if got := draws[n*99/100]; math.Abs(got-tt.p99) > 0.10*tt.p99 {
					t.Errorf("p99 %v ms, want %v ±10%%", got, tt.p99)
				}
			}
		})
	}
}

// vocabularyOf sets the statuses a profile learned.
func vocabularyOf(statuses ...profile.StatusColor) func(p *profile.Profile) {
	return func(p *profile.Profile) {
		p.Vocabulary.Statuses = profile.Choice[[]profile.StatusColor]{Value: statuses}
	}
}

// statusesOf returns the statuses of a's first page of campaigns.
func (h *harness) statusesOf(a *simulator.Account) map[string]string {
	var page struct {
		Campaigns []simulator.CampaignRecord `json:"campaigns"`
	}
	h.as(a).POST("/campaign/list").WithJSON(map[string]int{"limit": 50, "page": 1}).Expect().
		Status(http.StatusOK).JSON().Decode(&page)
	out := map[string]string{}
	for _, c := range page.Campaigns {
		out[c.Status] = c.StatusColor
	}
	return out
}

// TestProfile_Vocabulary: the seeded campaigns draw their statuses from
// the server's profile; a throwaway account's, from its own profile.
func TestProfile_Vocabulary(t *testing.T) {
	h := MustOpenServer(t, sim.Config{Profile: playing("server", vocabularyOf(profile.StatusColor{Status: "LIVE", Color: "#00AA00"}))})
	if got, want := h.statusesOf(h.alpha), map[string]string{"LIVE": "#00AA00"}; !equalMaps(got, want) {
		t.Fatalf("a configured account's statuses %v, want %v", got, want)
	}
	own := playing("own", vocabularyOf(profile.StatusColor{Status: "DONE", Color: "#0000AA"}, profile.StatusColor{Status: "HALTED", Color: "#AA0000"}))
	a := h.createAccount(map[string]any{"profile": profileJSON(t, own), "campaigns": 40})
	if got, want := h.statusesOf(&a.Account), map[string]string{"DONE": "#0000AA", "HALTED": "#AA0000"}; !equalMaps(got, want) {
		t.Fatalf("the throwaway account's statuses %v, want %v", got, want)
	}
	plain := h.createAccount(map[string]any{"campaigns": 10})
	if got, want := h.statusesOf(&plain.Account), map[string]string{"LIVE": "#00AA00"}; !equalMaps(got, want) {
		t.Fatalf("a throwaway account without a profile: statuses %v, want the server's %v", got, want)
	}
}

// TestProfile_Budget: GET /accounts/{id}/budget counts as the account's
// profile does: a fixed-clock window empties at the clock minute's end,
// where a sliding one still holds the requests of the last 60 s.
func TestProfile_Budget(t *testing.T) {
	h := MustOpenServer(t, sim.Config{RateLimit: 2})
	fixed := h.createAccount(map[string]any{"profile": profileJSON(t, playing("fixed-clock", func(p *profile.Profile) {
		p.Rate.Window.Value = profile.WindowFixedClock
	}))})
	h.clock.Advance(30 * time.Second) // 10:00:30
	for _, a := range []*simulator.Account{&fixed.Account, &fixed.Account, h.alpha, h.alpha} {
		if got := h.list(a).StatusCode; got != http.StatusOK {
			t.Fatalf("%s: %d", a.AccountID, got)
		}
	}
	h.clock.Advance(30 * time.Second) // 10:01:00, a new clock minute
	for _, tt := range []struct {
		a    *simulator.Account
		used int
	}{{&fixed.Account, 0}, {h.alpha, 2}} {
		if b := h.budget(tt.a.AccountID); b.Used != tt.used || b.Remaining != 2-tt.used {
			t.Errorf("%s budget %+v, want used %d", tt.a.AccountID, b, tt.used)
		}
	}
	if got := h.list(&fixed.Account).StatusCode; got != http.StatusOK {
		t.Fatalf("the fixed-clock account in a new minute: %d, want 200", got)
	}
}

// TestProfile_WindowModes: through the partner API, each rateLimit.window
// (and countsRefused) decides and dates its 429s as the profile says, with
// a limit of 2 and requests at 10:00:10 and 10:00:20.
func TestProfile_WindowModes(t *testing.T) {
	type step struct {
		at     time.Duration // after 10:00:00
		status int
		retry  string // Retry-After of a 429
	}
	tests := []struct {
		name    string
		window  string
		refused bool
		steps   []step
	}{
		{"sliding: one slot frees as each request leaves", profile.WindowSliding, false, []step{
			{30 * time.Second, 429, "40"}, {70 * time.Second, 200, ""}, {70 * time.Second, 429, "10"},
		}},
		{"sliding counting refusals: a retry counts, so a slot frees later", profile.WindowSliding, true, []step{
			// Counted: only once 10 and 20 have left is one of 2 free.
			{30 * time.Second, 429, "50"},
			// 10 left, but the refusal at 30 fills its place.
			{70 * time.Second, 429, "20"}, {90 * time.Second, 200, ""},
		}},
		{"fixed-clock: the clock minute's end frees both", profile.WindowFixedClock, false, []step{
			{30 * time.Second, 429, "30"}, {59 * time.Second, 429, "1"}, {60 * time.Second, 200, ""},
			{60 * time.Second, 200, ""}, {60 * time.Second, 429, "60"},
		}},
		{"fixed-first: the window the first request opened frees both at its end", profile.WindowFixedFirst, false, []step{
			{30 * time.Second, 429, "40"}, {70 * time.Second, 200, ""}, {70 * time.Second, 200, ""},
			{70 * time.Second, 429, "60"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := MustOpenServer(t, sim.Config{RateLimit: 2, Profile: playing(tt.name, func(p *profile.Profile) {
				p.Rate.Window.Value, p.Rate.CountsRefused.Value = tt.window, tt.refused
			})})
			at := time.Duration(0)
			moveTo := func(d time.Duration) {
				h.clock.Advance(d - at)
				at = d
			}
			for _, d := range []time.Duration{10 * time.Second, 20 * time.Second} {
				moveTo(d)
				if got := h.list(h.alpha).StatusCode; got != http.StatusOK {
					t.Fatalf("at +%v: %d, want 200", d, got)
				}
			}
			for i, s := range tt.steps {
				moveTo(s.at)
				resp := h.list(h.alpha)
				if resp.StatusCode != s.status || resp.Header.Get("Retry-After") != s.retry {
					t.Fatalf("step %d at +%v: %d Retry-After %q, want %d %q", i, s.at, resp.StatusCode,
						resp.Header.Get("Retry-After"), s.status, s.retry)
				}
			}
		})
	}
}

// TestProfile_ResetOfAFixedWindow: X-RateLimit-Reset on a 200 counts down
// to the end of a fixed window; a sliding window's is the whole window
// (the request just counted leaves then).
func TestProfile_ResetOfAFixedWindow(t *testing.T) {
	for _, tt := range []struct {
		window string
		want   []string // Reset at +0s and at +25s
	}{
		{profile.WindowFixedFirst, []string{"60", "35"}},
		{profile.WindowFixedClock, []string{"60", "35"}},
		{profile.WindowSliding, []string{"60", "60"}},
	} {
		t.Run(tt.window, func(t *testing.T) {
			h := MustOpenServer(t, sim.Config{RateLimit: 5, Profile: playing(tt.window, func(p *profile.Profile) {
				p.Rate.Window.Value = tt.window
				p.Rate.Headers.Value = profile.RateHeaders{Scheme: profile.SchemeXRateLimit, Reset: profile.ResetDelta,
					OnSuccess: []string{"X-Ratelimit-Reset"}}
			})})
			var got []string
			for _, d := range []time.Duration{0, 25 * time.Second} {
				h.clock.Advance(d)
				got = append(got, h.list(h.alpha).Header.Get("X-RateLimit-Reset"))
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("X-RateLimit-Reset %v, want %v", got, tt.want)
			}
		})
	}
}
