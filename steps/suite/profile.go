package suite

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/steps/internal/record"
	"github.com/partner-v3/conformance-kit/steps/learn"
)

// Learn learns the target's deployment profile (issue 20): the same
// configuration, clients and preflight as Run, then steps/learn's probes
// instead of the scenarios. Errors are Run's: ErrConfig, ErrConnection,
// ErrPreflight (with what to fix), or the probes' own failure.
func Learn(ctx context.Context, cfg Config) (_ *profile.Profile, err error) {
	cfg = cfg.withDefaults()
	secrets := cfg.secrets()
	defer func() { err = hideSecrets(secrets, err) }()
	base, err := cfg.parse()
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
	secrets = r.secrets
	if err := r.preflight(ctx); err != nil {
		return nil, err
	}
	return r.learn(ctx, runID)
}

// learn runs the probes of steps/learn with the run's clients.
func (r *run) learn(ctx context.Context, runID string) (*profile.Profile, error) {
	ctx = record.WithScenario(ctx, "profile")
	return learn.Learn(ctx, learn.Env{
		BaseURL:      r.base,
		Client:       r.client,
		Pacer:        r.pacer,
		Primary:      r.cfg.Primary,
		Second:       r.cfg.Second,
		Control:      r.control,
		TLSConfig:    r.cfg.TLSConfig,
		InProcess:    r.cfg.Handler != nil,
		ReadOnly:     r.cfg.ReadOnly,
		RateLimit:    r.cfg.RateLimit,
		RateWindow:   r.cfg.RateWindow,
		EmailDomain:  r.cfg.EmailDomain,
		RunID:        runID,
		Log:          r.cfg.Log,
		SuiteVersion: r.cfg.SuiteVersion,
		Redact:       r.secrets.String,
	})
}

// learnAfterRun learns the profile after the scenarios of Run. A failure
// is logged and leaves the profile out: it never changes the verdict.
func (r *run) learnAfterRun(ctx context.Context, runID string) *profile.Profile {
	started := time.Now()
	p, err := r.learn(ctx, runID)
	if err != nil {
		fmt.Fprintf(r.cfg.Log, "conformance: the deployment profile could not be learned (the verdict stands): %v\n", hideSecrets(r.secrets, err))
		return nil
	}
	fmt.Fprintf(r.cfg.Log, "conformance: learned the deployment profile: %d requests, %s\n", p.Source.Requests, time.Since(started).Round(time.Millisecond))
	return p
}

// WriteProfile writes the run's profile as profile.json's bytes and
// records their digest (ProfileDigest) for the certificate; it writes
// nothing when the run has no profile.
func (r *Result) WriteProfile(w io.Writer) error {
	if r.Profile == nil {
		return nil
	}
	b, err := r.Profile.Marshal()
	if err != nil {
		return err
	}
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("write profile: %w", err)
	}
	r.ProfileDigest = profile.Digest(b)
	return nil
}
