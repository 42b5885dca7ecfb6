package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// choiceValues is every choice of p by its path ("auth.missingAccount"):
// its value as JSON, or "" when Unknown. Evidence and Source are left out.
func choiceValues(t *testing.T, p *profile.Profile) map[string]string {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for section, v := range m {
		obj, ok := v.(map[string]any)
		if !ok || section == "source" {
			continue
		}
		for name, c := range obj {
			co, _ := c.(map[string]any)
			if u, _ := co["unknown"].(string); u != "" {
				out[section+"."+name] = ""
				continue
			}
			vb, _ := json.Marshal(co["value"])
			out[section+"."+name] = string(vb)
		}
	}
	return out
}

// learnWith runs `conformance profile` with args and reads the file.
func learnWith(t *testing.T, args []string) (*profile.Profile, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "deployment-profile.json")
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), append(append([]string{"profile"}, args...), "--out", out), &stdout, &stderr)
	if code != exitPass {
		t.Fatalf("conformance profile: exit status %d, want 0\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	p, err := profile.Load(out)
	if err != nil {
		t.Fatalf("the learned profile does not load: %v", err)
	}
	return p, stdout.String() + stderr.String()
}

// update rewrites fixtures/profile/default.json from the simulator's
// learned profile: go test -run TestLearnSimulatorMatchesDefault
// ./cmd/conformance -update.
var update = flag.Bool("update", false, "rewrite fixtures/profile/default.json from the simulator's learned profile")

// TestLearnSimulatorMatchesDefault learns the simulator (its control API
// skips the rate-limit windows) and holds default.json, the profile the
// simulator plays by default, to it: every choice the same, messages word
// for word, none left unknown but latency and vocabulary (which the
// default leaves to the seed and to no delay). default.json is that
// learned profile, evidence included (-update writes it).
func TestLearnSimulatorMatchesDefault(t *testing.T) {
	s := MustOpenSimulator(t)
	p, log := learnWith(t, simulatorArgs(t, s))
	if *update {
		writeDefaultProfile(t, p)
		return // the embedded default.json is the old one until the next build
	}
	cmp := profile.Compare(profile.Default(), p)
	diffs := disagreements(cmp, "default.json", "learned")
	for _, r := range cmp.Rows {
		if r.Verdict == profile.VerdictNotCompared && r.AUnknown != "" && !defaultUnknown(r.Choice) {
			diffs = append(diffs, fmt.Sprintf("%s: unknown in default.json (%s)", r.Choice, r.AUnknown))
		}
	}
	if len(diffs) > 0 {
		t.Errorf("default.json is not what the simulator answers, in %d choices (go test -run %s ./cmd/conformance -update rewrites it):\n  %s\n%s",
			len(diffs), t.Name(), strings.Join(diffs, "\n  "), log)
	}
	if p.Source.Requests == 0 || p.Source.Target == "" || p.Source.Took == 0 {
		t.Errorf("source %+v: want the target, the requests and the time", p.Source)
	}
	t.Logf("learned in %s with %d requests", time.Duration(p.Source.Took), p.Source.Requests)
}

// defaultUnknown reports whether default.json leaves choice unknown on
// purpose: its latency (the simulator answers at once unless
// --profile-latency) and its vocabulary (simulator/seed draws its own; a
// known one would change every seeded campaign).
func defaultUnknown(choice string) bool {
	return strings.HasPrefix(choice, "latency.") || strings.HasPrefix(choice, "vocabulary.")
}

// writeDefaultProfile writes learned as default.json: its source only
// named, latency and vocabulary unknown with the reason.
func writeDefaultProfile(t *testing.T, learned *profile.Profile) {
	t.Helper()
	d := *learned
	d.Schema = profile.SchemaID
	d.Source = profile.Source{Name: "simulator default"}
	const seed = "the simulator's seed draws its own vocabulary (simulator/seed)"
	d.Latency.Operations = profile.Choice[map[string]profile.OperationLatency]{Unknown: "the simulator answers at once unless --profile-latency plays a learned latency"}
	d.Vocabulary = profile.Vocabulary{
		Statuses: profile.Choice[[]profile.StatusColor]{Unknown: seed}, TimeZones: profile.Choice[[]string]{Unknown: seed},
		Reasons: profile.Choice[[]string]{Unknown: seed}, AutoResend: profile.Choice[[]int]{Unknown: seed},
	}
	b, err := d.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := profile.Parse(b); err != nil {
		t.Fatalf("the default to write does not parse: %v", err)
	}
	if err := os.WriteFile(filepath.Join("..", "..", "fixtures", "profile", "default.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Log("rewrote fixtures/profile/default.json")
}

func unknownOf(p *profile.Profile, name string) string {
	return profileUnknowns(p)[name]
}

// jsonEqual compares two JSON texts by value.
func jsonEqual(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return a == b
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// startAlt serves one altService over HTTPS and returns the runner flags
// that learn it: the primary account, its certificate, the short window.
func startAlt(t *testing.T, opts altOptions) []string {
	t.Helper()
	accounts := altAccounts(t)
	srv := serveTLS(t, newAltService(accounts, altLimit, altWindow, opts, altDefect{}), opts.HTTP2)
	a := accounts[0]
	return []string{"--base-url", srv.URL + spec.BasePath, "--ca-cert", writeCert(t, srv),
		"--api-key", a.APIKey, "--api-secret", a.APISecret, "--account-id", a.AccountID,
		"--rate-limit", fmt.Sprint(altLimit), "--rate-window", altWindow.String()}
}

// withoutExamples drops the "example" members of a JSON value: a value
// seen, not the choice.
func withoutExamples(v string) string { return without(v, "example") }

// without drops the members named keys, at any depth, of a JSON value.
func without(v string, keys ...string) string {
	var x any
	if json.Unmarshal([]byte(v), &x) != nil {
		return v
	}
	var strip func(any) any
	strip = func(x any) any {
		switch x := x.(type) {
		case map[string]any:
			for _, k := range keys {
				delete(x, k)
			}
			for k, v := range x {
				x[k] = strip(v)
			}
		case []any:
			for i, v := range x {
				x[i] = strip(v)
			}
		}
		return x
	}
	b, _ := json.Marshal(strip(x))
	return string(b)
}

// TestLearnAlternative learns independent implementations whose choices
// differ (altOptions) and checks each learned choice against what the
// options mean. "" wants the choice Unknown.
func TestLearnAlternative(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for rate-limit windows")
	}
	const (
		refuse422 = `{"status":422,"message":"limit must be an integer from 1 to 50, page an integer from 1"}`
		codeBody  = `{"messageField":"message","fields":[{"name":"code","type":"integer","format":"status"}],"contentType":"application/json"}`
	)
	tests := []struct {
		name string
		opts altOptions
		want map[string]string
	}{
		{"the zero options: {message, code} errors, 401 without an account, 422 for a bad page, c-000001 ids, new ids for duplicates, 404 for an unknown campaign, clock-aligned windows counting refused requests, no rate headers",
			altOptions{}, map[string]string{
				// 403: auth.checkOrder's probe of an unknown account (issue 28).
				"errors.bodies":                   `{"400":` + codeBody + `,"401":` + codeBody + `,"403":` + codeBody + `,"404":` + codeBody + `,"422":` + codeBody + `}`,
				"auth.missingAccount":             `{"status":401,"message":"Invalid API credentials"}`,
				"auth.credentialsFirst":           `true`,
				"contact.contactId":               `{"kind":"prefixed","prefix":"c-","digits":6,"alphabet":"decimal"}`,
				"contact.duplicateEmail":          `{"answer":"new-id"}`,
				"contact.duplicatePhone":          `{"answer":"new-id"}`,
				"campaignList.limitAboveMax":      refuse422,
				"campaignList.limitBelowOne":      refuse422,
				"campaignList.pageBelowOne":       refuse422,
				"campaignList.limitMissing":       refuse422,
				"campaignList.pageMissing":        refuse422,
				"campaignList.wrongType":          refuse422,
				"campaignList.extraField":         `{"status":200,"pageSize":5,"pageNo":1}`,
				"campaignList.pastLast":           `{"status":200,"echo":true}`,
				"campaignList.filtered":           `"all"`,
				"campaignList.order":              `"id-asc"`,
				"campaignStats.unknown":           `{"status":404,"message":"Campaign not found"}`,
				"campaignStats.numericString":     `{"status":400,"message":"{field} must be an integer"}`,
				"campaignStats.extraField":        `{"status":200}`,
				"rateLimit.window":                `"fixed-clock"`,
				"rateLimit.countsRefused":         ``,
				"rateLimit.countsBadRequests":     `true`,
				"rateLimit.countsUnauthenticated": `false`,
				"rateLimit.limitFirst":            `true`,
				"rateLimit.retryAfter":            `{"present":false}`,
				"rateLimit.headers":               `{"scheme":"none"}`,
				"http.unknownPath":                `{"status":404,"message":"No such operation"}`,
				"http.otherMethod":                `{"status":404,"message":"No such operation"}`,
				"http.requestContentType":         `{"status":200}`,
				"http.bodyLimit":                  `{"accepted":4194304}`,
				"http.responseContentType":        `"application/json"`,
				"http.successFields":              `{}`,
				"http.http2":                      `false`,
				"http.gzip":                       `false`,
				"vocabulary.statuses":             `[{"status":"Draft","color":"#9E9E9E"},{"status":"Paused","color":"#ffa000"},{"status":"Scheduled","color":"#0af"},{"status":"Sent","color":"#2e7d32"}]`,
				"vocabulary.timeZones":            `["CET","EST","IST","UTC"]`,
				"vocabulary.reasons":              `["paused by the partner"]`,
				"vocabulary.autoResend":           `[0,1,2]`,
			}},
		{"requestId UUIDs in errors, 403 without an account, clamping, UUID ids kept for duplicates, zeros for an unknown campaign, newest first without deleted campaigns, sliding windows counting refused requests, X-RateLimit headers, HTTP/2",
			altOptions{ErrorID: true, MissingAccount403: true, Clamp: true, UUIDs: true, SameContact: true, UnknownZero: true,
				NewestFirst: true, HideDeleted: true, Sliding: true, RateHeaders: "x-ratelimit", HTTP2: true}, map[string]string{
				"errors.bodies":                   `{"400":{"messageField":"message","fields":[{"name":"code","type":"integer","format":"status"},{"name":"requestId","type":"string","format":"uuid"}],"contentType":"application/json"},"401":{"messageField":"message","fields":[{"name":"code","type":"integer","format":"status"},{"name":"requestId","type":"string","format":"uuid"}],"contentType":"application/json"},"403":{"messageField":"message","fields":[{"name":"code","type":"integer","format":"status"},{"name":"requestId","type":"string","format":"uuid"}],"contentType":"application/json"},"404":{"messageField":"message","fields":[{"name":"code","type":"integer","format":"status"},{"name":"requestId","type":"string","format":"uuid"}],"contentType":"application/json"},"422":{"messageField":"message","fields":[{"name":"code","type":"integer","format":"status"},{"name":"requestId","type":"string","format":"uuid"}],"contentType":"application/json"}}`,
				"auth.missingAccount":             `{"status":403,"message":"Unauthorized account access"}`,
				"contact.contactId":               `{"kind":"uuid"}`,
				"contact.duplicateEmail":          `{"answer":"same-id"}`,
				"contact.duplicatePhone":          `{"answer":"same-id"}`,
				"campaignList.limitAboveMax":      `{"status":200,"pageSize":50,"pageNo":1}`,
				"campaignList.limitBelowOne":      refuse422,
				"campaignList.pageBelowOne":       `{"status":200,"pageSize":5,"pageNo":1}`,
				"campaignList.limitMissing":       `{"status":200,"pageSize":10,"pageNo":1}`,
				"campaignList.pageMissing":        `{"status":200,"pageSize":5,"pageNo":1}`,
				"campaignList.filtered":           `"active"`,
				"campaignList.order":              `"id-desc"`,
				"campaignStats.unknown":           `{"status":200}`,
				"rateLimit.window":                `"sliding"`,
				"rateLimit.countsRefused":         `true`,
				"rateLimit.countsBadRequests":     `true`,
				"rateLimit.countsUnauthenticated": `false`,
				"rateLimit.retryAfter":            `{"present":true,"format":"delta-seconds"}`,
				"rateLimit.headers":               `{"scheme":"x-ratelimit","onSuccess":["X-Ratelimit-Limit","X-Ratelimit-Remaining","X-Ratelimit-Reset"],"onRefusal":["Retry-After","X-Ratelimit-Limit","X-Ratelimit-Remaining","X-Ratelimit-Reset"],"reset":"epoch-seconds"}`,
				"http.http2":                      `true`,
			}},
		{"sliding windows sparing refused requests, RateLimit-Policy headers",
			altOptions{Sliding: true, FreeRefused: true, RateHeaders: "policy"}, map[string]string{
				"rateLimit.window":        `"sliding"`,
				"rateLimit.countsRefused": `false`,
				"rateLimit.headers":       `{"scheme":"ratelimit","onSuccess":["Ratelimit","Ratelimit-Policy"],"onRefusal":["Ratelimit","Ratelimit-Policy","Retry-After"]}`,
				"rateLimit.retryAfter":    `{"present":true,"format":"delta-seconds"}`,
			}},
		{"windows from the first request after the last one",
			altOptions{FirstWindow: true, FreeRefused: true}, map[string]string{
				"rateLimit.window":        `"fixed-first"`,
				"rateLimit.countsRefused": ``,
			}},
		{"extra fields, gzip and a charset",
			altOptions{Extras: true}, map[string]string{
				"http.gzip":                `true`,
				"http.responseContentType": `"application/json; charset=utf-8"`,
				"http.successFields":       `{"campaign/list":[{"name":"apiVersion","type":"string"},{"format":"id","id":{"alphabet":"decimal","digits":19,"kind":"prefixed","prefix":"req-"},"name":"requestId","type":"string"}],"campaign/stats":[{"format":"echo","name":"campaignId","type":"integer"},{"format":"id","id":{"alphabet":"decimal","digits":19,"kind":"prefixed","prefix":"req-"},"name":"requestId","type":"string"}],"contact/add":[{"format":"id","id":{"alphabet":"decimal","digits":19,"kind":"prefixed","prefix":"req-"},"name":"requestId","type":"string"},{"format":"id","id":{"alphabet":"decimal","digits":6,"kind":"prefixed","prefix":"t-c-"},"name":"traceId","type":"string"}]}`,
				"http.recordFields":        `{"campaign/list":{"campaigns[]":[{"name":"tags","type":"array"},{"name":"updatedBy","type":"string"}]},"campaign/stats":{"emailStat":[{"name":"Forwarded","type":"integer"}],"smsStat":[{"name":"Pending","type":"integer"}]}}`,
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, log := learnWith(t, startAlt(t, tt.opts))
			got := choiceValues(t, p)
			for name, want := range tt.want {
				g, ok := got[name]
				switch {
				case !ok:
					t.Errorf("%s: not in the profile", name)
				case want == "" && g != "":
					t.Errorf("%s = %s, want unknown", name, g)
				case want != "" && g == "":
					t.Errorf("%s unknown (%s), want %s", name, unknownOf(p, name), want)
				case want != "" && !jsonEqual(withoutExamples(g), want):
					t.Errorf("%s =\n  %s\nwant\n  %s", name, withoutExamples(g), want)
				}
			}
			if t.Failed() {
				t.Log(log)
			}
		})
	}
}

// TestLearnSimulatorAtTheSpecsLimit measures learning at the spec's limit
// (100 per minute, §8) without the control API, so every window is waited
// for: several minutes, so only with CONFORMANCE_MEASURE_LEARN=1.
func TestLearnSimulatorAtTheSpecsLimit(t *testing.T) {
	if os.Getenv("CONFORMANCE_MEASURE_LEARN") == "" {
		t.Skip("takes minutes: set CONFORMANCE_MEASURE_LEARN=1")
	}
	s := MustOpenSimulator(t)
	p, log := learnWith(t, withoutFlags(simulatorArgs(t, s), "--admin-url", "--admin-token"))
	t.Logf("learned at %d per %s in %s with %d requests\n%s", p.Source.RateLimit, time.Duration(p.Source.RateWindow), time.Duration(p.Source.Took), p.Source.Requests, log)
	if w := p.Rate.Window; !w.Known() || w.Value != profile.WindowSliding {
		t.Errorf("rate window %+v, want sliding", w)
	}
}

// TestLearnAfterRun: a run learns the profile after its scenarios and
// writes profile.json, whose digest the certificate records; --no-profile
// writes neither, and neither changes the verdict.
func TestLearnAfterRun(t *testing.T) {
	s := MustOpenSimulator(t)
	base := simulatorArgs(t, s)
	base = slices.DeleteFunc(base, func(a string) bool { return a == "--no-profile" })
	tests := []struct {
		name        string
		args        []string
		wantProfile bool
	}{
		{"an ordinary run writes profile.json", nil, true},
		{"--no-profile writes none", []string{"--no-profile"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append(slices.Clone(base), "--tags", "@normative && @rule-auth-key", "--format", "progress", "--report-dir", dir)
			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), append(args, tt.args...), &stdout, &stderr); code != exitPass {
				t.Fatalf("exit status %d, want 0\n%s\n%s", code, stdout.String(), stderr.String())
			}
			b, err := os.ReadFile(filepath.Join(dir, "profile.json"))
			if got := err == nil; got != tt.wantProfile {
				t.Fatalf("profile.json written: %v, want %v (%v)", got, tt.wantProfile, err)
			}
			cert, err := os.ReadFile(filepath.Join(dir, "certificate.json"))
			if err != nil {
				t.Fatal(err)
			}
			var env struct {
				Certificate struct {
					ProfileDigest string `json:"profileDigest"`
				} `json:"certificate"`
			}
			if err := json.Unmarshal(cert, &env); err != nil {
				t.Fatal(err)
			}
			want := ""
			if tt.wantProfile {
				want = profile.Digest(b)
				p, err := profile.Parse(b)
				if err != nil {
					t.Fatalf("profile.json: %v", err)
				}
				if p.Rate.Window.Value != profile.WindowSliding {
					t.Errorf("learned window %+v, want sliding", p.Rate.Window)
				}
				for _, a := range devAccounts(t)[:1] {
					for _, secret := range []string{a.APIKey, a.APISecret, a.AccountID} {
						if bytes.Contains(b, []byte(secret)) {
							t.Errorf("profile.json holds a credential unmasked")
						}
					}
				}
			}
			if got := env.Certificate.ProfileDigest; got != want {
				t.Errorf("certificate profileDigest %q, want %q", got, want)
			}
			if got := readSummary(t, dir).ProfileDigest; got != want {
				t.Errorf("summary profileDigest %q, want %q", got, want)
			}
			if got := strings.Contains(stdout.String(), "deployment profile: "); got != tt.wantProfile {
				t.Errorf("the verdict block names profile.json: %v, want %v\n%s", got, tt.wantProfile, stdout.String())
			}
		})
	}
}

// TestLearnCouldNotRunExits2: conformance profile exits 2 with the fix
// when it cannot learn, as the runner does, and writes no file.
func TestLearnCouldNotRunExits2(t *testing.T) {
	s := MustOpenSimulator(t)
	good := simulatorArgs(t, s)
	with := func(flag, v string) []string {
		args := slices.Clone(good)
		args[slices.Index(args, flag)+1] = v
		return args
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no credentials", []string{"--base-url", s.URL(), "--ca-cert", s.Cert.CertFile}, "configuration error"},
		{"a wrong secret", with("--api-secret", "wrong"), "check --api-key, --api-secret"},
		{"an unknown flag", append(slices.Clone(good), "--bogus"), "usage error"},
		{"an image", append(slices.Clone(good), "--image", "x"), "--image is not supported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "p.json")
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), append(append([]string{"profile"}, tt.args...), "--out", out), &stdout, &stderr)
			if code != exitUsage || !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr.String(), tt.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("a profile was written")
			}
		})
	}
}
