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
	r, err := begin(ctx, cfg, false)
	if r == nil {
		return nil, err
	}
	defer r.close(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { err = hideSecrets(r.Secrets, err) }()
	return r.learn(ctx)
}

// learn runs the probes of steps/learn against the run's target.
func (r *run) learn(ctx context.Context) (*profile.Profile, error) {
	ctx = record.WithScenario(ctx, "profile")
	// The rate limit is the Pacer's, the one the run resolved.
	return learn.Learn(ctx, learn.Env{Target: r.Target, TLSConfig: r.cfg.TLSConfig, Log: r.cfg.Log, SuiteVersion: r.cfg.SuiteVersion})
}

// learnAfterRun learns the profile after the scenarios of Run. A failure
// is logged and leaves the profile out: it never changes the verdict.
func (r *run) learnAfterRun(ctx context.Context) *profile.Profile {
	started := time.Now()
	p, err := r.learn(ctx)
	if err != nil {
		fmt.Fprintf(r.cfg.Log, "conformance: the deployment profile could not be learned (the verdict stands): %v\n", hideSecrets(r.Secrets, err))
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
