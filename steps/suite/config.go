// Package suite runs the conformance suite: it takes a Config (the target,
// its credentials, what to run), checks that the user gave something the
// suite can run against (preflight), runs the scenarios of package features
// with the step library of package steps, and returns a Result: the verdict,
// a row per spec section, every failure and warning, and whether the run is
// a certification. Result writes the reports (JSON, Markdown, HTML, JUnit,
// HAR) and the certificate a third party can verify.
package suite

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/features"
	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// DefaultTags selects the scenarios of a certification run: what the spec
// states, nothing of the simulator's own choices.
const DefaultTags = "@normative"

// inProcessURL is the base URL used when Config.Handler is set and
// Config.BaseURL is empty. Requests never leave the process.
const inProcessURL = "https://in-process.invalid" + spec.BasePath

// Errors Run returns; the runner maps every one of them to exit status 2.
// With ErrConnection and ErrPreflight, Run also returns a Result whose
// verdict is VerdictNotRun, saying why: the suite did not run, which never
// means the target does not conform.
var (
	// ErrConfig reports an unusable configuration (missing credentials, an
	// unparseable URL, a tag expression that selects nothing...).
	ErrConfig = errors.New("configuration error")
	// ErrConnection reports that the target (or its control API) could not
	// be reached at all: no TCP/TLS connection, no HTTP answer.
	ErrConnection = errors.New("connection error")
	// ErrPreflight reports a mistake of the user's that the target's first
	// answers show: no operation at the base address, credentials refused.
	ErrPreflight = errors.New("preflight")
	// ErrInterrupted reports a run whose context ended before the last
	// scenario: it has no verdict.
	ErrInterrupted = errors.New("run interrupted")
)

// Config describes one run of the suite. The zero value of every optional
// field is documented; only Primary and one of BaseURL or Handler are
// required. The runner's flags bind onto its fields. A run reads it and
// never writes to it: what the run resolves (throwaway accounts, the
// simulator's rate limit) is the run's own (package steps/internal/target).
type Config struct {
	// BaseURL is the target's base address, ending in /v3/partner/webhook.
	// An address that is not https or ends elsewhere is not rejected here:
	// the scenarios of spec §1 and §9 fail on it. May be empty when Handler
	// is set (then https://in-process.invalid/v3/partner/webhook).
	BaseURL string
	// Handler, when set, serves every partner request in-process (no
	// network). May be nil.
	Handler http.Handler
	// TLSConfig is used for https connections to BaseURL and AdminURL. May
	// be nil: the system roots. InsecureSkipVerify makes the run no
	// certification.
	TLSConfig *tls.Config
	// Timeout bounds each request. Zero means 30 s.
	Timeout time.Duration

	// Primary is the account every scenario uses. Required.
	Primary control.Credentials
	// Second is another account, for the @two-accounts scenarios. May be
	// zero: those scenarios are then skipped.
	Second control.Credentials

	// AdminURL is the simulator's control API. May be empty: scenarios that
	// need it are skipped, and rate-limit windows are waited for instead of
	// skipped over with the simulator's clock.
	AdminURL string
	// EphemeralAccounts makes the run create its primary and second
	// accounts through the simulator's control API (throwaway accounts)
	// and delete them at the end, so runs that share one simulator never
	// share a rate-limit budget, contacts or faults (spec §8: one counter
	// per account). Needs the control API; Primary and Second must then be
	// zero. The run also leaves the rest of the simulator alone: no reset.
	EphemeralAccounts bool
	// AdminHandler serves the control API in-process. May be nil.
	AdminHandler http.Handler
	// AdminToken is the control API's bearer token.
	AdminToken string

	// Tags is a godog tag expression ("@a && ~@b", "@a,@b"). Empty means
	// DefaultTags.
	Tags string
	// ReadOnly skips the @writes scenarios (for production targets). The
	// profile then learns no contact choice.
	ReadOnly bool
	// NoProfile skips learning the deployment profile after the scenarios
	// (package steps/learn): the Result then carries none.
	NoProfile bool

	// RateLimit and RateWindow describe the target's rate limit when it is
	// configured away from the spec's 100 per minute (a simulator started
	// with a short window). Zero means: the spec's values, or the
	// simulator's own when its control API is given. A run with other
	// values is not a certification.
	RateLimit  int
	RateWindow time.Duration

	// Features holds the .feature files. May be nil: the embedded suite
	// (features.FS).
	Features fs.FS
	// Formats are godog formatters, each "name" (written to Output) or
	// "name:path" (written to a file): pretty, progress, cucumber. May be
	// empty: no formatter output. (JUnit, HTML and HAR are written from the
	// Result.)
	Formats []string
	// Output receives the formatters without a path. May be nil: discarded.
	Output io.Writer
	// Log receives progress lines: waits for the rate-limit window, resets
	// through the control API. May be nil: discarded.
	Log io.Writer
	// NoColors strips ANSI colours from formatter output.
	NoColors bool
	// Randomize is godog's scenario order seed: 0 file order, -1 random.
	Randomize int64
	// TestingT, when set, runs every scenario as a subtest of it. May be
	// nil.
	TestingT *testing.T

	// EmailDomain is the domain of the contacts the @writes scenarios
	// create, for a target that refuses addresses it cannot deliver to.
	// Empty means example.com.
	EmailDomain string

	// SuiteVersion is reported in the summary and the certificate. Empty
	// means "dev". Only a released version (vX.Y.Z) can certify.
	SuiteVersion string
	// SuiteCommit is the commit the suite was built from, "-dirty" appended
	// for a modified tree (then the run is no certification). May be empty:
	// unknown (a `go install ...@vX.Y.Z` build).
	SuiteCommit string
	// Flags is how the run was invoked, credentials masked, for the
	// certificate. May be nil.
	Flags map[string]string
}

// withDefaults returns a copy with the documented defaults applied.
func (c Config) withDefaults() Config {
	if c.BaseURL == "" && c.Handler != nil {
		c.BaseURL = inProcessURL
	}
	if c.Timeout == 0 {
		c.Timeout = 30 * time.Second
	}
	if strings.TrimSpace(c.Tags) == "" {
		c.Tags = DefaultTags
	}
	if c.SuiteVersion == "" {
		c.SuiteVersion = "dev"
	}
	if c.EmailDomain == "" {
		c.EmailDomain = "example.com"
	}
	if c.Output == nil {
		c.Output = io.Discard
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
	return c
}

// Validate reports, wrapping ErrConfig, everything that would stop Run
// before it sends a request, so that a caller can check a configuration
// before paying for a target (such as starting a container).
func (c Config) Validate() error {
	_, err := c.withDefaults().parse()
	return err
}

// parse validates the configuration and parses its addresses once.
func (c Config) parse() (*url.URL, error) {
	var problems []string
	var base *url.URL
	if c.BaseURL == "" {
		problems = append(problems, "a base URL (or an in-process handler) is required")
	} else if u, err := url.Parse(c.BaseURL); err != nil || u.Host == "" || u.Scheme == "" {
		problems = append(problems, fmt.Sprintf("base URL %q is not an absolute URL", c.BaseURL))
	} else {
		base = u
	}
	switch {
	case c.EphemeralAccounts && !c.hasAdmin():
		problems = append(problems, "throwaway accounts are made through the simulator's control API: give its address and token (--admin-url, --admin-token)")
	case c.EphemeralAccounts && (!c.Primary.IsZero() || !c.Second.IsZero()):
		problems = append(problems, "with throwaway accounts the run makes its own: give no account credentials (--api-key, --api-secret, --account-id and the --second-* ones)")
	case !c.EphemeralAccounts && !c.Primary.Complete():
		problems = append(problems, "the primary account needs an API key, an API secret and an account id")
	}
	if !c.Second.IsZero() && !c.Second.Complete() {
		problems = append(problems, "the second account needs all three of API key, API secret and account id, or none")
	}
	if c.Second.Complete() && (c.Second.AccountID == c.Primary.AccountID || c.Second.APIKey == c.Primary.APIKey) {
		problems = append(problems, "the second account must be another account than the primary (the @two-accounts scenarios check that accounts are kept apart)")
	}
	if c.AdminURL != "" {
		if u, err := url.Parse(c.AdminURL); err != nil || u.Host == "" || u.Scheme == "" {
			problems = append(problems, fmt.Sprintf("admin URL %q is not an absolute URL", c.AdminURL))
		}
	}
	if c.hasAdmin() && c.AdminToken == "" {
		problems = append(problems, "the control API needs its admin token")
	}
	if c.RateLimit < 0 || c.RateWindow < 0 {
		problems = append(problems, "rate limit and rate window must not be negative")
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrConfig, strings.Join(problems, "; "))
	}
	return base, nil
}

// featureFS is the features the run reads: Features, else the embedded
// suite.
func (c Config) featureFS() fs.FS {
	if c.Features == nil {
		return features.FS
	}
	return c.Features
}

// selection is the tag expression the run selects its scenarios with:
// Tags, without the @writes scenarios for a read-only run.
func (c Config) selection() string {
	if c.ReadOnly {
		return c.Tags + " && ~@writes"
	}
	return c.Tags
}

// hasAdmin reports whether the simulator's control API is configured.
func (c Config) hasAdmin() bool { return c.AdminURL != "" || c.AdminHandler != nil }

// verifiesTLS reports whether the run verifies the target's certificate.
func (c Config) verifiesTLS() bool { return c.TLSConfig == nil || !c.TLSConfig.InsecureSkipVerify }
