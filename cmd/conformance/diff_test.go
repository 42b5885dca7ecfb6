package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/steps/suite"
)

// writeProfile writes p, changed by edit, to a file in dir.
func writeProfile(t *testing.T, dir, name string, edit func(p *profile.Profile)) string {
	t.Helper()
	p := profile.Default()
	edit(p)
	data, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// runDiff runs conformance diff with an empty environment.
func runDiff(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = diff(context.Background(), args, &out, &errb, func(string) string { return "" })
	return code, out.String(), errb.String()
}

// differing returns the choices the text output lists as differing.
func differing(stdout string) []string {
	var out []string
	for line := range strings.SplitSeq(stdout, "\n") {
		if rest, ok := strings.CutPrefix(line, "DIFFER "); ok {
			out = append(out, strings.Fields(rest)[0])
		}
	}
	return out
}

// staging is a deployment that clamps limit and answers 404 for an
// unknown path with another message.
func staging(p *profile.Profile) {
	p.Source = profile.Source{Name: "staging", Target: "https://staging.example/v3/partner/webhook"}
	p.List.LimitAboveMax = profile.Choice[profile.Outcome]{
		Value: profile.Outcome{Status: 200, PageSize: 50, PageNo: 1},
		Evidence: []profile.Exchange{{
			Request:  profile.Message{Method: "POST", Path: "/v3/partner/webhook/campaign/list", Body: `{"limit":80,"page":1}`},
			Response: profile.Message{Status: 200, Body: `{"pageNo":1,"pageSize":50}`},
		}},
	}
	p.HTTP.UnknownPath.Value.Message = "No route"
	p.Contact.DuplicatePhone = profile.Choice[profile.Duplicate]{Unknown: "a read-only run creates no contact"}
}

func TestDiffFiles(t *testing.T) {
	dir := t.TempDir()
	same := writeProfile(t, dir, "same.json", func(p *profile.Profile) { p.Source.Name = "a copy" })
	stg := writeProfile(t, dir, "staging.json", staging)
	invalid := filepath.Join(dir, "invalid.json")
	os.WriteFile(invalid, bytes.Replace(profile.DefaultJSON(), []byte(`"value": "sliding"`), []byte(`"value": "token-bucket"`), 1), 0o644)
	misspelt := filepath.Join(dir, "misspelt.json")
	os.WriteFile(misspelt, bytes.Replace(profile.DefaultJSON(), []byte(`"gzip"`), []byte(`"gzipp"`), 1), 0o644)
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantDiffer []string // the choices listed as differing
		wantOut    []string // in stdout
		wantErr    []string // in stderr
	}{
		{name: "two files that agree", args: []string{same, writeProfile(t, dir, "again.json", func(*profile.Profile) {})},
			wantCode: diffAgree, wantOut: []string{"agree on every choice", "0 differ"}},
		{name: "a file against default", args: []string{"default", same}, wantCode: diffAgree, wantOut: []string{"A: default", "agree"}},
		{name: "files differing in a few choices", args: []string{"default", stg}, wantCode: diffDiffer,
			wantDiffer: []string{"campaignList.limitAboveMax", "http.unknownPath"},
			wantOut: []string{
				`A: {"status":400,"message":"limit must be between 1 and 50"}`,
				`B: {"status":200,"pageSize":50,"pageNo":1}`,
				`POST /v3/partner/webhook/campaign/list {"limit":80,"page":1} → 200 {"pageNo":1,"pageSize":50}`,
				`A: {"status":404,"message":` + strconv.Quote(profile.Default().HTTP.UnknownPath.Value.Message) + `}`, `B: {"status":404,"message":"No route"}`,
				"§4.2", "§1", "A and B differ in 2 choices", "6 not compared"}},
		{name: "flags after the sides, --all lists every row", args: []string{stg, "default", "--all"}, wantCode: diffDiffer,
			wantDiffer: []string{"campaignList.limitAboveMax", "http.unknownPath"},
			wantOut:    []string{"SAME         rateLimit.window", "NOT COMPARED contact.duplicatePhone", "unknown on side A: a read-only run creates no contact"}},
		{name: "an invalid file", args: []string{"default", invalid}, wantCode: diffNotRun,
			wantErr: []string{"side B (" + invalid + ")", `rateLimit.window is "token-bucket"`}},
		{name: "a misspelt choice", args: []string{misspelt, "default"}, wantCode: diffNotRun, wantErr: []string{"side A", `unknown field "gzipp"`}},
		{name: "a missing file", args: []string{"default", filepath.Join(dir, "nope.json")}, wantCode: diffNotRun, wantErr: []string{"nope.json", "no such file"}},
		{name: "one side", args: []string{"default"}, wantCode: diffNotRun, wantErr: []string{"want two sides"}},
		{name: "three sides", args: []string{"default", "default", "default"}, wantCode: diffNotRun, wantErr: []string{"want two sides"}},
		{name: "--b-* flags without two URLs", args: []string{"--b-api-key", "k", "default", "https://x.example/v3/partner/webhook"}, wantCode: diffNotRun,
			wantErr: []string{"--b-api-key", "both sides are URLs"}},
		{name: "an unknown flag", args: []string{"--colour", "default", "default"}, wantCode: diffNotRun, wantErr: []string{"usage error"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runDiff(tt.args...)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.wantCode, stdout, stderr)
			}
			if got := differing(stdout); !slices.Equal(got, tt.wantDiffer) {
				t.Errorf("differing choices %v, want %v\n%s", got, tt.wantDiffer, stdout)
			}
			for _, want := range tt.wantOut {
				if !strings.Contains(stdout, want) {
					t.Errorf("stdout lacks %q:\n%s", want, stdout)
				}
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
			if tt.wantCode == diffNotRun && stdout != "" {
				t.Errorf("stdout %q for a diff that did not run", stdout)
			}
		})
	}
}

// TestDiffRunDispatches: conformance diff goes through run, and --help
// explains the sides, the --b-* flags, the exit codes and the CI recipe.
func TestDiffRunDispatches(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"diff", "--help"}, &stdout, &stderr); code != diffAgree || stderr.Len() > 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	help := stdout.String()
	flags := helpFlags(help)
	for _, want := range []string{"api-key", "b-api-key", "b-api-secret", "b-account-id", "b-ca-cert", "b-admin-url", "b-admin-token", "all", "html", "json", "report-dir"} {
		if _, ok := flags[want]; !ok {
			t.Errorf("help lists no --%s", want)
		}
	}
	for _, want := range []string{"(env CONFORMANCE_B_API_KEY)", "default (the simulator's own choices)", "Partner CI recipe:",
		"  0  the two sides agree", "  1  they differ", "  2  not compared"} {
		if !strings.Contains(help, want) {
			t.Errorf("help lacks %q:\n%s", want, help)
		}
	}
	stdout.Reset()
	if code := run(context.Background(), []string{"diff", "default", "default"}, &stdout, &stderr); code != diffAgree {
		t.Fatalf("run diff default default: exit %d, %s", code, stderr.String())
	}
}

// TestDiffURLSide: a URL side is learned with the target flags (side B's
// --b-* ones and CONFORMANCE_B_* variables when both are URLs), and a side
// that cannot be learned stops the diff with exit 2 and what to fix.
func TestDiffURLSide(t *testing.T) {
	const urlA, urlB = "https://a.example/v3/partner/webhook", "https://b.example/v3/partner/webhook"
	learned := map[string]func(*profile.Profile){
		urlA: func(p *profile.Profile) { p.Source.Target = urlA },
		urlB: staging,
	}
	tests := []struct {
		name      string
		args      []string
		env       map[string]string
		learnErr  error
		wantCode  int
		wantCreds map[string]string // base URL → the API key it was learned with
		wantErr   []string
	}{
		{name: "a URL against a file", args: []string{"--api-key", "ka", "--api-secret", "sa", "--account-id", "aa", urlA, "default"},
			wantCode: diffAgree, wantCreds: map[string]string{urlA: "ka"}},
		{name: "the default against a URL, credentials from the environment", args: []string{"default", urlB},
			env:      map[string]string{"CONFORMANCE_API_KEY": "ke", "CONFORMANCE_API_SECRET": "se", "CONFORMANCE_ACCOUNT_ID": "ae"},
			wantCode: diffDiffer, wantCreds: map[string]string{urlB: "ke"}},
		{name: "two URLs, side B with --b-* flags and variables", args: []string{urlA, urlB, "--api-key", "ka", "--api-secret", "sa", "--account-id", "aa", "--b-api-key", "kb", "--b-account-id", "ab"},
			env:      map[string]string{"CONFORMANCE_B_API_SECRET": "sb"},
			wantCode: diffDiffer, wantCreds: map[string]string{urlA: "ka", urlB: "kb"}},
		{name: "a URL without credentials", args: []string{urlA, "default"}, wantCode: diffNotRun,
			wantErr: []string{"side A (" + urlA + ")", "needs an API key", "--api-key"}},
		{name: "side B of two URLs without its credentials", args: []string{urlA, urlB, "--api-key", "ka", "--api-secret", "sa", "--account-id", "aa"}, wantCode: diffNotRun,
			wantErr: []string{"side B (" + urlB + ")", "--b-api-key", "CONFORMANCE_B_*"}},
		{name: "a URL that cannot be learned", args: []string{"--api-key", "ka", "--api-secret", "sa", "--account-id", "aa", "default", urlA},
			learnErr: errors.New("dial tcp: connection refused"), wantCode: diffNotRun,
			wantErr: []string{"side B (" + urlA + "): learn its profile: dial tcp: connection refused", "ends in /v3/partner/webhook", "--ca-cert"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := map[string]string{}
			saved := learnTarget
			t.Cleanup(func() { learnTarget = saved })
			learnTarget = func(ctx context.Context, cfg suite.Config) (*profile.Profile, error) {
				got[cfg.BaseURL] = cfg.Primary.APIKey
				if !cfg.Primary.Complete() {
					t.Errorf("learned %s with incomplete credentials %+v", cfg.BaseURL, cfg.Primary)
				}
				if tt.learnErr != nil {
					return nil, tt.learnErr
				}
				p := profile.Default()
				learned[cfg.BaseURL](p)
				return p, nil
			}
			var stdout, stderr bytes.Buffer
			code := diff(context.Background(), tt.args, &stdout, &stderr, func(k string) string { return tt.env[k] })
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.wantCode, stdout.String(), stderr.String())
			}
			if tt.wantCreds != nil && !equalMaps(got, tt.wantCreds) {
				t.Errorf("learned with %v, want %v", got, tt.wantCreds)
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
				}
			}
		})
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestDiffWritesHTMLAndJSON: --html writes a well-formed page that lists
// each difference with both sides' evidence in a <details>; --report-dir
// writes diff.html and diff.json; --json prints the comparison.
func TestDiffWritesHTMLAndJSON(t *testing.T) {
	dir := t.TempDir()
	stg := writeProfile(t, dir, "staging.json", staging)
	page, reports := filepath.Join(dir, "diff.html"), filepath.Join(dir, "reports")
	code, stdout, stderr := runDiff("--html", page, "--report-dir", reports, "--json", "default", stg)
	if code != diffDiffer {
		t.Fatalf("exit %d, want %d: %s", code, diffDiffer, stderr)
	}
	var printed profile.Comparison
	if err := json.Unmarshal([]byte(stdout), &printed); err != nil {
		t.Fatalf("--json printed no comparison: %v\n%s", err, stdout)
	}
	var written profile.Comparison
	data, err := os.ReadFile(filepath.Join(reports, "diff.json"))
	if err == nil {
		err = json.Unmarshal(data, &written)
	}
	if err != nil {
		t.Fatalf("diff.json: %v", err)
	}
	for _, c := range []profile.Comparison{printed, written} {
		if c.Agree() || len(c.Rows) != len(profile.Compare(profile.Default(), profile.Default()).Rows) || c.B.Name != "staging" {
			t.Errorf("comparison: agree %v, %d rows, B %q", c.Agree(), len(c.Rows), c.B.Name)
		}
	}
	for _, path := range []string{page, filepath.Join(reports, "diff.html")} {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := html.Parse(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		articles := map[string]*html.Node{}
		var rows []string
		var external []string
		for n := range doc.Descendants() {
			if n.Type != html.ElementNode {
				continue
			}
			switch n.Data {
			case "article":
				articles[attr(n, "id")] = n
			case "tr":
				if c := attr(n, "data-choice"); c != "" {
					rows = append(rows, c)
				}
			case "script", "link", "img":
				external = append(external, n.Data)
			}
		}
		if len(external) > 0 {
			t.Errorf("%s: not self-contained: %v", path, external)
		}
		if len(articles) != 2 {
			t.Errorf("%s: %d differences shown, want 2", path, len(articles))
		}
		for _, choice := range []string{"campaignList.limitAboveMax", "http.unknownPath"} {
			a, ok := articles[choice]
			if !ok {
				t.Errorf("%s: no difference shown for %s", path, choice)
				continue
			}
			text := textOf(a)
			for _, want := range []string{`"pageSize": 50`, `"message": "limit must be between 1 and 50"`, "Evidence"} {
				if choice == "campaignList.limitAboveMax" && !strings.Contains(text, want) {
					t.Errorf("%s: %s lacks %q", path, choice, want)
				}
			}
			var details *html.Node
			for n := range a.Descendants() {
				if n.Type == html.ElementNode && n.Data == "details" {
					details = n
				}
			}
			if details == nil {
				t.Errorf("%s: %s has no <details> of evidence", path, choice)
			} else if choice == "campaignList.limitAboveMax" && !strings.Contains(textOf(details), `POST /v3/partner/webhook/campaign/list`) {
				t.Errorf("%s: the evidence of %s lacks B's request:\n%s", path, choice, textOf(details))
			}
		}
		// Differences first in the table of every choice, then the rest.
		if len(rows) != len(written.Rows) || !slices.Equal(rows[:2], []string{"campaignList.limitAboveMax", "http.unknownPath"}) {
			t.Errorf("%s: every-choice table rows %v", path, rows)
		}
	}
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func textOf(n *html.Node) string {
	var b strings.Builder
	for d := range n.Descendants() {
		if d.Type == html.TextNode {
			b.WriteString(d.Data)
		}
	}
	return b.String()
}
