package main

// Exit 2 with reports: a run that did not start still writes its summary
// and junit.xml (one "preflight" test case in error, naming the fix)
// whenever the report directory is known, as docs/ci.md and
// docs/reports.md promise a CI job (issue 27).

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/partner-v3/conformance-kit/cmd/internal/flagenv"
	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/suite"
)

// defaultReportDir is --report-dir's default.
const defaultReportDir = "conformance-report"

// reportDirOf finds the report directory of arguments that did not parse
// (a mistyped flag stops the flag package before it reads the rest): the
// last --report-dir among them, else CONFORMANCE_REPORT_DIR, else the
// default. ok is false when the arguments name it in a way that cannot be
// read (--report-dir last, with no value).
func reportDirOf(args []string, getenv func(string) string) (dir string, ok bool) {
	dir, ok = defaultReportDir, true
	if v := getenv(flagenv.Name(envPrefix, "report-dir")); v != "" {
		dir = v
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "report-dir" {
			continue
		}
		switch {
		case hasValue:
			dir = value
		case i+1 < len(args):
			i++
			dir = args[i]
		default:
			return "", false
		}
	}
	return dir, true
}

// notRun ends a run that did not start with exit 2: why is printed on
// stderr already; this writes the reports of res (a suite.NotRun result,
// or the preflight's) into dir when dir is not empty (summary.json,
// summary.md, junit.xml whatever --format says, and the other formats
// asked for that are written from the Result), then the verdict block.
func notRun(stdout, stderr io.Writer, dir string, res *suite.Result, formats []string) int {
	if dir != "" {
		if !slices.Contains(formats, "junit") {
			formats = append(slices.Clone(formats), "junit")
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			fmt.Fprintf(stderr, "conformance: create --report-dir: %v\n", err)
			dir = ""
		} else if err := writeReports(dir, res, nil, formats); err != nil {
			fmt.Fprintf(stderr, "conformance: %v\n", err)
		}
	}
	printVerdict(stdout, res, dir)
	return exitUsage
}

// notRunConfig is the part of the configuration a report of a run that
// did not start can say: the suite, and what of the target was given.
func (o *options) notRunConfig(cfg suite.Config) suite.Config {
	cfg.SuiteVersion, cfg.SuiteCommit = suiteVersion(), suiteCommit()
	if o != nil {
		cfg.Flags = o.flags
	}
	return cfg
}

// credentialFlag is one credential flag of an account.
type credentialFlag struct {
	value, flag, header string
}

// missingCredentials names each credential of an account not given, with
// its flag and variable ("x-api-secret: --api-secret or
// CONFORMANCE_API_SECRET"): the message says what to set, not only that
// something is missing.
func missingCredentials(account string, flags []credentialFlag) error {
	var headers, fixes []string
	for _, f := range flags {
		if f.value == "" {
			headers = append(headers, f.header)
			fixes = append(fixes, fmt.Sprintf("--%s or %s", f.flag, flagenv.Name(envPrefix, f.flag)))
		}
	}
	switch len(headers) {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("the %s account's %s is missing: set %s", account, headers[0], fixes[0])
	}
	return fmt.Errorf("the %s account's %s are missing: set %s", account, strings.Join(headers, ", "), strings.Join(fixes, "; "))
}

// checkCredentials says which credential flag is missing: the control
// API's token when its address is given, all three of the primary account
// (unless --ephemeral-accounts makes them), and all three of the second
// account or none.
func (o *options) checkCredentials() error {
	c := &o.cfg
	if c.AdminURL != "" && c.AdminToken == "" {
		return fmt.Errorf("the control API at --admin-url %s needs its token: set --admin-token or %s (the simulator prints it at start)", c.AdminURL, flagenv.Name(envPrefix, "admin-token"))
	}
	if c.EphemeralAccounts {
		return nil // the suite says what excludes what
	}
	if err := missingCredentials("primary", []credentialFlag{
		{c.Primary.APIKey, "api-key", spec.HeaderAPIKey}, {c.Primary.APISecret, "api-secret", spec.HeaderAPISecret}, {c.Primary.AccountID, "account-id", spec.HeaderAccountID},
	}); err != nil {
		return err
	}
	if c.Second.IsZero() {
		return nil
	}
	return missingCredentials("second", []credentialFlag{
		{c.Second.APIKey, "second-api-key", spec.HeaderAPIKey}, {c.Second.APISecret, "second-api-secret", spec.HeaderAPISecret}, {c.Second.AccountID, "second-account-id", spec.HeaderAccountID},
	})
}
