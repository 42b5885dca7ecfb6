package suite

import (
	"time"

	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/result"
)

// NotRun returns the Result of a run that never started because of the
// user's mistake, found before any request: a mistyped flag, a missing
// credential, an unknown --format, a tag expression that selects nothing.
// Its verdict is VerdictNotRun and why says what to fix (the run's secrets
// masked), so that its reports (the summaries, and JUnit as one
// "preflight" test case in error) reach CI on every exit 2, as they do for
// a preflight finding (Run's own Result then). cfg may be the zero
// Config: what is not known is left empty.
func NotRun(cfg Config, why string) *Result {
	cfg = cfg.withDefaults()
	sec := cfg.secrets()
	now := time.Now().UTC()
	return &Result{
		SuiteVersion: cfg.SuiteVersion,
		SuiteCommit:  cfg.SuiteCommit,
		SpecVersion:  spec.Version,
		Spec:         spec.Title,
		Target:       sec.String(cfg.BaseURL),
		Tags:         cfg.Tags,
		Started:      now,
		Ended:        now,
		RateLimit:    cfg.RateLimit,
		RateWindow:   rateWindowText(cfg.RateWindow),
		Flags:        maskedFlags(sec, cfg.Flags),
		Digests:      digestsOf(cfg.featureFS()),
		Scenarios:    []*result.ScenarioResult{},
		Caveats:      []string{},
		Verdict:      VerdictNotRun,
		NotRun:       sec.String(why),
	}
}

// rateWindowText is a window for a report, empty when not known.
func rateWindowText(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}
