package suite

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/partner-v3/conformance-kit/features"
	"github.com/partner-v3/conformance-kit/fixtures"
	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps"
	"github.com/partner-v3/conformance-kit/steps/internal/record"
	"github.com/partner-v3/conformance-kit/steps/matrix"
	"github.com/partner-v3/conformance-kit/steps/result"
)

// Verdicts of a run.
const (
	// VerdictPass: no selected scenario failed and at least one passed.
	// Warnings do not change it.
	VerdictPass = "pass"
	// VerdictFail: at least one scenario failed; the target does not
	// conform.
	VerdictFail = "fail"
	// VerdictNotRun: the suite did not run (the user's mistake, or no
	// connection); it says nothing of the target.
	VerdictNotRun = "not run"
	// VerdictIncomplete: no scenario failed, but a normative scenario could
	// not decide its rule even after trying again (a rate-limit burst
	// that crossed a window boundary each time): the rule is not verified,
	// so the run neither passes nor fails the target. Run again.
	VerdictIncomplete = "incomplete"
)

// SectionResult sums up the scenarios of one spec section.
type SectionResult struct {
	ID        string `json:"id"`
	Title     string `json:"title"`
	Normative bool   `json:"normative"`
	Passed    int    `json:"passed"`
	Failed    int    `json:"failed"`
	Skipped   int    `json:"skipped"`
	// Warnings counts the distinct warnings of the section's scenarios.
	Warnings  int      `json:"warnings"`
	Scenarios []string `json:"scenarios"`
}

// TLSSession is what the target's connections showed of TLS.
type TLSSession = record.TLS

// Digests name, by SHA-256, the scenarios, the step library and the matrix
// a run used, and the suite's source as a whole: what a version label
// cannot (VERSION=v9.0.0 make build relabels any build), so that a
// verifier tells the build of a release tag from another.
type Digests struct {
	// Scenarios is the digest of the .feature files run.
	Scenarios string `json:"scenarios"`
	// Steps is the digest of the step library and runner source.
	Steps string `json:"steps"`
	// Matrix is the digest of the matrix's source and of the spec facts it
	// is derived from (steps/matrix, simulator/spec): the rules and cells
	// the steps run.
	Matrix string `json:"matrix"`
	// Source is the SHA-256 of the three above: the suite's source digest,
	// which --version prints and a release states.
	Source string `json:"source"`
}

// sourceDigest is Digests.Source of the three others.
func sourceDigest(scenarios, steps, matrix string) string {
	h := sha256.New()
	fmt.Fprintf(h, "scenarios %s\nsteps %s\nmatrix %s\n", scenarios, steps, matrix)
	return hex.EncodeToString(h.Sum(nil))
}

// digestsOf are the digests of the scenarios of fsys run with this
// binary's steps and matrix.
func digestsOf(fsys fs.FS) Digests {
	d := Digests{Steps: stepsDigest(), Matrix: matrixDigest()}
	d.Scenarios, _ = digestTree(fsys, "", ".feature")
	d.Source = sourceDigest(d.Scenarios, d.Steps, d.Matrix)
	return d
}

// Result is the outcome of a Run.
type Result struct {
	SuiteVersion string `json:"suiteVersion"`
	// SuiteCommit is the commit the suite was built from (Config.SuiteCommit).
	SuiteCommit string        `json:"suiteCommit,omitempty"`
	SpecVersion string        `json:"specVersion"`
	Spec        string        `json:"spec"`
	Target      string        `json:"target"`
	Tags        string        `json:"tags"`
	Started     time.Time     `json:"started"`
	Ended       time.Time     `json:"ended"`
	Duration    time.Duration `json:"durationNs"`
	RateLimit   int           `json:"rateLimit"`
	RateWindow  string        `json:"rateWindow"`
	ControlAPI  bool          `json:"controlApi"`
	Requests    int64         `json:"requests"`
	// Waited is the time spent waiting for rate-limit windows, pacing and
	// unexpected 429s together.
	Waited time.Duration `json:"waitedNs"`
	// BudgetWaits are the waits caused by 429s to requests that do not
	// test §8 (a budget spent before the run): never held against the
	// target.
	BudgetWaits []result.BudgetWait `json:"budgetWaits"`
	// TLS lists each TLS session shape the target showed; empty for plain
	// HTTP and in-process runs.
	TLS     []TLSSession `json:"tls"`
	Digests Digests      `json:"digests"`
	// Profile is the deployment profile learned after the scenarios (issue
	// 20), nil when Config.NoProfile or when learning failed: it never
	// changes the verdict. WriteProfile writes it as profile.json.
	Profile *profile.Profile `json:"-"`
	// ProfileDigest is profile.Digest of the profile.json WriteProfile
	// wrote, recorded in the certificate.
	ProfileDigest string            `json:"profileDigest,omitempty"`
	Flags         map[string]string `json:"flags,omitempty"`

	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
	// Inconclusive counts the scenarios that could not decide their rule.
	Inconclusive int                      `json:"inconclusive"`
	Warnings     int                      `json:"warnings"`
	Scenarios    []*result.ScenarioResult `json:"scenarios"`
	Sections     []SectionResult          `json:"sections"`
	// Verdict is VerdictPass, VerdictFail, VerdictIncomplete or
	// VerdictNotRun.
	Verdict string `json:"verdict"`
	// NotRun says why the suite did not run; empty when it ran.
	NotRun string `json:"notRun,omitempty"`
	// Certification is true only for a passing run that is a full
	// certification: the whole normative profile with nothing skipped, the
	// spec's rate limit, a verified certificate chain, a released suite.
	Certification bool `json:"certification"`
	// Caveats say why a run is not a certification, and what it did not
	// verify.
	Caveats []string `json:"caveats"`

	// entries are every exchange of the run, for the HAR file.
	entries []record.Entry
}

// FailedScenarios returns the scenarios that failed.
func (r *Result) FailedScenarios() []*result.ScenarioResult {
	var out []*result.ScenarioResult
	for _, s := range r.Scenarios {
		if s.Status == result.StatusFailed {
			out = append(out, s)
		}
	}
	return out
}

// result sums up what the run's clients saw; judge adds the verdict once
// the scenarios ran.
func (r *run) result() *Result {
	res := &Result{
		SuiteVersion: r.cfg.SuiteVersion,
		SuiteCommit:  r.cfg.SuiteCommit,
		SpecVersion:  spec.Version,
		Spec:         spec.Title,
		Target:       r.Secrets.String(r.cfg.BaseURL),
		Tags:         r.plan.tags,
		Started:      r.started.UTC(),
		Ended:        time.Now().UTC(),
		RateLimit:    r.Pacer.Limit(),
		RateWindow:   r.Pacer.Window().String(),
		ControlAPI:   r.Control != nil,
		Requests:     r.Pacer.Requests(),
		Waited:       r.Pacer.Waited(),
		TLS:          r.recorder.TLS(),
		Flags:        maskedFlags(r.Secrets, r.cfg.Flags),
		Scenarios:    []*result.ScenarioResult{},
		Caveats:      []string{},
		entries:      r.recorder.Entries(),
	}
	res.Duration = res.Ended.Sub(res.Started)
	res.BudgetWaits = append(res.BudgetWaits, r.Pacer.Waits()...)
	res.Digests = digestsOf(r.plan.fsys)
	return res
}

// releasedRE matches a released suite version: a semantic version tag with
// no pre-release, build or commit suffix (git describe gives v1.2.0 on the
// tag, v1.2.0-3-gabc1234 after it, -dirty with local changes).
var releasedRE = regexp.MustCompile(`^v\d+\.\d+\.\d+$`)

// Released reports whether a suite version is a released build.
func Released(version string) bool { return releasedRE.MatchString(version) }

// judge sums up the scenarios, gives the verdict, and says whether the run
// is a certification and why not: of cfg, the run's configuration, and
// limit per window, the rate limit the run resolved (spec §8's, or
// another).
func (r *Result) judge(cfg Config, limit int, window time.Duration) {
	sections, _, _ := SpecSections()
	known := make(map[string]bool)
	for _, sec := range sections {
		known[sec.ID] = true
		sr := SectionResult{ID: sec.ID, Title: sec.Title, Normative: sec.Normative, Scenarios: []string{}}
		for _, sc := range r.Scenarios {
			counted := false
			switch sc.Status {
			case result.StatusPassed:
				if coversSection(sc.Sections, sec.ID) {
					sr.Passed++
					counted = true
				}
			case result.StatusFailed:
				if coversSection(sc.FailureSections(), sec.ID) {
					sr.Failed++
					counted = true
				}
			case result.StatusSkipped, result.StatusInconclusive:
				if coversSection(sc.Sections, sec.ID) {
					sr.Skipped++
					counted = true
				}
			}
			for _, w := range sc.Warnings {
				if coversSection(w.Sections, sec.ID) {
					sr.Warnings++
					counted = true
				}
			}
			if counted {
				sr.Scenarios = append(sr.Scenarios, fmt.Sprintf("[%s] %s", sc.Status, sc.Title()))
			}
		}
		r.Sections = append(r.Sections, sr)
	}
	normativeSkipped, unverified := 0, 0
	var inconclusive []string
	for _, sc := range r.Scenarios {
		unverified += len(sc.Unverified)
		switch sc.Status {
		case result.StatusInconclusive:
			r.Inconclusive++
			inconclusive = append(inconclusive, fmt.Sprintf("%q (%s)", sc.Title(), sc.Message))
		case result.StatusPassed:
			r.Passed++
		case result.StatusFailed:
			r.Failed++
		case result.StatusSkipped:
			r.Skipped++
			if sc.Normative() {
				normativeSkipped++
			}
		}
		r.Warnings += len(sc.Warnings)
		for _, id := range sc.Sections {
			if !known[id] {
				r.Caveats = append(r.Caveats, fmt.Sprintf("scenario %q names section %s, which the spec does not have", sc.Name, id))
			}
		}
	}
	switch {
	case r.Failed > 0:
		r.Verdict = VerdictFail
	case r.Inconclusive > 0:
		r.Verdict = VerdictIncomplete
		r.Caveats = append(r.Caveats, fmt.Sprintf("%d normative scenarios could not decide their rule even after trying again, so it was not verified (run again, at a quieter time): %s",
			r.Inconclusive, strings.Join(inconclusive, "; ")))
	case r.Passed > 0:
		r.Verdict = VerdictPass
	default:
		r.Verdict = VerdictFail
	}
	switch {
	case !Released(cfg.SuiteVersion):
		r.Caveats = append(r.Caveats, fmt.Sprintf("unreleased suite (version %q): only a released build (vX.Y.Z, the build of a release tag: README, \"Make a release\") certifies", cfg.SuiteVersion))
	case strings.HasSuffix(cfg.SuiteCommit, "-dirty"):
		r.Caveats = append(r.Caveats, fmt.Sprintf("suite %s was built from a modified tree (commit %s): no release tag names that source, so it does not certify", cfg.SuiteVersion, cfg.SuiteCommit))
	}
	if cfg.Features != nil {
		if own, _ := digestTree(features.FS, "", ".feature"); own != r.Digests.Scenarios {
			r.Caveats = append(r.Caveats, "the scenarios are not the suite's own (--features): their digest differs from the embedded ones")
		}
	}
	if limit != spec.RateLimit || window != spec.RateWindow {
		r.Caveats = append(r.Caveats, fmt.Sprintf("the target was checked against a rate limit of %d per %s, not the spec's %d per %s (§8): the verdict is not a certification", limit, window, spec.RateLimit, spec.RateWindow))
	}
	if cfg.Tags != DefaultTags {
		r.Caveats = append(r.Caveats, fmt.Sprintf("scenarios were selected with %q, not %q", cfg.Tags, DefaultTags))
	}
	if cfg.ReadOnly {
		r.Caveats = append(r.Caveats, "read-only run: the @writes scenarios (Add Contact success) were not run")
	}
	if unverified > 0 {
		r.Caveats = append(r.Caveats, fmt.Sprintf("%d cells of the matrix were not checked for a reason of the run's own (no second account, a read-only run): their rules were not verified there (see each scenario's unverified cells)", unverified))
	}
	if normativeSkipped > 0 {
		r.Caveats = append(r.Caveats, fmt.Sprintf("%d normative scenarios were skipped (see their reasons): their rules were not verified", normativeSkipped))
	}
	switch {
	case cfg.Handler != nil:
		r.Caveats = append(r.Caveats, "in-process run: requests never crossed a network, so HTTPS was not exercised")
	case !cfg.verifiesTLS():
		r.Caveats = append(r.Caveats, "the target's certificate chain was not verified (--insecure): the run proves nothing about who answered")
	case len(r.TLS) == 0:
		r.Caveats = append(r.Caveats, "no exchange used TLS, so no certificate chain was verified")
	}
	// Every caveat so far makes the run partial; the next one holds for any
	// foreign target and does not.
	r.Certification = r.Verdict == VerdictPass && len(r.Caveats) == 0
	if !r.ControlAPI {
		r.Caveats = append(r.Caveats, "the 500 row of spec §7 was not verified: a foreign service cannot be made to fail on purpose (it is checked only against the simulator's control API)")
	}
}

// coversSection reports whether a scenario tagged with sections checks the
// section id: its own tag, or a subsection's (2.1 counts for 2).
func coversSection(sections []string, id string) bool {
	for _, s := range sections {
		if s == id || strings.HasPrefix(s, id+".") {
			return true
		}
	}
	return false
}

// Section is one section of the spec, from the suite's own copy of the
// section list (fixtures/spec-sections.json).
type Section struct {
	ID        string `json:"id"`
	Title     string `json:"title"`
	Normative bool   `json:"normative"`
}

// SpecSections returns the suite's copy of the spec's section list and the
// spec's title.
func SpecSections() ([]Section, string, error) {
	b, err := fixtures.FS.ReadFile("spec-sections.json")
	if err != nil {
		return nil, "", fmt.Errorf("read spec section list: %w", err)
	}
	var doc struct {
		Spec     string    `json:"spec"`
		Sections []Section `json:"sections"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, "", fmt.Errorf("decode spec section list: %w", err)
	}
	return doc.Sections, doc.Spec, nil
}

// runnerSource is this package's source, part of the steps digest: the
// runner decides verdicts and certifications.
//
//go:embed *.go
var runnerSource embed.FS

// stepsDigest is the SHA-256 of the step library and the runner, tests
// left out.
func stepsDigest() string {
	h := sha256.New()
	for _, t := range []struct {
		fsys   fs.FS
		prefix string
	}{{steps.Source, "steps/"}, {runnerSource, "steps/suite/"}} {
		sum, _ := digestTree(t.fsys, t.prefix, ".go")
		h.Write([]byte(sum))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// matrixDigest is the SHA-256 of the matrix and the spec facts it is
// derived from, tests left out.
func matrixDigest() string {
	h := sha256.New()
	for _, t := range []struct {
		fsys   fs.FS
		prefix string
	}{{matrix.Source, "steps/matrix/"}, {spec.Source, "simulator/spec/"}} {
		sum, _ := digestTree(t.fsys, t.prefix, ".go")
		h.Write([]byte(sum))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// digestTree is the SHA-256 of every file of fsys whose name ends in ext
// (Go tests left out), each hashed with its path, in path order.
func digestTree(fsys fs.FS, prefix, ext string) (string, error) {
	var paths []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ext) && !strings.HasSuffix(p, "_test.go") {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("walk the sources: %w", err)
	}
	slices.Sort(paths)
	h := sha256.New()
	for _, p := range paths {
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return "", fmt.Errorf("read %s: %w", p, err)
		}
		fmt.Fprintf(h, "%s%s\x00%d\x00", prefix, p, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
