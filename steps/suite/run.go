package suite

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/cucumber/godog"
	"github.com/gavv/httpexpect/v2"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps"
	"github.com/partner-v3/conformance-kit/steps/answer"
	"github.com/partner-v3/conformance-kit/steps/internal/mask"
	"github.com/partner-v3/conformance-kit/steps/internal/pace"
	"github.com/partner-v3/conformance-kit/steps/internal/record"
	"github.com/partner-v3/conformance-kit/steps/internal/target"
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
	r, err := begin(ctx, cfg, true)
	if r == nil {
		return nil, err
	}
	defer r.close(ctx)
	if err != nil {
		res := r.result()
		res.Verdict, res.NotRun = VerdictNotRun, err.Error()
		return res, err
	}
	defer func() { err = hideSecrets(r.Secrets, err) }()
	lib := steps.New(steps.Env{Target: r.Target, Examples: r.plan.examples, Observer: r.observer})
	// godog's pretty and progress formatters without their own count: the
	// verdict's is the run's only one (footer.go).
	formats := make([]string, len(r.cfg.Formats))
	for i, f := range r.cfg.Formats {
		formats[i] = countlessFormat(f)
	}
	suite := godog.TestSuite{
		Name:                "partner-api-v3-conformance",
		ScenarioInitializer: lib.InitializeScenario,
		Options: &godog.Options{
			Format:         strings.Join(formats, ","),
			Output:         r.cfg.Output,
			NoColors:       r.cfg.NoColors,
			Paths:          []string{"."},
			FS:             r.plan.fsys,
			Tags:           r.plan.tags,
			Strict:         true,
			Randomize:      r.cfg.Randomize,
			Concurrency:    1,
			DefaultContext: ctx,
			TestingT:       r.cfg.TestingT,
		},
	}
	if len(r.cfg.Formats) == 0 {
		suite.Options.Format = "progress"
		suite.Options.Output = discard{}
	}
	if code := suite.Run(); code == 2 {
		return nil, fmt.Errorf("%w: godog refused the options (formats %q, tags %q)", ErrConfig, suite.Options.Format, r.plan.tags)
	}
	// An interrupted run has no verdict: its last scenarios failed only
	// because their requests were cancelled.
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w: interrupted after %s: %w", ErrInterrupted, time.Since(r.started).Round(time.Millisecond), err)
	}
	res := r.result()
	// What the whole-run observer found that no scenario has reported
	// (the answers after its scenario, or all when it did not run) fails
	// the run too; the profile's probes below are not held.
	lib.FinishObserver()
	res.Scenarios = lib.Results()
	for _, sc := range res.Scenarios {
		sc.FeatureName = r.plan.featureNames[sc.Feature]
	}
	res.judge(r.cfg, r.Pacer.Limit(), r.Pacer.Window())
	// The deployment's choices where the spec is silent (issue 20): after
	// the verdict, which they never change.
	if !r.cfg.NoProfile {
		res.Profile = r.learnAfterRun(ctx)
	}
	return res, nil
}

// begin starts a run, for Run and Learn alike: the configuration checked
// (with its documented defaults), the scenarios planned when the run has
// them (before any request: a tag expression that selects nothing is a
// usage error), the run resolved once (resolve), then the preflight. Its
// errors hide the run's secrets. r is nil unless the run was resolved;
// then the caller closes it, also when err is the preflight's (which Run
// reports in its Result).
func begin(ctx context.Context, cfg Config, scenarios bool) (r *run, err error) {
	cfg = cfg.withDefaults()
	// An error is printed, and a preflight's written into the reports:
	// it may quote the target's answer, which may echo a credential.
	// Until the run is resolved, the secrets are those the caller gave.
	given := cfg.secrets()
	defer func() {
		if r != nil {
			err = hideSecrets(r.Secrets, err) // the throwaway accounts' too
		} else {
			err = hideSecrets(given, err)
		}
	}()
	base, err := cfg.parse()
	if err != nil {
		return nil, err
	}
	var p *plan
	if scenarios {
		if p, err = planScenarios(cfg.featureFS(), cfg.selection()); err != nil {
			return nil, err
		}
	}
	if r, err = resolve(ctx, cfg, base, given, p); err != nil {
		return nil, err
	}
	return r, r.preflight(ctx)
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
	tags         string            // the tag expression run (ReadOnly's included)
	fsys         fs.FS             // the features
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
	p := &plan{tags: tags, fsys: fsys, examples: map[string]string{}, featureNames: map[string]string{}}
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

// run is one run of the suite, resolved once from its Config (resolve)
// and never changed after: the steps and the profile's probes take its
// Target, the reports the rest.
type run struct {
	target.Target
	// cfg is the configuration as given, with its documented defaults.
	// What the run resolved (the accounts, the rate limit) is in Target
	// and its Pacer, never written back here.
	cfg       Config
	plan      *plan // the scenarios; nil for Learn
	recorder  *record.Transport
	adminHTTP *http.Client     // nil without a control API
	observer  *answer.Observer // every answer held to what the spec says of every response (rule every-answer)
	// throwaway are the accounts the run made (Config.EphemeralAccounts),
	// deleted by close.
	throwaway []string
	// started is when the run was resolved, before its preflight.
	started time.Time
}

// resolve builds the run from its checked configuration, once: the
// transport to the target; the control API's client; the rate limit
// (the caller's, else the simulator's, else the spec's); the accounts
// (the caller's, or throwaway ones made through the control API, which is
// otherwise reset); the secrets (given's, or the list with the throwaway
// accounts in it); the pacer, the recorder, the observer and the paced
// client.
func resolve(ctx context.Context, cfg Config, base *url.URL, given *mask.Secrets, p *plan) (*run, error) {
	runID := randomHex(4)
	var transport http.RoundTripper
	if cfg.Handler != nil {
		transport = httpexpect.Binder{Handler: cfg.Handler, TLS: &tls.ConnectionState{HandshakeComplete: true}}
	} else {
		// Steps choose per request how it travels (wire.WithRoute): the
		// shared pool, a fresh connection, HTTP/1.1 or HTTP/2.
		transport = wire.New(cfg.TLSConfig)
	}
	limit, window := cfg.RateLimit, cfg.RateWindow
	primary, second, secrets := cfg.Primary, cfg.Second, given
	var ctl *control.Client
	var adminHTTP *http.Client
	var throwaway []string
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
		adminHTTP = &http.Client{Transport: at, Timeout: cfg.Timeout}
		// Its errors quote the control API's answers, and end up in the
		// reports: they hide the run's secrets (the token among them).
		ctl = &control.Client{BaseURL: adminURL, Token: cfg.AdminToken, HTTP: adminHTTP, Redact: given.String}
		// The simulator's own limits, unless the caller stated them.
		if limit == 0 || window == 0 {
			sim, err := ctl.Config(ctx)
			if err != nil {
				return nil, fmt.Errorf("%w: read the simulator's configuration: %w%s", ErrConnection, err, tlsHint(err))
			}
			if limit == 0 {
				limit = sim.RateLimit
			}
			if window == 0 {
				window = sim.RateWindow
			}
		}
		if cfg.EphemeralAccounts {
			// Other runs may share the simulator: make our own accounts and
			// reset nothing of theirs.
			var err error
			if primary, second, throwaway, err = makeAccounts(ctx, ctl, cfg.Log, runID); err != nil {
				return nil, err
			}
			secrets = secretsOf(cfg.AdminToken, primary, second)
			// From now on its errors hide the throwaway accounts too.
			ctl = &control.Client{BaseURL: ctl.BaseURL, Token: ctl.Token, HTTP: ctl.HTTP, Redact: secrets.String}
		} else if err := ctl.Reset(ctx); err != nil {
			return nil, fmt.Errorf("%w: reset the simulator: %w", ErrConnection, err)
		}
	}
	if limit == 0 {
		limit = spec.RateLimit
	}
	if window == 0 {
		window = spec.RateWindow
	}
	pacer := pace.New(limit, window, cfg.Log)
	pacer.Mask = mask.Credential
	if ctl != nil {
		pacer.Reset = ctl.ResetBudget
	}
	recorder := &record.Transport{Base: transport, Verified: cfg.verifiesTLS() && cfg.Handler == nil, Secrets: secrets}
	// Under the pacer, so that it sees every attempt (an unexpected 429
	// the pacer sends again too), the preflight's and the scenarios' alike.
	observer := answer.NewObserver(primary, second, secrets)
	client := &http.Client{
		Transport: &pace.Transport{
			Base:    observer.Transport(recorder),
			Pacer:   pacer,
			Primary: primary,
			Second:  second,
			// Per attempt, after the pacer's wait: a wait for the window
			// is the suite's own and never a timeout of the target.
			Timeout: cfg.Timeout,
		},
		// A redirect would hide what the target answered.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return &run{
		Target: target.Target{
			BaseURL:     base,
			Client:      client,
			Pacer:       pacer,
			Primary:     primary,
			Second:      second,
			Control:     ctl,
			InProcess:   cfg.Handler != nil,
			ReadOnly:    cfg.ReadOnly,
			EmailDomain: cfg.EmailDomain,
			RunID:       runID,
			Secrets:     secrets,
		},
		cfg:       cfg,
		plan:      p,
		recorder:  recorder,
		adminHTTP: adminHTTP,
		observer:  observer,
		throwaway: throwaway,
		started:   time.Now(),
	}, nil
}

// makeAccounts makes the run's primary and second accounts through the
// control API; on failure it deletes what it made.
func makeAccounts(ctx context.Context, ctl *control.Client, log io.Writer, runID string) (primary, second control.Credentials, made []string, err error) {
	for _, acct := range []struct {
		role string
		dst  *control.Credentials
	}{{"primary", &primary}, {"second", &second}} {
		a, err := ctl.CreateAccount(ctx, simulator.AccountSpec{Name: "conformance run " + runID + " (" + acct.role + ")"})
		if err != nil {
			deleteAccounts(ctx, ctl, log, made)
			return primary, second, nil, fmt.Errorf("%w: make the run's %s account (--ephemeral-accounts): %w", ErrConnection, acct.role, err)
		}
		made = append(made, a.AccountID)
		*acct.dst = control.CredentialsOf(a.Account)
		// In full: it dies with the run, and names the run's requests in
		// the simulator's journal.
		fmt.Fprintf(log, "made throwaway %s account %s\n", acct.role, a.AccountID)
	}
	return primary, second, made, nil
}

// deleteAccounts deletes throwaway accounts, even when the run was
// interrupted. A failure is logged, not held against the target: the
// verdict stands, and the simulator's DELETE /accounts/{id} can be called
// again.
func deleteAccounts(ctx context.Context, ctl *control.Client, log io.Writer, ids []string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	for _, id := range ids {
		if err := ctl.DeleteAccount(ctx, id); err != nil {
			fmt.Fprintf(log, "could not delete throwaway account %s: %v\n", id, err)
			continue
		}
		fmt.Fprintf(log, "deleted throwaway account %s\n", id)
	}
}

// close ends the run: it deletes the throwaway accounts, then hangs up
// (a target shutting down need not wait for our idle HTTP/2 connections
// to go).
func (r *run) close(ctx context.Context) {
	deleteAccounts(ctx, r.Control, r.cfg.Log, r.throwaway)
	r.Client.CloseIdleConnections()
	if r.adminHTTP != nil {
		r.adminHTTP.CloseIdleConnections()
	}
}
