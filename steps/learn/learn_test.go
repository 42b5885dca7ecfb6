package learn

import (
	"encoding/json"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/internal/target"
)

func TestClassifyID(t *testing.T) {
	tests := []struct {
		name string
		ids  []string
		want profile.IDFormat
	}{
		{"a UUID", []string{"3f2b8c1e-5d4a-4b6f-9e2d-7a1c0b9d8e7f"}, profile.IDFormat{Kind: profile.IDUUID}},
		{"digits only, to the length", []string{"000123"}, profile.IDFormat{Kind: profile.IDNumeric, Digits: 6}},
		{"8 digits are not 12", []string{"20260001", "20260002"}, profile.IDFormat{Kind: profile.IDNumeric, Digits: 8}},
		{"24 lowercase hex digits alone (issue 28)", []string{"65f1c0ffee0123456789abcd"}, profile.IDFormat{Kind: profile.IDPrefixed, Digits: 24, Alphabet: profile.AlphabetHex}},
		{"upper-case hex digits alone", []string{"65F1C0FFEE0123456789ABCD"}, profile.IDFormat{Kind: profile.IDOpaque}},
		{"the simulator's ct_ and 24 hex digits", []string{"ct_9751cb572468e42fa6b3089c"}, profile.IDFormat{Kind: profile.IDPrefixed, Prefix: "ct_", Digits: 24, Alphabet: profile.AlphabetHex}},
		{"a counter after c-", []string{"c-000001", "c-000002"}, profile.IDFormat{Kind: profile.IDPrefixed, Prefix: "c-", Digits: 6, Alphabet: profile.AlphabetDecimal}},
		{"letters running into the digits", []string{"cid12345"}, profile.IDFormat{Kind: profile.IDPrefixed, Prefix: "cid", Digits: 5, Alphabet: profile.AlphabetDecimal}},
		{"a hex tail that happened to hold digits only, then one with a letter", []string{"ct_123456", "ct_12a456"}, profile.IDFormat{Kind: profile.IDPrefixed, Prefix: "ct_", Digits: 6, Alphabet: profile.AlphabetHex}},
		{"a short tail", []string{"ab-1"}, profile.IDFormat{Kind: profile.IDOpaque}},
		{"two kinds", []string{"c-000001", "3f2b8c1e-5d4a-4b6f-9e2d-7a1c0b9d8e7f"}, profile.IDFormat{Kind: profile.IDOpaque}},
		{"no tail at all", []string{"Zz_Qq"}, profile.IDFormat{Kind: profile.IDOpaque}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := idFormatOf(tt.ids)
			got.Example = ""
			if got != tt.want {
				t.Errorf("idFormatOf(%q) = %+v, want %+v", tt.ids, got, tt.want)
			}
		})
	}
}

func TestMessageField(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"the spec's message wins over a name", `{"message": "oops", "error": "Invalid API credentials"}`, "error"},
		{"a name that looks like a message", `{"code": "E1", "detail": "bad limit"}`, "detail"},
		{"the first string field", `{"n": 1, "what": "bad", "why": "x"}`, "what"},
		{"no string field", `{"n": 1}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keys, vals, ok := object([]byte(tt.body))
			if !ok {
				t.Fatalf("object(%s) not read", tt.body)
			}
			if got := messageField(keys, vals); got != tt.want {
				t.Errorf("messageField(%s) = %q, want %q", tt.body, got, tt.want)
			}
		})
	}
}

func TestFieldOf(t *testing.T) {
	x := &exch{status: 422, header: http.Header{"X-Request-Id": {"r-42"}}}
	tests := []struct {
		value      string
		wantType   string
		wantFormat string
	}{
		{`"3f2b8c1e-5d4a-4b6f-9e2d-7a1c0b9d8e7f"`, "string", profile.FormatUUID},
		{`"2026-11-25T02:00:00Z"`, "string", profile.FormatDateTime},
		{`"r-42"`, "string", profile.FormatEchoRequestID},
		{`"v1"`, "string", ""},
		{`422`, "integer", profile.FormatStatus},
		{`400`, "integer", ""},
		{`1.5`, "number", ""},
		{`true`, "boolean", ""},
		{`null`, "null", ""},
		{`[1]`, "array", ""},
		{`{"a": 1}`, "object", ""},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			f := fieldOf("f", json.RawMessage(tt.value), x)
			if f.Type != tt.wantType || f.Format != tt.wantFormat {
				t.Errorf("fieldOf(%s) = %s/%q, want %s/%q", tt.value, f.Type, f.Format, tt.wantType, tt.wantFormat)
			}
			if (f.Format == "") != (f.Example != nil) {
				t.Errorf("fieldOf(%s): example %s with format %q: an example is kept only for a fixed value", tt.value, f.Example, f.Format)
			}
		})
	}
}

func TestRateHeaders(t *testing.T) {
	tests := []struct {
		name        string
		ok, refused http.Header
		want        profile.RateHeaders
	}{
		{"none", http.Header{}, http.Header{}, profile.RateHeaders{Scheme: profile.SchemeNone}},
		{"X-RateLimit with an epoch reset",
			http.Header{"X-Ratelimit-Limit": {"100"}, "X-Ratelimit-Reset": {"1795000000"}},
			http.Header{"X-Ratelimit-Limit": {"100"}, "Retry-After": {"3"}},
			profile.RateHeaders{Scheme: profile.SchemeXRateLimit, OnSuccess: []string{"X-Ratelimit-Limit", "X-Ratelimit-Reset"}, OnRefusal: []string{"Retry-After", "X-Ratelimit-Limit"}, Reset: profile.ResetEpoch}},
		{"X-RateLimit with a delta reset",
			http.Header{"X-Ratelimit-Reset": {"42"}}, http.Header{},
			profile.RateHeaders{Scheme: profile.SchemeXRateLimit, OnSuccess: []string{"X-Ratelimit-Reset"}, Reset: profile.ResetDelta}},
		{"the IETF draft's",
			http.Header{"Ratelimit": {"r=1"}, "Ratelimit-Policy": {"q=100"}}, http.Header{"Retry-After": {"2"}},
			profile.RateHeaders{Scheme: profile.SchemeRateLimit, OnSuccess: []string{"Ratelimit", "Ratelimit-Policy"}, OnRefusal: []string{"Retry-After"}}},
		{"Retry-After alone is no scheme", http.Header{}, http.Header{"Retry-After": {"2"}},
			profile.RateHeaders{Scheme: profile.SchemeNone, OnRefusal: []string{"Retry-After"}}},
		{"another", http.Header{"X-Rate-Limit-Left": {"5"}}, http.Header{},
			profile.RateHeaders{Scheme: profile.SchemeOther, OnSuccess: []string{"X-Rate-Limit-Left"}}},
	}
	l := &learner{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := l.rateHeaders(&exch{status: 200, header: tt.ok}, &exch{status: 429, header: tt.refused}).Value
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(tt.want)
			if string(g) != string(w) {
				t.Errorf("rateHeaders = %s, want %s", g, w)
			}
		})
	}
}

// TestRateRead: every combination of answers the rate-limit probe can
// meet reads as the window and counts they mean, or Unknown ("?").
func TestRateRead(t *testing.T) {
	const limit = 100
	x := func(status int) *exch {
		if status == 0 {
			return nil
		}
		return &exch{status: status, header: http.Header{}}
	}
	xs := func(status, n int) []*exch {
		var out []*exch
		for range n {
			out = append(out, x(status))
		}
		return out
	}
	str := func(c profile.Choice[bool]) string {
		if !c.Known() {
			return "?"
		}
		if c.Value {
			return "yes"
		}
		return "no"
	}
	tests := []struct {
		name                              string
		valid, limitFirst                 int
		mid, afterClock, after1, after2   int
		window                            string
		refused, bad, unauth, limitFirstW string
	}{
		{"the clock's next window serves", 99, 429, 429, 200, 0, 0, profile.WindowFixedClock, "?", "no", "no", "yes"},
		{"sliding, refused requests not counted, 400s counted", 94, 429, 429, 429, 200, 429, profile.WindowSliding, "no", "yes", "no", "yes"},
		{"sliding, refused requests counted, 401s counted", 97, 429, 429, 429, 429, 429, profile.WindowSliding, "yes", "no", "yes", "yes"},
		{"a window from the first request, everything counted", 92, 429, 429, 429, 200, 200, profile.WindowFixedFirst, "?", "yes", "yes", "yes"},
		{"the body checked first with the budget spent", 99, 400, 429, 429, 200, 429, profile.WindowSliding, "no", "no", "no", "no"},
		{"a 400 with the budget spent may have counted", 94, 400, 429, 429, 429, 429, profile.WindowSliding, "?", "yes", "no", "no"},
		{"no count fits", 50, 429, 429, 200, 0, 0, profile.WindowFixedClock, "?", "?", "?", "yes"},
		{"a 500 after the boundary", 99, 429, 429, 500, 0, 0, "?", "?", "no", "no", "yes"},
		{"served, then a 500", 99, 429, 429, 429, 200, 500, "?", "?", "no", "no", "yes"},
		{"served late in the window: a token bucket", 60, 429, 200, 200, 0, 0, "?", "?", "?", "?", "yes"},
		{"a 503 for the invalid body", 99, 503, 429, 200, 0, 0, profile.WindowFixedClock, "?", "no", "no", "?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := &learner{env: Env{RateLimit: limit, RateWindow: time.Minute}, p: &profile.Profile{}}
			l.rateRead(&rateRun{first: x(200), unauth: xs(401, 2), bad: xs(400, 5), valid: tt.valid, refused: x(429),
				limitFirst: x(tt.limitFirst), mid: x(tt.mid), afterClock: x(tt.afterClock), after1: x(tt.after1), after2: x(tt.after2)})
			r := l.p.Rate
			window := r.Window.Value
			if !r.Window.Known() {
				window = "?"
			}
			got := []string{window, str(r.CountsRefused), str(r.CountsBadRequests), str(r.CountsUnauthenticated), str(r.LimitFirst)}
			want := []string{tt.window, tt.refused, tt.bad, tt.unauth, tt.limitFirstW}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("window, countsRefused, countsBadRequests, countsUnauthenticated, limitFirst = %q, want %q", got, want)
			}
			if err := l.p.Rate.Window; err.Known() && len(err.Evidence) == 0 {
				t.Error("a known window without evidence")
			}
		})
	}
}

func TestSample(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		var out []time.Duration
		for _, n := range v {
			out = append(out, time.Duration(n)*time.Millisecond)
		}
		return out
	}
	tests := []struct {
		name string
		in   []time.Duration
		want profile.Sample
	}{
		{"none", nil, profile.Sample{}},
		{"one", ms(7), profile.Sample{N: 1, Median: 7, P99: 7}},
		{"an even count", ms(4, 1, 3, 2), profile.Sample{N: 4, Median: 2.5, P99: 4}},
		{"a slow outlier", ms(1, 1, 1, 1, 900), profile.Sample{N: 5, Median: 1, P99: 900}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sample(tt.in); got != tt.want {
				t.Errorf("sample = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestServedSample: below 100 answers the p99 is the fitted log-normal's,
// close to the true one where the largest answer is not; from 100 on it
// is the sample's own.
func TestServedSample(t *testing.T) {
	// Draws of a log-normal with median 40 ms and p99 120 ms, at evenly
	// spaced quantiles (no randomness: the test is the same every run).
	draws := func(n int) []time.Duration {
		sigma := math.Log(120.0/40) / 2.326
		var out []time.Duration
		for i := range n {
			z := math.Sqrt2 * math.Erfinv(2*(float64(i)+0.5)/float64(n)-1)
			out = append(out, time.Duration(40*math.Exp(sigma*z)*float64(time.Millisecond)))
		}
		return out
	}
	for _, tt := range []struct {
		n        int
		min, max float64 // the p99 wanted, ms
	}{
		{10, 100, 140}, // the largest of 10 is about 84 ms: the fit, not it
		{40, 105, 135},
		{200, 100, 140}, // the sample's own
	} {
		got := servedSample(draws(tt.n))
		if got.N != tt.n || got.Median < 36 || got.Median > 44 || got.P99 < tt.min || got.P99 > tt.max {
			t.Errorf("%d answers: %+v, want the median near 40 and p99 within [%g, %g]", tt.n, got, tt.min, tt.max)
		}
	}
	if got, want := servedSample(draws(10)).P99, sample(draws(10)).P99; got <= want {
		t.Errorf("10 answers: p99 %g is not above the largest answer (%g): no fit", got, want)
	}
	if got, want := servedSample(draws(200)), sample(draws(200)); got != want {
		t.Errorf("200 answers: %+v, want the sample's own %+v", got, want)
	}
}

// TestSanitize: an observation Check refuses makes its choice Unknown,
// saying what was seen; the other choices stay.
func TestSanitize(t *testing.T) {
	p := profile.Default()
	p.Auth.MissingAccount.Value = profile.Outcome{Status: 400, Message: "x-account-id is required"}
	p.Contact.Validation.Value["gender.value"] = profile.Outcome{Status: 500, Message: "boom"}
	p.HTTP.ResponseContentType.Value = "text/html"
	sanitize(p)
	if err := p.Check(); err != nil {
		t.Fatalf("after sanitize: %v", err)
	}
	for name, c := range map[string]string{
		"auth.missingAccount": p.Auth.MissingAccount.Unknown, "contact.validation": p.Contact.Validation.Unknown,
		"http.responseContentType": p.HTTP.ResponseContentType.Unknown,
	} {
		if !strings.Contains(c, name) {
			t.Errorf("%s: unknown %q, want the problem Check found", name, c)
		}
	}
	if !p.Auth.CredentialsFirst.Known() || !p.Rate.Window.Known() {
		t.Error("sanitize forgot choices Check accepts")
	}
}

// TestFlatObject: an error body's nested objects become dotted paths in
// the body's order, and the message is found inside them.
func TestFlatObject(t *testing.T) {
	for _, tc := range []struct {
		body, message string
		keys          []string
	}{
		{`{"error":"Invalid API credentials"}`, "Invalid API credentials", []string{"error"}},
		{`{"error":{"code":401,"message":"Invalid API credentials"},"requestId":"r"}`, "Invalid API credentials", []string{"error.code", "error.message", "requestId"}},
		{`{"a":{"b":{"detail":"deep"}},"e":{}}`, "deep", []string{"a.b.detail", "e"}},
		{`[1]`, "", nil},
	} {
		keys, _, _ := flatObject([]byte(tc.body))
		if !slices.Equal(keys, tc.keys) {
			t.Errorf("%s: keys %q, want %q", tc.body, keys, tc.keys)
		}
		if got := messageOf([]byte(tc.body)); got != tc.message {
			t.Errorf("%s: message %q, want %q", tc.body, got, tc.message)
		}
	}
}

// TestPacedBodies: the paced sample's body of each operation, none where
// the run has nothing to send, and a loud refusal of an operation outside
// spec's table. That every operation has a body is spec's
// TestEveryOperationHasABody.
func TestPacedBodies(t *testing.T) {
	if _, _, err := (&learner{}).pacedBody(spec.Operation{Name: "Contact Delete", Path: "contact/delete"}, 0); err == nil || !strings.Contains(err.Error(), `"Contact Delete"`) {
		t.Errorf("an operation without a body: err = %v, want one naming it", err)
	}
	type sent struct {
		body string
		ok   bool
	}
	for _, tt := range []struct {
		name     string
		l        *learner
		i        int
		add      sent
		list     sent
		stats    sent
		emailsTo int
	}{
		{"a run that writes, with campaigns", &learner{env: Env{Target: target.Target{RunID: "r", EmailDomain: "x.test"}}, campaignIDs: []int{4, 9}}, 3,
			sent{`{"email": "learn-r-1@x.test"}`, true}, sent{listBody, true}, sent{`{"campaignId": 9}`, true}, 1},
		{"a read-only run without campaigns", &learner{env: Env{Target: target.Target{ReadOnly: true}}}, 0,
			sent{}, sent{listBody, true}, sent{}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for path, want := range map[string]sent{spec.PathContactAdd: tt.add, spec.PathCampaignList: tt.list, spec.PathCampaignStats: tt.stats} {
				op, err := spec.OperationAt(path)
				if err != nil {
					t.Fatal(err)
				}
				body, ok, err := tt.l.pacedBody(op, tt.i)
				if got := (sent{body, ok}); got != want || err != nil {
					t.Errorf("%s: %+v, %v, want %+v", path, got, err, want)
				}
			}
			if tt.l.emails != tt.emailsTo {
				t.Errorf("%d addresses used, want %d", tt.l.emails, tt.emailsTo)
			}
		})
	}
}
