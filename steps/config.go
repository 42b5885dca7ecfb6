// Package steps is the conformance suite's step library and runner API: the
// godog step definitions (on httpexpect) behind the scenarios of package
// features, and Run, which runs them against a target and returns a
// structured Result.
//
// A target is either a base URL (any deployment of the Partner API v3) or an
// http.Handler served in-process. The package never imports the simulator:
// the simulator's control API, when available, is reached over HTTP (or an
// in-process handler) like any other service.
package steps

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
)

// Spec limits of §8, the defaults of Config.RateLimit and Config.RateWindow.
const (
	SpecRateLimit  = 100
	SpecRateWindow = time.Minute
)

// SpecVersion is the version of the spec the suite checks (§9: "The
// interface is version 3").
const SpecVersion = "3"

// BasePathSuffix is the path every base address ends in (spec §1 "Base
// addresses", §9).
const BasePathSuffix = "/v3/partner/webhook"

// DefaultTags selects the scenarios of a certification run: what the spec
// states, nothing of the simulator's own choices.
const DefaultTags = "@normative"

// inProcessURL is the base URL used when Config.Handler is set and
// Config.BaseURL is empty. Requests never leave the process.
const inProcessURL = "https://in-process.invalid" + BasePathSuffix

// Errors Run returns instead of a Result; the runner maps them to exit
// status 2.
var (
	// ErrConfig reports an unusable configuration (missing credentials, an
	// unparseable URL, a tag expression that selects nothing...).
	ErrConfig = errors.New("configuration error")
	// ErrConnection reports that the target (or its control API) could not
	// be reached at all: no TCP/TLS connection, no HTTP answer.
	ErrConnection = errors.New("connection error")
	// ErrInterrupted reports a run whose context ended before the last
	// scenario: it has no verdict.
	ErrInterrupted = errors.New("run interrupted")
)

// Account holds the three credentials of spec §5.
type Account struct {
	APIKey    string
	APISecret string
	AccountID string
}

// IsZero reports whether no credential is set.
func (a Account) IsZero() bool { return a == Account{} }

func (a Account) complete() bool {
	return a.APIKey != "" && a.APISecret != "" && a.AccountID != ""
}

// Config describes one run of the suite. The zero value of every optional
// field is documented; only Primary and one of BaseURL or Handler are
// required.
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
	// be nil: the system roots.
	TLSConfig *tls.Config
	// Timeout bounds each request. Zero means 30 s.
	Timeout time.Duration

	// Primary is the account every scenario uses. Required.
	Primary Account
	// Second is another account, for the @two-accounts scenarios. May be
	// zero: those scenarios are then skipped.
	Second Account

	// AdminURL is the simulator's control API. May be empty: scenarios that
	// need it are skipped, and rate-limit windows are waited for instead of
	// skipped over with the simulator's clock.
	AdminURL string
	// AdminHandler serves the control API in-process. May be nil.
	AdminHandler http.Handler
	// AdminToken is the control API's bearer token.
	AdminToken string

	// Tags is a godog tag expression ("@a && ~@b", "@a,@b"). Empty means
	// DefaultTags.
	Tags string
	// ReadOnly skips the @writes scenarios (for production targets).
	ReadOnly bool

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
	// "name:path" (written to a file): pretty, progress, junit, cucumber.
	// May be empty: no formatter output.
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

	// SuiteVersion is reported in the summary. Empty means "dev".
	SuiteVersion string
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

// validate reports an unusable configuration, wrapping ErrConfig.
// Validate reports, wrapping ErrConfig, everything that would stop Run
// before it sends a request, so that a caller can check a configuration
// before paying for a target (such as starting a container).
func (c Config) Validate() error {
	return c.withDefaults().validate()
}

func (c Config) validate() error {
	var problems []string
	if c.BaseURL == "" {
		problems = append(problems, "a base URL (or an in-process handler) is required")
	} else if u, err := url.Parse(c.BaseURL); err != nil || u.Host == "" || u.Scheme == "" {
		problems = append(problems, fmt.Sprintf("base URL %q is not an absolute URL", c.BaseURL))
	}
	if !c.Primary.complete() {
		problems = append(problems, "the primary account needs an API key, an API secret and an account id")
	}
	if !c.Second.IsZero() && !c.Second.complete() {
		problems = append(problems, "the second account needs all three of API key, API secret and account id, or none")
	}
	if c.Second.complete() && (c.Second.AccountID == c.Primary.AccountID || c.Second.APIKey == c.Primary.APIKey) {
		problems = append(problems, "the second account must be another account than the primary (the @two-accounts scenarios check that accounts are kept apart)")
	}
	if c.AdminURL != "" {
		if u, err := url.Parse(c.AdminURL); err != nil || u.Host == "" || u.Scheme == "" {
			problems = append(problems, fmt.Sprintf("admin URL %q is not an absolute URL", c.AdminURL))
		}
	}
	if (c.AdminURL != "" || c.AdminHandler != nil) && c.AdminToken == "" {
		problems = append(problems, "the control API needs its admin token")
	}
	if c.RateLimit < 0 || c.RateWindow < 0 {
		problems = append(problems, "rate limit and rate window must not be negative")
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", ErrConfig, strings.Join(problems, "; "))
	}
	return nil
}

// hasAdmin reports whether the simulator's control API is configured.
func (c Config) hasAdmin() bool { return c.AdminURL != "" || c.AdminHandler != nil }
