package steps

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/cucumber/godog"
	"github.com/gavv/httpexpect/v2"
	"github.com/partner-v3/conformance-kit/features"
)

// Run runs the selected scenarios against the target and returns their
// results and the verdict. It returns an error wrapping ErrConfig or
// ErrConnection, and no Result, when the suite could not run at all; a
// target that breaks the spec is a Result with Verdict "fail", not an error.
//
// Scenarios run one at a time: every scenario spends the primary account's
// request budget (spec §8), so no two share none, and the @rate-limit ones
// must run alone.
//
// A run is fast against the simulator when its control API is given
// (AdminURL or AdminHandler, and AdminToken): counters are reset and the
// clock advanced instead of waiting. Without it the @rate-limit scenarios
// wait for real windows (two of RateWindow, about two minutes at the spec's
// limit).
func Run(ctx context.Context, cfg Config) (*Result, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	st, err := newSuiteState(ctx, &cfg)
	if err != nil {
		return nil, err
	}
	defer st.closeIdleConnections()
	tags := cfg.Tags
	if cfg.ReadOnly {
		tags += " && ~@writes"
	}
	fsys := cfg.Features
	if fsys == nil {
		fsys = features.FS
	}
	if n, err := countScenarios(fsys, tags); err != nil {
		return nil, fmt.Errorf("%w: read features: %w", ErrConfig, err)
	} else if n == 0 {
		return nil, fmt.Errorf("%w: the tag expression %q selects no scenario", ErrConfig, tags)
	}
	if err := st.preflight(ctx); err != nil {
		return nil, err
	}

	started := time.Now()
	suite := godog.TestSuite{
		Name:                "partner-api-v3-conformance",
		ScenarioInitializer: st.InitializeScenario,
		Options: &godog.Options{
			Format:         strings.Join(cfg.Formats, ","),
			Output:         cfg.Output,
			NoColors:       cfg.NoColors,
			Paths:          []string{"."},
			FS:             fsys,
			Tags:           tags,
			Strict:         true,
			Randomize:      cfg.Randomize,
			Concurrency:    1,
			DefaultContext: ctx,
			TestingT:       cfg.TestingT,
		},
	}
	if len(cfg.Formats) == 0 {
		suite.Options.Format = "progress"
		suite.Options.Output = discard{}
	}
	if code := suite.Run(); code == 2 {
		return nil, fmt.Errorf("%w: godog refused the options (formats %q, tags %q)", ErrConfig, suite.Options.Format, tags)
	}
	// An interrupted run has no verdict: its last scenarios failed only
	// because their requests were cancelled.
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w: interrupted after %s: %w", ErrInterrupted, time.Since(started).Round(time.Millisecond), err)
	}
	return st.result(started, tags)
}

// discard is an io.Writer for godog when no formatter output is wanted.
type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// newSuiteState builds the clients, the pacer and the control API client,
// and learns the rate limit.
func newSuiteState(ctx context.Context, cfg *Config) (*suiteState, error) {
	st := &suiteState{
		cfg:       *cfg,
		results:   &collector{},
		runID:     randomHex(4),
		campaigns: make(map[string]*campaignInfo),
	}
	var base http.RoundTripper
	if cfg.Handler != nil {
		base = httpexpect.Binder{Handler: cfg.Handler, TLS: &tls.ConnectionState{HandshakeComplete: true}}
	} else {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.TLSClientConfig = cfg.TLSConfig
		base = t
	}
	if cfg.hasAdmin() {
		var at http.RoundTripper
		if cfg.AdminHandler != nil {
			at = httpexpect.Binder{Handler: cfg.AdminHandler}
		} else {
			t := http.DefaultTransport.(*http.Transport).Clone()
			t.TLSClientConfig = cfg.TLSConfig
			at = t
		}
		adminURL := cfg.AdminURL
		if adminURL == "" {
			adminURL = "http://admin.in-process.invalid"
		}
		st.admin = &adminClient{base: adminURL, token: cfg.AdminToken, client: &http.Client{Transport: at, Timeout: cfg.Timeout}}
		// The simulator's own limits, unless the caller stated them.
		if cfg.RateLimit == 0 || cfg.RateWindow == 0 {
			limit, window, err := st.admin.rateConfig(ctx)
			if err != nil {
				return nil, fmt.Errorf("read the simulator's configuration: %w", err)
			}
			if cfg.RateLimit == 0 {
				cfg.RateLimit = limit
			}
			if cfg.RateWindow == 0 {
				cfg.RateWindow = window
			}
		}
		if err := st.admin.reset(ctx); err != nil {
			return nil, fmt.Errorf("reset the simulator: %w", err)
		}
	}
	if cfg.RateLimit == 0 {
		cfg.RateLimit = SpecRateLimit
	}
	if cfg.RateWindow == 0 {
		cfg.RateWindow = SpecRateWindow
	}
	st.cfg = *cfg
	st.pacer = newPacer(cfg.RateLimit, cfg.RateWindow, cfg.Log)
	if st.admin != nil {
		st.pacer.resetFn = st.admin.resetRate
	}
	st.client = &http.Client{
		Transport: &pacedTransport{base: base, pacer: st.pacer, primary: cfg.Primary, second: cfg.Second},
		Timeout:   cfg.Timeout,
		// A redirect would hide what the target answered.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return st, nil
}

// closeIdleConnections hangs up once the run is over: a target shutting
// down need not wait for our idle (HTTP/2) connections to go.
func (st *suiteState) closeIdleConnections() {
	st.client.CloseIdleConnections()
	if st.admin != nil {
		st.admin.client.CloseIdleConnections()
	}
}

// preflight sends one Campaign List request so that an unreachable target
// is a connection error (exit status 2), not a hundred failed scenarios.
func (st *suiteState) preflight(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(st.cfg.BaseURL, "/")+"/campaign/list", strings.NewReader(`{"limit": 1, "page": 1}`))
	if err != nil {
		return fmt.Errorf("%w: build the first request: %w", ErrConfig, err)
	}
	req.Header = credentialHeaders(st.cfg.Primary)
	req.Header.Set("Content-Type", "application/json")
	resp, err := st.client.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %s: %w%s", ErrConnection, st.cfg.BaseURL, err, tlsHint(err))
	}
	resp.Body.Close()
	return nil
}

// tlsHint suggests the fix for a certificate the client does not trust.
func tlsHint(err error) string {
	var unknown x509.UnknownAuthorityError
	var invalid x509.CertificateInvalidError
	var host x509.HostnameError
	if errors.As(err, &unknown) || errors.As(err, &invalid) || errors.As(err, &host) {
		return " (is the target's certificate trusted? use --ca-cert FILE, or --insecure for a development target)"
	}
	return ""
}

// countScenarios counts the scenarios the tag expression selects, so an
// expression that selects none is a usage error, not an empty pass.
func countScenarios(fsys fs.FS, tags string) (int, error) {
	suite := godog.TestSuite{Options: &godog.Options{FS: fsys, Paths: []string{"."}, Tags: tags}}
	feats, err := suite.RetrieveFeatures()
	if err != nil {
		return 0, err
	}
	n := 0
	for _, f := range feats {
		n += len(f.Pickles)
	}
	return n, nil
}

// result sums up the run.
func (st *suiteState) result(started time.Time, tags string) (*Result, error) {
	sections, spec, err := SpecSections()
	if err != nil {
		return nil, err
	}
	requests, waited, _ := st.pacer.stats()
	cfg := st.cfg
	r := &Result{
		SuiteVersion: cfg.SuiteVersion,
		SpecVersion:  SpecVersion,
		Spec:         spec,
		Target:       cfg.BaseURL,
		Tags:         tags,
		Started:      started.UTC(),
		Duration:     time.Since(started),
		RateLimit:    cfg.RateLimit,
		RateWindow:   cfg.RateWindow.String(),
		ControlAPI:   st.admin != nil,
		Requests:     requests,
		Waited:       waited,
	}
	st.results.mu.Lock()
	r.Scenarios = slices.Clone(st.results.scenarios)
	st.results.mu.Unlock()
	known := make(map[string]bool)
	for _, sec := range sections {
		known[sec.ID] = true
		sr := SectionResult{ID: sec.ID, Title: sec.Title, Normative: sec.Normative, Scenarios: []string{}}
		for _, sc := range r.Scenarios {
			if !coversSection(sc.Sections, sec.ID) {
				continue
			}
			sr.Scenarios = append(sr.Scenarios, fmt.Sprintf("[%s] %s", sc.Status, sc.Name))
			switch sc.Status {
			case StatusPassed:
				sr.Passed++
			case StatusFailed:
				sr.Failed++
			case StatusSkipped:
				sr.Skipped++
			}
		}
		r.Sections = append(r.Sections, sr)
	}
	normativeSkipped := 0
	for _, sc := range r.Scenarios {
		switch sc.Status {
		case StatusPassed:
			r.Passed++
		case StatusFailed:
			r.Failed++
		case StatusSkipped:
			r.Skipped++
			if sc.Normative() {
				normativeSkipped++
			}
		}
		for _, id := range sc.Sections {
			if !known[id] {
				r.Caveats = append(r.Caveats, fmt.Sprintf("scenario %q names section %s, which the spec does not have", sc.Name, id))
			}
		}
	}
	r.Verdict = VerdictFail
	if r.Failed == 0 && r.Passed > 0 {
		r.Verdict = VerdictPass
	}
	if cfg.RateLimit != SpecRateLimit || cfg.RateWindow != SpecRateWindow {
		r.Caveats = append(r.Caveats, fmt.Sprintf("the target was checked against a rate limit of %d per %s, not the spec's %d per %s (§8): the verdict is not a certification", cfg.RateLimit, cfg.RateWindow, SpecRateLimit, SpecRateWindow))
	}
	if cfg.Tags != DefaultTags {
		r.Caveats = append(r.Caveats, fmt.Sprintf("scenarios were selected with %q, not %q", cfg.Tags, DefaultTags))
	}
	if cfg.ReadOnly {
		r.Caveats = append(r.Caveats, "read-only run: the @writes scenarios (Add Contact success) were not run")
	}
	if normativeSkipped > 0 {
		r.Caveats = append(r.Caveats, fmt.Sprintf("%d normative scenarios were skipped (see their reasons): their rules were not verified", normativeSkipped))
	}
	if cfg.Handler != nil {
		r.Caveats = append(r.Caveats, "in-process run: requests never crossed a network, so HTTPS was not exercised")
	}
	// Every caveat so far makes the run partial; the next one holds for any
	// foreign target and does not.
	r.Certification = r.Verdict == VerdictPass && len(r.Caveats) == 0
	if st.admin == nil {
		r.Caveats = append(r.Caveats, "the 500 row of spec §7 was not verified: a foreign service cannot be made to fail on purpose (it is checked only against the simulator's control API)")
	}
	return r, nil
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
