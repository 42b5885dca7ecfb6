package suite

import (
	"bytes"
	"context"
	"encoding/xml"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/result"
)

var screenshotOut = flag.String("screenshot", "", "also save the Chromium screenshot of the sample report to this file (docs/img/report-example.png)")

func writeHTML(t *testing.T, r *Result) string {
	t.Helper()
	var buf bytes.Buffer
	if err := r.WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// checkBalanced is a cheap well-formedness check: every element the page
// opens is closed, in order (void elements aside).
func checkBalanced(t *testing.T, page string) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(page))
	d.Strict, d.AutoClose, d.Entity = false, xml.HTMLAutoClose, xml.HTMLEntity
	var open []string
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the page does not parse: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			open = append(open, tok.Name.Local)
		case xml.EndElement:
			if len(open) == 0 || open[len(open)-1] != tok.Name.Local {
				t.Fatalf("</%s> closes %v", tok.Name.Local, open)
			}
			open = open[:len(open)-1]
		}
	}
	if len(open) > 0 {
		t.Fatalf("elements left open: %v", open)
	}
}

func TestHTMLReport(t *testing.T) {
	r := sampleResult(t)
	page := writeHTML(t, r)
	checkBalanced(t, page)

	t.Run("it is self-contained", func(t *testing.T) {
		// Links within the page (href="#w1") fetch nothing.
		for _, re := range []string{`(?i)<link`, `(?i)<script`, `(?i)<img`, `(?i)<iframe`, `(?i)\bsrc\s*=`, `(?i)\bhref\s*=\s*"[^#]`, `(?i)url\(`, `(?i)@import`} {
			if m := regexp.MustCompile(re).FindString(page); m != "" {
				t.Errorf("the page holds %q: it would fetch something", m)
			}
		}
	})
	t.Run("it escapes what the target sent", func(t *testing.T) {
		if !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") {
			t.Error("the failure's <script> is not shown escaped")
		}
	})
	t.Run("the verdict comes first", func(t *testing.T) {
		verdict := strings.Index(page, `class="headline">FAIL: the target does not conform<`)
		facts := strings.Index(page, "Facts of the run")
		if verdict < 0 || facts < 0 || verdict > facts || !strings.Contains(page, `class="verdict fail"`) {
			t.Fatalf("verdict at %d, facts at %d", verdict, facts)
		}
	})
	t.Run("it has a row per spec section and highlights failures", func(t *testing.T) {
		sections, _, err := SpecSections()
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range sections {
			if !strings.Contains(page, `data-section="`+s.ID+`"`) {
				t.Errorf("no row for §%s", s.ID)
			}
		}
		if !strings.Contains(page, `<tr class="section failed" data-section="2.2">`) {
			t.Error("the row of §2.2, which failed, is not highlighted")
		}
	})
	t.Run("it shows every part of the run", func(t *testing.T) {
		for _, want := range []string{
			"v1.4.0-3-gabc1234", "TLS 1.3, HTTP/2.0, chain verified", r.TLS[0].Chain[1], r.Digests.Steps,
			"unreleased suite",
			`the field &#34;Id&#34; of every campaign should be an integer`,
			`{&#34;limit&#34;:50,&#34;page&#34;:1}`, "X-Api-Secret: ****(27 chars)",
			`<a class="wsec" href="#section-2.2">§2.2</a> scheduledTimeZone`, "seen 3×",
			"no second account was given (--second-api-key)", "Retry-After: 12",
			"[operation=Campaign Stats, header=x-api-secret, fault=missing]",
		} {
			if !strings.Contains(page, want) {
				t.Errorf("the page lacks %q", want)
			}
		}
	})
	t.Run("no credential appears", func(t *testing.T) {
		for _, secret := range []string{testAPIKey, testAPISecret, testAccountID} {
			if strings.Contains(page, secret) {
				t.Errorf("the page holds %q", secret)
			}
		}
	})
}

func TestHTMLReportColours(t *testing.T) {
	certified := sampleResult(t)
	certified.Verdict, certified.Certification = VerdictPass, true
	partial := sampleResult(t)
	partial.Verdict = VerdictPass
	tests := []struct {
		name   string
		r      *Result
		class  string
		shows  string
		hidden string
	}{
		{"a certification is green", certified, "pass", "PASS: certification", ""},
		{"a pass that is no certification is amber", partial, "partial", "PASS (not a certification, see caveats)", ""},
		{"a failure is red", sampleResult(t), "fail", "FAIL: the target does not conform", ""},
		{"a run that did not start is grey and says why", notRunResult(), "notrun", "no such host", "Spec sections"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page := writeHTML(t, tt.r)
			checkBalanced(t, page)
			if !strings.Contains(page, `class="verdict `+tt.class+`"`) || !strings.Contains(page, tt.shows) {
				t.Fatalf("the page is not %s with %q", tt.class, tt.shows)
			}
			if tt.hidden != "" && strings.Contains(page, tt.hidden) {
				t.Fatalf("the page shows %q", tt.hidden)
			}
		})
	}
}

// TestHTMLReportInChromium renders the page in headless Chromium: the DOM a
// browser builds holds the verdict and every section row, and a screenshot
// comes out. It skips without Chromium unless REQUIRE_CHROMIUM=1 (CI).
func TestHTMLReportInChromium(t *testing.T) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("REQUIRE_CHROMIUM") == "1" {
			t.Fatal("REQUIRE_CHROMIUM=1 but chromium is not on PATH (Debian: apt-get install chromium)")
		}
		t.Skip("chromium is not on PATH (Debian: apt-get install chromium); set REQUIRE_CHROMIUM=1 to fail instead")
	}
	r := sampleResult(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "report.html")
	if err := os.WriteFile(file, []byte(writeHTML(t, r)), 0o644); err != nil {
		t.Fatal(err)
	}
	chromium := func(args ...string) []byte {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		args = append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
			"--user-data-dir=" + t.TempDir(), "--no-first-run", "--hide-scrollbars"}, args...)
		cmd := exec.CommandContext(ctx, bin, append(args, "file://"+file)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("chromium %v: %v\n%s", args, err, stderr.String())
		}
		return out
	}

	dom := string(chromium("--dump-dom"))
	if !strings.Contains(dom, r.Headline()) {
		t.Errorf("the rendered DOM lacks the verdict %q", r.Headline())
	}
	if got, want := strings.Count(dom, `<tr class="section`), len(r.Sections); got != want || want == 0 {
		t.Errorf("the rendered DOM has %d section rows, want %d", got, want)
	}

	png := filepath.Join(dir, "report.png")
	chromium("--screenshot="+png, "--window-size=1280,2000")
	b, err := os.ReadFile(png)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	if len(b) < 1000 || !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
		t.Fatalf("the screenshot is not a PNG (%d bytes)", len(b))
	}
	if *screenshotOut != "" {
		if err := os.WriteFile(*screenshotOut, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestHTMLWarningsOnceFormattedAndLinked: a warning that cites several
// sections is given once, a multi-line one keeps its lines, one seen by
// two scenarios is one entry naming both, and each section's row of the
// table links to the warnings that count for it (issue 27).
func TestHTMLWarningsOnceFormattedAndLinked(t *testing.T) {
	r := sampleResult(t)
	multi := "3 cells of rule campaign-fields could not be checked: the target's data does not hold them:\n  [kind=sms, field=Hardbounce]\n  [kind=email, field=Softbounce]"
	shared := "the body carries fields the spec does not list: \"requestId\""
	for _, title := range []string{"first", "second"} {
		r.Scenarios = append(r.Scenarios, &result.ScenarioResult{Name: "Warns " + title, Sections: []string{"4.2"}, Status: result.StatusPassed,
			Warnings: []result.Finding{
				{Level: result.LevelWarning, Sections: []string{"2.2", "4.2"}, Message: multi, Count: 1},
				{Level: result.LevelWarning, Sections: []string{"4.3"}, Message: shared, Count: 2},
			}})
	}
	r.Sections = nil
	r.judge(Config{SuiteVersion: r.SuiteVersion, Tags: DefaultTags}, spec.RateLimit, spec.RateWindow)
	page := writeHTML(t, r)
	checkBalanced(t, page)

	if n := strings.Count(page, "could not be checked: the target"); n != 1 {
		t.Errorf("the warning citing §2.2 and §4.2, seen by two scenarios, is given %d times, want once", n)
	}
	if n := strings.Count(page, "the body carries fields the spec does not list"); n != 1 {
		t.Errorf("the warning seen by two scenarios is given %d times, want once", n)
	}
	if !strings.Contains(page, "<pre class=\"wdetail\">  [kind=sms, field=Hardbounce]\n  [kind=email, field=Softbounce]</pre>") {
		t.Error("the multi-line warning does not keep its lines")
	}
	if !strings.Contains(page, "Seen in: Warns first (seen 2×); Warns second (seen 2×)") {
		t.Error("the shared warning does not name both scenarios that saw it")
	}
	ids := map[string]string{}
	for _, m := range regexp.MustCompile(`<li class="warning" id="(w\d+)">\s*<p class="wtitle">.*?</p>`).FindAllStringSubmatch(page, -1) {
		ids[m[1]] = m[0]
	}
	var multiID, sharedID string
	for id, li := range ids {
		switch {
		case strings.Contains(li, "could not be checked"):
			multiID = id
		case strings.Contains(li, "requestId"):
			sharedID = id
		}
	}
	if multiID == "" || sharedID == "" {
		t.Fatalf("warnings not found by id: %v", ids)
	}
	row := func(id string) string {
		return regexp.MustCompile(`<tr class="[^"]*" data-section="` + regexp.QuoteMeta(id) + `">.*?</tr>`).FindString(page)
	}
	for _, tt := range []struct {
		section, link string
		want          bool
	}{
		{"2", multiID, true}, {"2.2", multiID, true}, {"4.2", multiID, true}, {"4", sharedID, true}, {"4.3", sharedID, true},
		{"4.3", multiID, false}, {"2.2", sharedID, false},
	} {
		if got := strings.Contains(row(tt.section), `href="#`+tt.link+`"`); got != tt.want {
			t.Errorf("the row of §%s links to %s: %v, want %v\n%s", tt.section, tt.link, got, tt.want, row(tt.section))
		}
	}
}
