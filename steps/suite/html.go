package suite

import (
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/partner-v3/conformance-kit/steps/result"
)

// WriteHTML writes the conformance report for people as one self-contained
// HTML page (inline CSS, nothing fetched, no script), which opens in any
// browser and prints: the verdict first, the facts of the run, the
// caveats, a row per spec section, then each failure with its exchange
// (credentials masked), the warnings by section, the skips, the waits for
// a budget spent before the run, and every scenario with its status.
func (r *Result) WriteHTML(w io.Writer) error {
	if err := htmlReport.Execute(w, r.htmlView()); err != nil {
		return fmt.Errorf("write HTML report: %w", err)
	}
	return nil
}

// htmlView is what the page shows, worked out before the template runs.
type htmlView struct {
	*Result
	// Class is the verdict's colour: pass, partial, fail or notrun.
	Class    string
	Counts   string
	Facts    []htmlFact
	Failures []*result.ScenarioResult
	Skips    []*result.ScenarioResult
	Warned   []htmlWarning
	// WarningLinks are, by section ID, the IDs of the warnings that count
	// for the section's row (its own and its subsections').
	WarningLinks map[string][]string
}

// htmlFact is one line of the facts block; Mono values are identifiers
// (digests, fingerprints) shown in a fixed-width font.
type htmlFact struct {
	Name   string
	Values []string
	Mono   bool
}

// htmlWarning is one distinct warning (its sections and message), given
// once however many sections it cites and however many scenarios saw it:
// the § table links to it by ID.
type htmlWarning struct {
	ID       string
	Sections []string
	// Title is the message's first line; Detail the lines after it (a
	// list of cells, a body), shown as they were written.
	Title, Detail string
	Seen          []htmlSeen
}

// htmlSeen is a scenario that gave a warning, and how many times.
type htmlSeen struct {
	Scenario string
	Count    int
}

func (r *Result) htmlView() htmlView {
	v := htmlView{Result: r, Class: "fail"}
	switch {
	case r.Verdict == VerdictNotRun, r.Verdict == VerdictIncomplete:
		v.Class = "notrun"
	case r.Certification:
		v.Class = "pass"
	case r.Verdict == VerdictPass:
		v.Class = "partial"
	}
	v.Counts = fmt.Sprintf("%d passed, %d failed, %d skipped; %d %s", r.Passed, r.Failed, r.Skipped, r.Warnings, plural(r.Warnings, "warning"))
	started := ""
	if !r.Started.IsZero() {
		started = r.Started.UTC().Format("2006-01-02 15:04:05 MST")
	}
	rateLimit := ""
	if r.RateLimit > 0 {
		rateLimit = fmt.Sprintf("%d per %s", r.RateLimit, r.RateWindow)
	}
	v.Facts = []htmlFact{
		{Name: "Target", Values: []string{r.Target}, Mono: true},
		{Name: "Suite version", Values: []string{r.SuiteVersion}},
		{Name: "Suite commit", Values: []string{commitText(r.SuiteCommit)}, Mono: r.SuiteCommit != ""},
		{Name: "Spec", Values: []string{r.Spec + ", version " + r.SpecVersion}},
		{Name: "Started", Values: []string{started}},
		{Name: "Duration", Values: []string{r.Duration.Round(time.Millisecond).String()}},
		{Name: "Requests sent", Values: []string{fmt.Sprint(r.Requests)}},
		{Name: "Waited for rate-limit windows", Values: []string{r.Waited.Round(time.Second).String()}},
		{Name: "Tags", Values: []string{r.Tags}, Mono: true},
		{Name: "Rate limit assumed", Values: []string{rateLimit}},
		{Name: "Control API", Values: []string{map[bool]string{true: "yes (simulator)", false: "no"}[r.ControlAPI]}},
	}
	if len(r.TLS) == 0 {
		v.Facts = append(v.Facts, htmlFact{Name: "TLS", Values: []string{"none seen"}})
	}
	for _, s := range r.TLS {
		verified := "chain NOT verified"
		if s.Verified {
			verified = "chain verified"
		}
		v.Facts = append(v.Facts,
			htmlFact{Name: "TLS", Values: []string{fmt.Sprintf("%s, %s, %s", s.Version, s.Protocol, verified)}},
			htmlFact{Name: "Certificate chain (SHA-256, leaf first)", Values: s.Chain, Mono: true})
	}
	v.Facts = append(v.Facts,
		htmlFact{Name: "Suite source digest (SHA-256)", Values: []string{r.Digests.Source}, Mono: true},
		htmlFact{Name: "Scenarios digest (SHA-256)", Values: []string{r.Digests.Scenarios}, Mono: true},
		htmlFact{Name: "Steps digest (SHA-256)", Values: []string{r.Digests.Steps}, Mono: true},
		htmlFact{Name: "Matrix digest (SHA-256)", Values: []string{r.Digests.Matrix}, Mono: true})
	// A run stopped early knows little; say nothing rather than show blanks.
	v.Facts = slices.DeleteFunc(v.Facts, func(f htmlFact) bool { return strings.Join(f.Values, "") == "" })

	type key struct{ sections, message string }
	warnings := make(map[key]*htmlWarning)
	var order []key
	for _, sc := range r.Scenarios {
		switch sc.Status {
		case result.StatusFailed:
			v.Failures = append(v.Failures, sc)
		case result.StatusSkipped, result.StatusInconclusive:
			v.Skips = append(v.Skips, sc)
		}
		for _, f := range sc.Warnings {
			k := key{strings.Join(f.Sections, ","), f.Message}
			w, ok := warnings[k]
			if !ok {
				title, detail, _ := strings.Cut(strings.TrimRight(f.Message, "\n"), "\n")
				w = &htmlWarning{Sections: f.Sections, Title: title, Detail: detail}
				warnings[k] = w
				order = append(order, k)
			}
			w.Seen = append(w.Seen, htmlSeen{Scenario: sc.Title(), Count: f.Count})
		}
	}
	// By the first section each cites, then as the run met them.
	slices.SortStableFunc(order, func(a, b key) int {
		return result.CompareSections(firstSection(warnings[a].Sections), firstSection(warnings[b].Sections))
	})
	v.WarningLinks = make(map[string][]string)
	for i, k := range order {
		w := warnings[k]
		w.ID = fmt.Sprintf("w%d", i+1)
		v.Warned = append(v.Warned, *w)
		for _, sec := range r.Sections {
			if coversSection(w.Sections, sec.ID) {
				v.WarningLinks[sec.ID] = append(v.WarningLinks[sec.ID], w.ID)
			}
		}
	}
	return v
}

// firstSection is the first of a warning's sections, "" for none.
func firstSection(ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	return ids[0]
}

// plural is noun for n things, in English.
func plural(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}

// htmlFuncs are the helpers the page's template uses.
var htmlFuncs = template.FuncMap{
	"sections":     result.SectionList,
	"sectionTitle": sectionTitle,
	"ms":           func(d time.Duration) string { return d.Round(time.Millisecond).String() },
	"tenths":       func(d time.Duration) string { return d.Round(100 * time.Millisecond).String() },
	"utc":          func(t time.Time) string { return t.UTC().Format("15:04:05") },
	"join":         strings.Join,
	"transcript": func(x *result.Exchange) string {
		if x == nil {
			return ""
		}
		return x.Dump()
	},
}

// ReportCSS is the style sheet of report.html, for the other pages the
// kit writes (conformance diff's diff.html) to look the same: plain
// colours, the verdict box, tables, badges, transcripts in <pre>.
const ReportCSS = `:root { --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --soft: #f6f8fa;
  --ok: #1a7f37; --ok-bg: #dafbe1; --warn: #9a6700; --warn-bg: #fff8c5;
  --bad: #cf222e; --bad-bg: #ffebe9; --none: #59636e; --none-bg: #eaeef2; }
* { box-sizing: border-box; }
html { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
body { margin: 0 auto; max-width: 72rem; padding: 1.5rem 2rem 3rem; color: var(--fg); background: #fff;
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
h1 { font-size: 1rem; font-weight: 600; color: var(--muted); margin: 0 0 .75rem; }
h2 { font-size: 1.25rem; margin: 2.25rem 0 .75rem; padding-bottom: .3rem; border-bottom: 1px solid var(--line); }
h3 { font-size: 1.05rem; margin: 0 0 .4rem; }
code, pre, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace; font-size: .85em; }
.verdict { border: 2px solid; border-left-width: 12px; border-radius: 8px; padding: 1.1rem 1.4rem; margin-bottom: 1.5rem; }
.verdict p { margin: .35rem 0 0; }
.verdict .headline { font-size: 2rem; font-weight: 700; line-height: 1.2; margin: 0; }
.verdict.pass { border-color: var(--ok); background: var(--ok-bg); color: #0f5323; }
.verdict.partial { border-color: #bf8700; background: var(--warn-bg); color: #6f4b00; }
.verdict.fail { border-color: var(--bad); background: var(--bad-bg); color: #82071e; }
.verdict.notrun { border-color: var(--none); background: var(--none-bg); color: #32383f; }
.verdict .why { font-weight: 600; white-space: pre-wrap; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1.25rem; margin: 0; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
dl.facts dd span { display: block; }
ul.caveats li { margin: .2rem 0; }
table { border-collapse: collapse; width: 100%; margin: .5rem 0; font-size: .92rem; }
th, td { text-align: left; vertical-align: top; padding: .35rem .6rem; border-bottom: 1px solid var(--line); }
th { background: var(--soft); font-weight: 600; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; width: 5.5rem; }
tr { break-inside: avoid; }
tr.failed td { background: var(--bad-bg); }
tr.failed td.failed { color: var(--bad); font-weight: 700; }
tr.warned td.warned { color: var(--warn); font-weight: 700; }
tr.empty td { color: var(--muted); }
.badge { display: inline-block; min-width: 4.6rem; text-align: center; border-radius: 1rem; padding: 0 .5rem; font-size: .8rem; font-weight: 600; }
.badge.passed { background: var(--ok-bg); color: var(--ok); }
.badge.failed { background: var(--bad-bg); color: var(--bad); }
.badge.skipped { background: var(--none-bg); color: var(--none); }
article.failure { border: 1px solid var(--line); border-left: 6px solid var(--bad); border-radius: 6px; padding: .9rem 1.1rem; margin: 1rem 0; }
.sec { color: var(--bad); font-weight: 700; margin-right: .35rem; }
.meta { color: var(--muted); font-size: .9rem; margin: 0 0 .5rem; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; margin: .5rem 0 0; padding: .7rem .9rem; background: var(--soft); border: 1px solid var(--line); border-radius: 6px; }
pre.message { background: var(--bad-bg); border-color: #ffcecb; color: #82071e; font-weight: 600; }
pre.transcript { max-height: 32rem; overflow: auto; }
details summary { cursor: pointer; color: var(--muted); margin-top: .6rem; }
ol.warnings { list-style: none; padding: 0; }
li.warning { border: 1px solid var(--line); border-left: 6px solid #bf8700; border-radius: 6px; padding: .6rem 1rem; margin: .75rem 0; break-inside: avoid; }
li.warning:target { background: var(--warn-bg); }
li.warning p { margin: 0; }
li.warning p.muted { margin-top: .35rem; font-size: .9rem; }
.wtitle { font-weight: 600; }
.wid { display: inline-block; min-width: 2.4rem; color: var(--muted); font-weight: 400; }
.wsec { color: var(--warn); font-weight: 700; margin-right: .35rem; text-decoration: none; }
pre.wdetail { background: var(--warn-bg); border-color: #eedc82; font-weight: 400; }
.wlinks { display: block; font-size: .78rem; font-weight: 400; line-height: 1.3; }
.wlinks a { color: var(--warn); }
.muted { color: var(--muted); }
footer { margin-top: 3rem; color: var(--muted); font-size: .85rem; }
@media print {
  body { max-width: none; padding: 0; font-size: 10.5pt; }
  @page { margin: 14mm; }
  h2 { break-after: avoid; }
  pre.transcript { max-height: none; overflow: visible; }
  details summary { display: none; }
}
`

// htmlReport is the page. Everything is inline: the file is mailed,
// attached to tickets and archived, and must look the same offline in ten
// years.
var htmlReport = template.Must(template.New("report").Funcs(htmlFuncs).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Headline}} · Conformance report: {{.Spec}}</title>
<style>
` + ReportCSS + `</style>
</head>
<body>
<header>
<h1>Conformance report: {{.Spec}}</h1>
<section class="verdict {{.Class}}" id="verdict">
<p class="headline">{{.Headline}}</p>
{{- if .NotRun}}
<p class="why">{{.NotRun}}</p>
{{- else}}
<p>{{.Counts}}</p>
{{- end}}
</section>
</header>

<main>
<h2>Facts of the run</h2>
<dl class="facts">
{{- range .Facts}}
<dt>{{.Name}}</dt><dd{{if .Mono}} class="mono"{{end}}>{{range .Values}}<span>{{.}}</span>{{end}}</dd>
{{- end}}
</dl>

{{- if .Caveats}}
<h2>Caveats</h2>
<ul class="caveats">
{{- range .Caveats}}
<li>{{.}}</li>
{{- end}}
</ul>
{{- end}}

{{- if .Sections}}
<h2>Spec sections</h2>
<table class="sections">
<thead><tr><th>Section</th><th>Title</th><th class="n">Passed</th><th class="n">Failed</th><th class="n">Warnings</th><th class="n">Skipped</th></tr></thead>
<tbody>
{{- range .Sections}}
<tr class="section{{if .Failed}} failed{{else if .Warnings}} warned{{else if not .Scenarios}} empty{{end}}" data-section="{{.ID}}"><td id="section-{{.ID}}">§{{.ID}}</td><td>{{sectionTitle .}}</td><td class="n">{{.Passed}}</td><td class="n failed">{{.Failed}}</td><td class="n warned">{{.Warnings}}{{with index $.WarningLinks .ID}}<span class="wlinks">{{range .}}<a href="#{{.}}">{{.}}</a> {{end}}</span>{{end}}</td><td class="n">{{.Skipped}}</td></tr>
{{- end}}
</tbody>
</table>
{{- end}}

{{- if .Failures}}
<h2>Failures ({{len .Failures}})</h2>
{{- range .Failures}}
<article class="failure">
<h3><span class="sec">{{sections .FailureSections}}</span>{{.Title}}</h3>
<p class="meta">{{.Feature}}{{with .FeatureName}} · {{.}}{{end}}{{with .Tags}} · {{join . " "}}{{end}}</p>
{{- with .Step}}
<p>Failed step: <code>{{.}}</code></p>
{{- end}}
{{- if .Failure}}
<pre class="message">{{.Failure.Message}}</pre>
{{- with .Failure.Exchange}}
<details open><summary>Request and response (credentials masked)</summary>
<pre class="transcript">{{transcript .}}</pre>
</details>
{{- end}}
{{- else}}
<pre class="message">{{.Message}}</pre>
{{- end}}
</article>
{{- end}}
{{- end}}

{{- if .Warned}}
<h2 id="warnings">Warnings ({{.Warnings}}{{if ne (len .Warned) .Warnings}}, {{len .Warned}} distinct{{end}})</h2>
<p class="muted">What the spec allows but a vendor should know; none of them fails the run. Each is given once, with the sections it cites and the scenarios that saw it; the spec sections table links to it.</p>
<ol class="warnings">
{{- range .Warned}}
<li class="warning" id="{{.ID}}">
<p class="wtitle"><span class="wid">{{.ID}}</span>{{range .Sections}}<a class="wsec" href="#section-{{.}}">§{{.}}</a>{{else}}<span class="wsec">no section</span>{{end}} {{.Title}}</p>
{{- with .Detail}}
<pre class="wdetail">{{.}}</pre>
{{- end}}
<p class="muted">Seen in: {{range $i, $s := .Seen}}{{if $i}}; {{end}}{{$s.Scenario}}{{if gt $s.Count 1}} (seen {{$s.Count}}×){{end}}{{end}}</p>
</li>
{{- end}}
</ol>
{{- end}}

{{- if .Skips}}
<h2>Skipped ({{len .Skips}})</h2>
<table class="skipped">
<thead><tr><th>Scenario</th><th>Sections</th><th>Reason</th></tr></thead>
<tbody>
{{- range .Skips}}
<tr><td>{{.Title}}</td><td>{{sections .Sections}}</td><td>{{.Message}}</td></tr>
{{- end}}
</tbody>
</table>
{{- end}}

{{- if .BudgetWaits}}
<h2>Waits for a budget spent before the run ({{len .BudgetWaits}})</h2>
<p class="muted">Requests that do not test §8 met a 429 and were sent again after waiting; never held against the target.</p>
<table class="waits">
<thead><tr><th>At (UTC)</th><th>Account</th><th class="n">Waited</th><th>Based on</th></tr></thead>
<tbody>
{{- range .BudgetWaits}}
<tr><td>{{utc .At}}</td><td>{{.Account}}</td><td class="n">{{tenths .Duration}}</td><td>{{.Reason}}</td></tr>
{{- end}}
</tbody>
</table>
{{- end}}

{{- if .Scenarios}}
<h2>All scenarios ({{len .Scenarios}})</h2>
<table class="scenarios">
<thead><tr><th>Status</th><th>Scenario</th><th>Sections</th><th class="n">Requests</th><th class="n">Time</th></tr></thead>
<tbody>
{{- range .Scenarios}}
<tr><td><span class="badge {{.Status}}">{{.Status}}</span></td><td>{{.Title}}{{if .Warnings}} <span class="muted">({{len .Warnings}} warning{{if gt (len .Warnings) 1}}s{{end}})</span>{{end}}<br><span class="muted">{{.Feature}}</span></td><td>{{sections .Sections}}</td><td class="n">{{.Requests}}</td><td class="n">{{ms .Duration}}</td></tr>
{{- end}}
</tbody>
</table>
{{- end}}
</main>
<footer>Written by the conformance suite {{.SuiteVersion}}. Credentials are masked wherever a request is shown.</footer>
</body>
</html>
`))
