package suite

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/cucumber/godog"
	"github.com/gavv/httpexpect/v2"

	"github.com/partner-v3/conformance-kit/features"
	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps"
	"github.com/partner-v3/conformance-kit/steps/internal/mask"
	"github.com/partner-v3/conformance-kit/steps/internal/pace"
	"github.com/partner-v3/conformance-kit/steps/internal/record"
	"github.com/partner-v3/conformance-kit/steps/internal/wire"
)

// Run runs the selected scenarios against the target and returns their
// results and the verdict. A target that breaks the spec is a Result with
// Verdict "fail", not an error. Run returns an error (see ErrConfig,
// ErrConnection, ErrPreflight, ErrInterrupted) when the suite could not run
// at all; with ErrConnection and ErrPreflight the Result says why.
//
// Scenarios run one at a time: every scenario spends the primary account's
// request budget (spec §8), and the @rate-limit ones must run alone.
//
// A run is fast against the simulator when its control API is given
// (AdminURL or AdminHandler, and AdminToken): counters are reset and the
// clock advanced instead of waiting. Without it the @rate-limit scenarios
// wait for real windows (two of RateWindow, about two minutes at the spec's
// limit).
func Run(ctx context.Context, cfg Config) (_ *Result, err error) {
	cfg = cfg.withDefaults()
	// An error is printed, and a preflight's written into the reports:
	// it may quote the target's answer, which may echo a credential.
	secrets := cfg.secrets()
	defer func() { err = hideSecrets(secrets, err) }()
	base, err := cfg.parse()
	if err != nil {
		return nil, err
	}
	tags := cfg.Tags
	if cfg.ReadOnly {
		tags += " && ~@writes"
	}
	fsys := cfg.Features
	if fsys == nil {
		fsys = features.FS
	}
	plan, err := planScenarios(fsys, tags)
	if err != nil {
		return nil, err
	}
	runID := randomHex(4)
	r, err := newRun(ctx, cfg, base, runID)
	if err != nil {
		return nil, err
	}
	defer r.closeIdleConnections()
	defer r.deleteAccounts(ctx)
	cfg = r.cfg // with the throwaway accounts, if any
	secrets = r.secrets
	started := time.Now()
	if err := r.preflight(ctx); err != nil {
		err = hideSecrets(secrets, err)
		res := r.result(started, tags, fsys)
		res.Verdict, res.NotRun = VerdictNotRun, err.Error()
		return res, err
	}
	lib := steps.New(steps.Env{
		BaseURL:     base,
		Client:      r.client,
		Primary:     cfg.Primary,
		Second:      cfg.Second,
		Pacer:       r.pacer,
		Control:     r.control,
		InProcess:   cfg.Handler != nil,
		ReadOnly:    cfg.ReadOnly,
		EmailDomain: cfg.EmailDomain,
		RunID:       runID,
		Examples:    plan.examples,
		Secrets:     r.secrets,
		Observer:    r.observer,
	})
	// godog's pretty and progress formatters without their own count: the
	// verdict's is the run's only one (footer.go).
	formats := make([]string, len(cfg.Formats))
	for i, f := range cfg.Formats {
		formats[i] = countlessFormat(f)
	}
	suite := godog.TestSuite{
		Name:                "partner-api-v3-conformance",
		ScenarioInitializer: lib.InitializeScenario,
		Options: &godog.Options{
			Format:         strings.Join(formats, ","),
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
	res := r.result(started, tags, fsys)
	// What the whole-run observer found that no scenario has reported
	// (the answers after its scenario, or all when it did not run) fails
	// the run too; the profile's probes below are not held.
	lib.FinishObserver()
	res.Scenarios = lib.Results()
	for _, sc := range res.Scenarios {
		sc.FeatureName = plan.featureNames[sc.Feature]
	}
	res.judge(r.cfg)
	// The deployment's choices where the spec is silent (issue 20): after
	// the verdict, which they never change.
	if !cfg.NoProfile {
		res.Profile = r.learnAfterRun(ctx, runID)
	}
	return res, nil
}

// discard is an io.Writer for godog when no formatter output is wanted.
type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// plan is what the run learns from the feature files before it starts.
type plan struct {
	count        int               // scenarios the tags select
	examples     map[string]string // outline rows by steps.ExampleKey
	featureNames map[string]string // Feature: title by file
}

// planScenarios parses the features once: the number of scenarios the tag
// expression selects (none is a usage error, not an empty pass), the values
// of every outline row (reports name rows by them) and the feature titles.
// godog numbers the gherkin nodes of a parse deterministically, so the ids
// match those of the run.
func planScenarios(fsys fs.FS, tags string) (*plan, error) {
	suite := godog.TestSuite{Options: &godog.Options{FS: fsys, Paths: []string{"."}, Tags: tags}}
	feats, err := suite.RetrieveFeatures()
	if err != nil {
		return nil, fmt.Errorf("%w: read features: %w", ErrConfig, err)
	}
	p := &plan{examples: map[string]string{}, featureNames: map[string]string{}}
	for _, f := range feats {
		p.count += len(f.Pickles)
		if f.GherkinDocument.Feature == nil {
			continue
		}
		p.featureNames[f.Uri] = f.GherkinDocument.Feature.Name
		rows := map[string]string{}
		for _, child := range f.GherkinDocument.Feature.Children {
			if child.Scenario == nil {
				continue
			}
			for _, ex := range child.Scenario.Examples {
				if ex.TableHeader == nil {
					continue
				}
				for _, row := range ex.TableBody {
					var kv []string
					for i, c := range row.Cells {
						if i < len(ex.TableHeader.Cells) {
							kv = append(kv, ex.TableHeader.Cells[i].Value+"="+c.Value)
						}
					}
					rows[row.Id] = strings.Join(kv, ", ")
				}
			}
		}
		for _, pk := range f.Pickles {
			if len(pk.AstNodeIds) > 1 {
				if v, ok := rows[pk.AstNodeIds[len(pk.AstNodeIds)-1]]; ok {
					p.examples[steps.ExampleKey(pk.Uri, pk.AstNodeIds)] = v
				}
			}
		}
	}
	if p.count == 0 {
		return nil, fmt.Errorf("%w: the tag expression %q selects no scenario", ErrConfig, tags)
	}
	return p, nil
}

// run holds one run's clients.
type run struct {
	cfg       Config
	secrets   *mask.Secrets // cfg.secrets(), the throwaway accounts' included
	base      *url.URL
	client    *http.Client // partner requests: paced, budget-aware, recorded
	recorder  *record.Transport
	pacer     *pace.Pacer
	control   *control.Client // nil without a control API
	adminHTTP *http.Client
	observer  *steps.Observer // every answer held to what the spec says of every response (rule every-answer)
	// throwaway are the accounts the run made (Config.EphemeralAccounts),
	// deleted at its end.
	throwaway []string
}

// createAccounts makes the run's primary and second accounts through the
// control API; on failure it deletes what it made.
func (r *run) createAccounts(ctx context.Context, cfg *Config, runID string) error {
	for _, acct := range []struct {
		role string
		dst  *control.Credentials
	}{{"primary", &cfg.Primary}, {"second", &cfg.Second}} {
		a, err := r.control.CreateAccount(ctx, simulator.AccountSpec{Name: "conformance run " + runID + " (" + acct.role + ")"})
		if err != nil {
			r.deleteAccounts(ctx)
			return fmt.Errorf("%w: make the run's %s account (--ephemeral-accounts): %w", ErrConnection, acct.role, err)
		}
		r.throwaway = append(r.throwaway, a.AccountID)
		*acct.dst = control.CredentialsOf(a.Account)
		// In full: it dies with the run, and names the run's requests in
		// the simulator's journal.
		fmt.Fprintf(r.cfg.Log, "made throwaway %s account %s\n", acct.role, a.AccountID)
	}
	return nil
}

// deleteAccounts deletes the throwaway accounts, even when the run was
// interrupted. A failure is logged, not held against the target: the
// verdict stands, and the simulator's DELETE /accounts/{id} can be called
// again.
func (r *run) deleteAccounts(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	for _, id := range r.throwaway {
		if err := r.control.DeleteAccount(ctx, id); err != nil {
			fmt.Fprintf(r.cfg.Log, "could not delete throwaway account %s: %v\n", id, err)
			continue
		}
		fmt.Fprintf(r.cfg.Log, "deleted throwaway account %s\n", id)
	}
	r.throwaway = nil
}

// newRun builds the clients, learns the rate limit (from the simulator's
// control API, when there is one, which it also resets, or in which it
// makes the run's throwaway accounts) and the pacer.
func newRun(ctx context.Context, cfg Config, base *url.URL, runID string) (*run, error) {
	r := &run{cfg: cfg, base: base}
	var transport http.RoundTripper
	if cfg.Handler != nil {
		transport = httpexpect.Binder{Handler: cfg.Handler, TLS: &tls.ConnectionState{HandshakeComplete: true}}
	} else {
		// Steps choose per request how it travels (wire.WithRoute): the
		// shared pool, a fresh connection, HTTP/1.1 or HTTP/2.
		transport = wire.New(cfg.TLSConfig)
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
		r.adminHTTP = &http.Client{Transport: at, Timeout: cfg.Timeout}
		// Its errors quote the control API's answers, and end up in the
		// reports: they hide the run's secrets (the token among them).
		r.control = &control.Client{BaseURL: adminURL, Token: cfg.AdminToken, HTTP: r.adminHTTP, Redact: cfg.secrets().String}
		// The simulator's own limits, unless the caller stated them.
		if cfg.RateLimit == 0 || cfg.RateWindow == 0 {
			sim, err := r.control.Config(ctx)
			if err != nil {
				return nil, fmt.Errorf("%w: read the simulator's configuration: %w%s", ErrConnection, err, tlsHint(err))
			}
			if cfg.RateLimit == 0 {
				cfg.RateLimit = sim.RateLimit
			}
			if cfg.RateWindow == 0 {
				cfg.RateWindow = sim.RateWindow
			}
		}
		if cfg.EphemeralAccounts {
			// Other runs may share the simulator: make our own accounts and
			// reset nothing of theirs.
			if err := r.createAccounts(ctx, &cfg, runID); err != nil {
				return nil, err
			}
		} else if err := r.control.Reset(ctx); err != nil {
			return nil, fmt.Errorf("%w: reset the simulator: %w", ErrConnection, err)
		}
	}
	if cfg.RateLimit == 0 {
		cfg.RateLimit = spec.RateLimit
	}
	if cfg.RateWindow == 0 {
		cfg.RateWindow = spec.RateWindow
	}
	r.cfg = cfg
	r.secrets = cfg.secrets()
	if r.control != nil {
		r.control.Redact = r.secrets.String // the throwaway accounts' too
	}
	r.pacer = pace.New(cfg.RateLimit, cfg.RateWindow, cfg.Log)
	r.pacer.Mask = mask.Credential
	if r.control != nil {
		r.pacer.Reset = r.control.ResetBudget
	}
	r.recorder = &record.Transport{Base: transport, Verified: cfg.verifiesTLS() && cfg.Handler == nil, Secrets: r.secrets}
	// Under the pacer, so that it sees every attempt (an unexpected 429
	// the pacer sends again too), the preflight's and the scenarios' alike.
	r.observer = steps.NewObserver(cfg.Primary, cfg.Second, r.secrets)
	r.client = &http.Client{
		Transport: &pace.Transport{
			Base:    r.observer.Transport(r.recorder),
			Pacer:   r.pacer,
			Primary: cfg.Primary,
			Second:  cfg.Second,
			// Per attempt, after the pacer's wait: a wait for the window
			// is the suite's own and never a timeout of the target.
			Timeout: cfg.Timeout,
		},
		// A redirect would hide what the target answered.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return r, nil
}

// closeIdleConnections hangs up once the run is over: a target shutting
// down need not wait for our idle (HTTP/2) connections to go.
func (r *run) closeIdleConnections() {
	r.client.CloseIdleConnections()
	if r.adminHTTP != nil {
		r.adminHTTP.CloseIdleConnections()
	}
}
