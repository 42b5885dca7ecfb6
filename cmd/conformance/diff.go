package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"html/template"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/partner-v3/conformance-kit/cmd/internal/flagenv"
	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/suite"
)

// learnTarget probes a deployment and returns its profile: suite.Learn,
// which tests replace with a fake target.
var learnTarget = suite.Learn

// probeSides is --probe's comparison of two live sides: suite.Probe.
var probeSides = suite.Probe

// Exit statuses of conformance diff: like the run's, 1 is only ever the
// deployments' answer, never a problem of the user's (that is 2).
const (
	diffAgree  = 0
	diffDiffer = 1
	diffNotRun = 2
)

// diffHelp is what conformance diff --help says besides the flags.
var diffHelp = flagenv.Help{
	Usage: "usage: conformance diff [flags] A B",
	Intro: "Compares two deployment profiles choice by choice: every choice a deployment makes where the\n" +
		"spec says \"not shown\". A side is a profile file (conformance profile writes one), the word\n" +
		"default (the simulator's own choices), or a base URL (https://…" + spec.BasePath + ") probed to learn its\n" +
		"profile with the target flags below (when both sides are URLs, side B takes the --b-* flags).\n" +
		"Prints the differing choices (--all: every one) with each side's value and evidence; --json the\n" +
		"comparison as JSON; --html and --report-dir a page like report.html.\n\n" +
		"--probe compares what a client observes instead: two base URLs (A a deployment, B typically a\n" +
		"simulator playing A's profile) get the same requests in lockstep, within each account's budget\n" +
		"(spec §8): every request class the profile is learned from and others it is not. Prints agreement\n" +
		"N/M and each disagreement side by side; --json the report as JSON; --report-dir probe.json and probe.txt.\n\n" +
		"Partner CI recipe:\n" +
		"  conformance profile --base-url \"$TARGET\" …   learn your deployment once; commit its profile.json\n" +
		"  simulator --profile profile.json              run your client's tests against your deployment's choices\n" +
		"  conformance diff profile.json \"$TARGET\" …     each night: exit 1 when the deployment drifted from it",
	Prefix:  envPrefix,
	EnvNote: "An empty variable counts as unset. Flags may come before, between or after A and B.",
	ExitCodes: []flagenv.ExitCode{
		{Code: diffAgree, Meaning: "the two sides agree on every choice both know (--probe: answer every request alike; also --help)"},
		{Code: diffDiffer, Meaning: "they differ in at least one choice (--probe: answer at least one request differently)"},
		{Code: diffNotRun, Meaning: "not compared: a usage error, an unreadable or invalid profile (Check's reason), or a URL that could not be probed (the message says what to fix)"},
	},
}

// diffOptions are conformance diff's flags. a holds the flags of a URL
// side (side A's when both are URLs), b side B's --b-* flags.
type diffOptions struct {
	a, b      options
	all, json bool
	probe     bool
	html      string
	reportDir string
	sides     []string
	fs        *flag.FlagSet
}

// parseDiffFlags reads args (flags anywhere around the two sides), then
// the CONFORMANCE_* environment for every flag not given.
func parseDiffFlags(args []string, getenv func(string) string) (*diffOptions, error) {
	o := &diffOptions{}
	fs := flag.NewFlagSet("conformance diff", flag.ContinueOnError)
	flagenv.Quiet(fs)
	o.fs = fs
	o.a.registerTarget(fs, "", "the account at a URL side (side A's when both are URLs)", "a URL side (side A when both are URLs)")
	o.b.registerTarget(fs, "b-", "side B's account when both sides are URLs", "side B when both sides are URLs")
	fs.IntVar(&o.a.cfg.RateLimit, "rate-limit", 0, fmt.Sprintf("a URL side's rate limit when configured away from the spec's %d", spec.RateLimit))
	fs.DurationVar(&o.a.cfg.RateWindow, "rate-window", 0, "a URL side's rate-limit window when configured away from the spec's "+flagenv.Duration(spec.RateWindow))
	fs.IntVar(&o.b.cfg.RateLimit, "b-rate-limit", 0, "side B's rate limit when both sides are URLs")
	fs.DurationVar(&o.b.cfg.RateWindow, "b-rate-window", 0, "side B's rate-limit window when both sides are URLs")
	// How requests are made is both sides': bound once, on side A's.
	fs.DurationVar(&o.a.cfg.Timeout, "timeout", 30*time.Second, "timeout of each request to a URL side")
	fs.BoolVar(&o.a.cfg.ReadOnly, "read-only", false, "learn a URL side without creating contacts (for production; those choices are then not compared)")
	fs.StringVar(&o.a.cfg.EmailDomain, "email-domain", "example.com", "domain of the contacts learning a URL side creates")
	fs.BoolVar(&o.probe, "probe", false, "compare what a client observes of two base URLs, request by request, instead of their profiles")
	fs.BoolVar(&o.all, "all", false, "print every choice, not only the differing ones")
	fs.BoolVar(&o.json, "json", false, "print the comparison as JSON instead of text")
	fs.StringVar(&o.html, "html", "", "write the comparison as an HTML page to this file")
	fs.StringVar(&o.reportDir, "report-dir", "", "write diff.html and diff.json to this directory")
	for rest := args; ; {
		if err := flagenv.Parse(fs, rest); err != nil {
			return o, err
		}
		if fs.NArg() == 0 {
			break
		}
		o.sides = append(o.sides, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if len(o.sides) != 2 {
		return nil, fmt.Errorf("want two sides, A and B (a profile file, default, or a base URL); got %d", len(o.sides))
	}
	if !isURL(o.sides[0]) || !isURL(o.sides[1]) {
		var given []string
		fs.Visit(func(f *flag.Flag) {
			if strings.HasPrefix(f.Name, "b-") {
				given = append(given, "--"+f.Name)
			}
		})
		if len(given) > 0 {
			return nil, fmt.Errorf("%s: the --b-* flags are side B's when both sides are URLs; with one URL side, give its flags unprefixed", strings.Join(given, ", "))
		}
	}
	// An empty variable counts as unset.
	err := flagenv.Fill(fs, envPrefix, func(name string) (string, bool) {
		v := getenv(name)
		return v, v != ""
	})
	return o, err
}

// isURL reports whether a side names a deployment to probe rather than a
// file.
func isURL(side string) bool {
	return strings.HasPrefix(side, "https://") || strings.HasPrefix(side, "http://")
}

// diff is conformance diff.
func diff(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	o, err := parseDiffFlags(args, getenv)
	if errors.Is(err, flag.ErrHelp) {
		flagenv.WriteHelp(stdout, o.fs, diffHelp)
		return diffAgree
	}
	if err != nil {
		fmt.Fprintf(stderr, "conformance diff: usage error: %v\n(conformance diff --help)\n", err)
		return diffNotRun
	}
	both := isURL(o.sides[0]) && isURL(o.sides[1])
	if o.probe {
		return o.runProbe(ctx, stdout, stderr)
	}
	var ps [2]*profile.Profile
	for i, side := range o.sides {
		p, err := o.loadSide(ctx, side, i == 1 && both, stderr)
		if err != nil {
			fmt.Fprintf(stderr, "conformance diff: side %c (%s): %v\n", 'A'+i, side, err)
			return diffNotRun
		}
		ps[i] = p
	}
	c := profile.Compare(ps[0], ps[1])
	view := newDiffView(c, o.sides)
	if o.html != "" {
		if err := writeFile(o.html, view.writeHTML); err != nil {
			fmt.Fprintf(stderr, "conformance diff: %v\n", err)
			return diffNotRun
		}
	}
	if o.reportDir != "" {
		if err := os.MkdirAll(o.reportDir, 0o755); err != nil {
			fmt.Fprintf(stderr, "conformance diff: create --report-dir: %v\n", err)
			return diffNotRun
		}
		for name, write := range map[string]func(io.Writer) error{"diff.html": view.writeHTML, "diff.json": view.writeJSON} {
			if err := writeFile(filepath.Join(o.reportDir, name), write); err != nil {
				fmt.Fprintf(stderr, "conformance diff: %v\n", err)
				return diffNotRun
			}
		}
	}
	if o.json {
		if err := view.writeJSON(stdout); err != nil {
			fmt.Fprintf(stderr, "conformance diff: %v\n", err)
			return diffNotRun
		}
	} else {
		view.writeText(stdout, o.all)
	}
	if !c.Agree() {
		return diffDiffer
	}
	return diffAgree
}

// loadSide reads one side: default, a profile file (Load: strict JSON,
// then Check), or a base URL, probed with the target flags. sideB says the
// side is the second of two URLs, which takes the --b-* flags.
func (o *diffOptions) loadSide(ctx context.Context, side string, sideB bool, stderr io.Writer) (*profile.Profile, error) {
	switch {
	case side == "default":
		return profile.Default(), nil
	case !isURL(side):
		return profile.Load(side)
	}
	cfg, err := o.sideConfig(side, sideB, stderr)
	if err != nil {
		return nil, err
	}
	prefix := sidePrefix(sideB)
	p, err := learnTarget(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("learn its profile: %w\n(check that the address ends in %s and answers, and the credentials %sapi-key, %sapi-secret, %saccount-id and %sca-cert)", err, spec.BasePath, prefix, prefix, prefix, prefix)
	}
	if p == nil {
		return nil, errors.New("learn its profile: no profile came back")
	}
	return p, nil
}

// sidePrefix is the prefix of a side's target flags.
func sidePrefix(sideB bool) string {
	if sideB {
		return "--b-"
	}
	return "--"
}

// sideConfig is the run configuration of a URL side from its target
// flags; sideB says it is the second of two URLs, which takes the --b-*
// flags. Its error says which flags to give.
func (o *diffOptions) sideConfig(side string, sideB bool, stderr io.Writer) (suite.Config, error) {
	env, flags := envPrefix, &o.a
	if sideB {
		env, flags = envPrefix+"B_", &o.b
	}
	prefix := sidePrefix(sideB)
	cfg, err := flags.target(side)
	// Side B makes its requests as side A does (the flags are bound once).
	cfg.Timeout, cfg.ReadOnly, cfg.EmailDomain = o.a.cfg.Timeout, o.a.cfg.ReadOnly, o.a.cfg.EmailDomain
	cfg.Output, cfg.Log = stderr, stderr
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil {
		return cfg, fmt.Errorf("%w\n(give this side's %sapi-key, %sapi-secret, %saccount-id and, for a private CA, %sca-cert, or their %s* variables)", err, prefix, prefix, prefix, prefix, env)
	}
	return cfg, nil
}

// runProbe is conformance diff --probe: both sides are base URLs, sent
// the same requests (package steps/probe).
func (o *diffOptions) runProbe(ctx context.Context, stdout, stderr io.Writer) int {
	usage := func(msg string) int {
		fmt.Fprintf(stderr, "conformance diff: usage error: %s\n(conformance diff --help)\n", msg)
		return diffNotRun
	}
	switch {
	case !isURL(o.sides[0]) || !isURL(o.sides[1]):
		return usage("--probe sends requests to two live sides: give two base URLs (https://…" + spec.BasePath + "), not a profile file or default")
	case o.html != "":
		return usage("--probe writes no HTML page: use --json or --report-dir (probe.json, probe.txt)")
	}
	var cfgs [2]suite.Config
	for i, side := range o.sides {
		cfg, err := o.sideConfig(side, i == 1, stderr)
		if err != nil {
			fmt.Fprintf(stderr, "conformance diff: side %c (%s): %v\n", 'A'+i, side, err)
			return diffNotRun
		}
		cfgs[i] = cfg
	}
	rep, err := probeSides(ctx, cfgs[0], cfgs[1])
	if err != nil {
		fmt.Fprintf(stderr, "conformance diff: %v\n(check that each address ends in %s and answers, and each side's credentials: --api-key, --api-secret, --account-id, --ca-cert for side A, --b-api-key, --b-api-secret, --b-account-id, --b-ca-cert for side B)\n", err, spec.BasePath)
		return diffNotRun
	}
	if o.reportDir != "" {
		if err := os.MkdirAll(o.reportDir, 0o755); err != nil {
			fmt.Fprintf(stderr, "conformance diff: create --report-dir: %v\n", err)
			return diffNotRun
		}
		for name, write := range map[string]func(io.Writer) error{
			"probe.json": rep.WriteJSON,
			"probe.txt":  func(w io.Writer) error { rep.WriteText(w, true); return nil },
		} {
			if err := writeFile(filepath.Join(o.reportDir, name), write); err != nil {
				fmt.Fprintf(stderr, "conformance diff: %v\n", err)
				return diffNotRun
			}
		}
	}
	if o.json {
		if err := rep.WriteJSON(stdout); err != nil {
			fmt.Fprintf(stderr, "conformance diff: %v\n", err)
			return diffNotRun
		}
	} else {
		rep.WriteText(stdout, o.all)
	}
	if !rep.Agreed() {
		return diffDiffer
	}
	return diffAgree
}

// diffView is the comparison as the outputs show it.
type diffView struct {
	*profile.Comparison
	// Sides name each side as given, with where its profile comes from.
	Sides [2]diffSide
	// Counts are the rows of each verdict.
	Counts map[string]int
	// Rows are every row, differences first, then the rest in the
	// file's order.
	Rows []diffRow
}

type diffSide struct {
	Arg    string
	Source profile.Source
}

// diffRow is one row with its values and evidence as text.
type diffRow struct {
	profile.Row
	AText, BText string // the values, indented JSON
	// ADiff and BDiff are the values with the keys both share left out
	// (onlyDiffering); Trimmed says whether any was.
	ADiff, BDiff         string
	Trimmed              bool
	AEvidence, BEvidence []string
}

// diffEvidence is one side's evidence of a row, as the page shows it.
type diffEvidence struct {
	Name      string   // the side, "A" or "B"
	Exchanges []string // the exchanges as text, credentials masked
	Unknown   string   // why the side could not learn the choice
}

// Evidence is the row's evidence, side A then side B: the page writes
// both the same way.
func (r diffRow) Evidence() [2]diffEvidence {
	return [2]diffEvidence{{"A", r.AEvidence, r.AUnknown}, {"B", r.BEvidence, r.BUnknown}}
}

func newDiffView(c *profile.Comparison, sides []string) *diffView {
	v := &diffView{Comparison: c, Counts: c.Counts(),
		Sides: [2]diffSide{{Arg: sides[0], Source: c.A}, {Arg: sides[1], Source: c.B}}}
	rows := slices.Clone(c.Rows)
	slices.SortStableFunc(rows, func(x, y profile.Row) int { return verdictRank[x.Verdict] - verdictRank[y.Verdict] })
	for _, r := range rows {
		dr := diffRow{Row: r, AText: indentJSON(r.A), BText: indentJSON(r.B)}
		a, b := onlyDiffering(r.A, r.B)
		dr.ADiff, dr.BDiff, dr.Trimmed = indentJSON(a), indentJSON(b), !bytes.Equal(a, r.A)
		for _, x := range r.AEvidence {
			dr.AEvidence = append(dr.AEvidence, exchangeText(x))
		}
		for _, x := range r.BEvidence {
			dr.BEvidence = append(dr.BEvidence, exchangeText(x))
		}
		v.Rows = append(v.Rows, dr)
	}
	return v
}

// verdictRank orders the rows: what a partner must act on first.
var verdictRank = map[string]int{profile.VerdictDiffer: 0, profile.VerdictNotCompared: 1, profile.VerdictInfo: 2, profile.VerdictSame: 3}

// verdictLabel is a verdict as the text output shows it.
var verdictLabel = map[string]string{
	profile.VerdictDiffer: "DIFFER", profile.VerdictSame: "SAME",
	profile.VerdictNotCompared: "NOT COMPARED", profile.VerdictInfo: "INFO",
}

// writeText prints the differing rows (every row with all), then the
// counts and the verdict.
func (v *diffView) writeText(w io.Writer, all bool) {
	fmt.Fprintf(w, "conformance diff\n  A: %s\n  B: %s\n", v.Sides[0].describe(), v.Sides[1].describe())
	for _, r := range v.Rows {
		if !all && r.Verdict != profile.VerdictDiffer {
			continue
		}
		fmt.Fprintf(w, "\n%-12s %s  %s  %s\n", verdictLabel[r.Verdict], r.Choice, r.Section, r.Title)
		if r.Why != "" {
			fmt.Fprintf(w, "  %s\n", r.Why)
		}
		if r.Verdict == profile.VerdictSame {
			fmt.Fprintf(w, "  A and B: %s\n", r.A)
			continue
		}
		a, b := r.A, r.B
		if a2, b2 := onlyDiffering(a, b); r.Verdict == profile.VerdictDiffer && !bytes.Equal(a2, a) {
			fmt.Fprintln(w, "  (only the keys that differ)")
			a, b = a2, b2
		}
		fmt.Fprintf(w, "  A: %s\n     %s\n", a, evidenceLine(r.Row.AEvidence, r.AUnknown))
		fmt.Fprintf(w, "  B: %s\n     %s\n", b, evidenceLine(r.Row.BEvidence, r.BUnknown))
	}
	n := v.Counts
	fmt.Fprintf(w, "\n%d choices: %d same, %d differ, %d not compared, %d info\n",
		len(v.Rows), n[profile.VerdictSame], n[profile.VerdictDiffer], n[profile.VerdictNotCompared], n[profile.VerdictInfo])
	if d := n[profile.VerdictDiffer]; d > 0 {
		fmt.Fprintf(w, "A and B differ in %d %s\n", d, map[bool]string{true: "choice", false: "choices"}[d == 1])
	} else {
		fmt.Fprintln(w, "A and B agree on every choice both know")
	}
}

func (s diffSide) describe() string {
	var facts []string
	for _, f := range []string{s.Source.Name, s.Source.Target, s.Source.LearnedAt} {
		if f != "" && f != s.Arg {
			facts = append(facts, f)
		}
	}
	if len(facts) == 0 {
		return s.Arg
	}
	return s.Arg + " (" + strings.Join(facts, ", ") + ")"
}

// onlyDiffering keeps, of two long JSON objects, the keys whose values
// differ (a map of twelve validation classes differing in one shows that
// one); short ones, and other values, are returned as they are.
func onlyDiffering(a, b json.RawMessage) (json.RawMessage, json.RawMessage) {
	var ma, mb map[string]json.RawMessage
	if len(a)+len(b) < 240 || json.Unmarshal(a, &ma) != nil || json.Unmarshal(b, &mb) != nil {
		return a, b
	}
	removed := false
	for _, k := range slices.Collect(maps.Keys(ma)) {
		if vb, ok := mb[k]; ok && compactJSON(vb) == compactJSON(ma[k]) {
			delete(ma, k)
			delete(mb, k)
			removed = true
		}
	}
	if !removed {
		return a, b
	}
	ja, _ := json.Marshal(ma)
	jb, _ := json.Marshal(mb)
	return ja, jb
}

func compactJSON(m json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, m) != nil {
		return string(m)
	}
	return b.String()
}

func indentJSON(m json.RawMessage) string {
	var b bytes.Buffer
	if json.Indent(&b, m, "", "  ") != nil {
		return string(m)
	}
	return b.String()
}

// evidenceLine is one line of a side's evidence: its first request and
// the answer.
func evidenceLine(xs []profile.Exchange, unknown string) string {
	switch {
	case unknown != "":
		return "unknown: " + unknown
	case len(xs) == 0:
		return "no evidence (a hand-written or default profile)"
	}
	x := xs[0]
	line := fmt.Sprintf("%s %s %s → %d %s", x.Request.Method, x.Request.Path, cut(x.Request.Body, 80), x.Response.Status, cut(x.Response.Body, 100))
	if len(xs) > 1 {
		line += fmt.Sprintf(" (and %d more)", len(xs)-1)
	}
	return line
}

// cut shortens s to n runes on one line.
func cut(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// exchangeText is an exchange as the run's transcripts show one.
func exchangeText(x profile.Exchange) string {
	var b strings.Builder
	b.WriteString("--- request (credentials masked) ---\n")
	fmt.Fprintf(&b, "%s %s\n", x.Request.Method, x.Request.Path)
	writeMessage(&b, x.Request)
	b.WriteString("--- response ---\n")
	fmt.Fprintf(&b, "HTTP %d %s\n", x.Response.Status, http.StatusText(x.Response.Status))
	writeMessage(&b, x.Response)
	return b.String()
}

func writeMessage(b *strings.Builder, m profile.Message) {
	for _, k := range slices.Sorted(maps.Keys(m.Headers)) {
		fmt.Fprintf(b, "%s: %s\n", k, m.Headers[k])
	}
	if m.Body != "" {
		b.WriteString(m.Body)
		if m.BodyBytes > len(m.Body) {
			fmt.Fprintf(b, "… (%d bytes in all)", m.BodyBytes)
		}
		b.WriteString("\n")
	}
}

// writeJSON writes the Comparison as JSON.
func (v *diffView) writeJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v.Comparison); err != nil {
		return fmt.Errorf("write comparison: %w", err)
	}
	return nil
}

// writeHTML writes the comparison as one self-contained page in the style
// of report.html (suite.ReportCSS): the verdict, both sides, each
// difference with both values and both sides' evidence, then every row.
func (v *diffView) writeHTML(w io.Writer) error {
	if err := diffPage.Execute(w, v); err != nil {
		return fmt.Errorf("write HTML comparison: %w", err)
	}
	return nil
}

// Class is the verdict box's colour, as report.html's.
func (v *diffView) Class() string {
	if v.Agree() {
		return "pass"
	}
	return "fail"
}

// Headline is the verdict in a few words.
func (v *diffView) Headline() string {
	if d := v.Counts[profile.VerdictDiffer]; d > 0 {
		return fmt.Sprintf("A and B differ in %d %s", d, map[bool]string{true: "choice", false: "choices"}[d == 1])
	}
	return "A and B agree"
}

// Of returns the rows of one verdict.
func (v *diffView) Of(verdict string) []diffRow {
	var out []diffRow
	for _, r := range v.Rows {
		if r.Verdict == verdict {
			out = append(out, r)
		}
	}
	return out
}

var diffFuncs = template.FuncMap{
	"css":   func() template.CSS { return template.CSS(suite.ReportCSS) },
	"badge": func(verdict string) string { return diffBadge[verdict] },
	"spec":  func() string { return spec.Version },
}

// diffBadge maps a verdict to a badge class of report.html.
var diffBadge = map[string]string{
	profile.VerdictSame: "passed", profile.VerdictDiffer: "failed",
	profile.VerdictNotCompared: "skipped", profile.VerdictInfo: "skipped",
}

// diffPage is the page. Like report.html, everything is inline.
var diffPage = template.Must(template.New("diff").Funcs(diffFuncs).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Headline}} · Profile comparison: Partner API v{{spec}}</title>
<style>
{{css}}
.sides td:first-child { font-weight: 700; width: 2.5rem; }
.values { display: grid; grid-template-columns: 1fr 1fr; gap: .75rem; }
.values h4, details.evidence h4 { margin: .3rem 0 0; font-size: .9rem; color: var(--muted); }
.values pre { margin-top: .25rem; }
.badge, td.secn { white-space: nowrap; }
td pre { margin: 0; padding: .3rem .5rem; max-height: 14rem; overflow: auto; }
</style>
</head>
<body>
<header>
<h1>Profile comparison: Partner API v{{spec}}</h1>
<section class="verdict {{.Class}}" id="verdict">
<p class="headline">{{.Headline}}</p>
<p>{{len .Rows}} choices: {{index .Counts "same"}} same, {{index .Counts "differ"}} differ, {{index .Counts "not-compared"}} not compared, {{index .Counts "info"}} info</p>
</section>
</header>

<main>
<h2>Sides</h2>
<table class="sides">
<thead><tr><th>Side</th><th>Given as</th><th>Name</th><th>Target</th><th>Learned at</th><th>Suite</th></tr></thead>
<tbody>
{{- range $i, $s := .Sides}}
<tr><td>{{if eq $i 0}}A{{else}}B{{end}}</td><td class="mono">{{$s.Arg}}</td><td>{{$s.Source.Name}}</td><td class="mono">{{$s.Source.Target}}</td><td>{{$s.Source.LearnedAt}}</td><td>{{$s.Source.Suite}}</td></tr>
{{- end}}
</tbody>
</table>

{{- with .Of "differ"}}
<h2>Differences ({{len .}})</h2>
{{- range .}}
<article class="failure" id="{{.Choice}}">
<h3><span class="sec">{{.Section}}</span>{{.Choice}}</h3>
<p class="meta">{{.Title}}</p>
{{- if .Trimmed}}
<p class="muted">Only the keys that differ; the whole values are under Every choice.</p>
{{- end}}
<div class="values">
<div><h4>A</h4><pre>{{.ADiff}}</pre></div>
<div><h4>B</h4><pre>{{.BDiff}}</pre></div>
</div>
<details class="evidence"><summary>Evidence: A {{len .AEvidence}}, B {{len .BEvidence}} {{if eq (len .BEvidence) 1}}exchange{{else}}exchanges{{end}} (credentials masked)</summary>
{{- range .Evidence}}
<h4>{{.Name}}</h4>
{{- range .Exchanges}}
<pre class="transcript">{{.}}</pre>
{{- else}}
<p class="muted">{{with .Unknown}}Unknown: {{.}}{{else}}No evidence: a hand-written or default profile.{{end}}</p>
{{- end}}
{{- end}}
</details>
</article>
{{- end}}
{{- end}}

{{- with .Of "not-compared"}}
<h2>Not compared ({{len .}})</h2>
<p class="muted">A side could not learn these choices; the simulator plays the default profile's instead.</p>
<table class="notcompared">
<thead><tr><th>Choice</th><th>Section</th><th>Why</th></tr></thead>
<tbody>
{{- range .}}
<tr><td>{{.Choice}}<br><span class="muted">{{.Title}}</span></td><td class="secn">{{.Section}}</td><td>{{.Why}}</td></tr>
{{- end}}
</tbody>
</table>
{{- end}}

<h2>Every choice ({{len .Rows}})</h2>
<table class="rows">
<thead><tr><th>Verdict</th><th>Choice</th><th>Section</th><th>A</th><th>B</th></tr></thead>
<tbody>
{{- range .Rows}}
<tr class="row {{.Verdict}}" data-choice="{{.Choice}}"><td><span class="badge {{badge .Verdict}}">{{.Verdict}}</span></td><td>{{.Choice}}<br><span class="muted">{{.Title}}</span></td><td class="secn">{{.Section}}</td>
<td>{{if .AUnknown}}<span class="muted">unknown: {{.AUnknown}}</span>{{else}}<pre>{{.AText}}</pre>{{end}}</td>
<td>{{if .BUnknown}}<span class="muted">unknown: {{.BUnknown}}</span>{{else}}<pre>{{.BText}}</pre>{{end}}</td></tr>
{{- end}}
</tbody>
</table>
</main>
<footer>Written by conformance diff {{.Version}}. Where the spec says "not shown", each deployment chooses; this page compares the choices. Credentials are masked wherever a request is shown.</footer>
</body>
</html>
`))

// Version is the suite's version, for the footer.
func (v *diffView) Version() string { return suiteVersion() }
