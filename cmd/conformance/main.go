// Command conformance runs the Partner API v3 conformance suite against a
// deployment (or the simulator) and writes a verdict.
//
// Exit status: 0 every selected scenario passed; 1 a scenario failed; 2 a
// usage, configuration or connection error (the message says which); 3 a
// normative rule could not be decided even after trying again.
package main

import (
	"context"
	"crypto/ed25519"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/partner-v3/conformance-kit/cmd/internal/buildinfo"
	"github.com/partner-v3/conformance-kit/cmd/internal/flagenv"
	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/result"
	"github.com/partner-v3/conformance-kit/steps/suite"
)

// version and commit are set at build time: -ldflags "-X
// main.version=v1.2.3 -X main.commit=<revision>[-dirty]" (the Makefile,
// from git); left as they are, buildinfo finds what the toolchain recorded
// (suiteVersion, suiteCommit).
var (
	version  = "dev"
	commit   = ""
	describe = "" // git describe of the source, whatever VERSION said
)

// suiteVersion is the version of this build, for --version, the reports
// and the certificate: only a released one (vX.Y.Z, from the linker flag
// or `go install ...@vX.Y.Z`) can certify. A version set by hand that git
// does not give the source (VERSION=v9.0.0 make build) says so, and is no
// release.
func suiteVersion() string {
	v := buildinfo.Version(version)
	if d, ok := buildinfo.Relabelled(version, describe); ok {
		v += " (relabelled: git describes its source as " + d + ")"
	}
	return v
}

// suiteCommit is the commit of this build ("-dirty" for a modified tree;
// "" unknown), recorded in the certificate beside the source digest: a
// version is a label (VERSION=v9.0.0 make build), these say which source.
func suiteCommit() string { return buildinfo.Commit(commit) }

// versionLine is what --version prints: the version, the commit, the
// toolchain, and the suite's source digest (scenarios, steps and matrix
// embedded in this binary), which a release states and a certificate
// records.
func versionLine() string {
	return fmt.Sprintf("%s, Partner API v%s", buildinfo.String("conformance", suiteVersion(), commit, "source sha256:"+suite.OwnDigests().Source), spec.Version)
}

// Exit statuses: godog's (0 pass, 1 fail, 2 usage), and 3 for a run that
// could not decide a normative rule (never a pass).
const (
	exitPass       = 0
	exitFail       = 1
	exitUsage      = 2
	exitIncomplete = 3
)

// help is what --help says besides the flags.
var help = flagenv.Help{
	Usage: "usage: conformance [flags]\n" +
		"       conformance profile [target flags] [--out deployment-profile.json]\n" +
		"       conformance verify certificate.json --public-key FILE\n" +
		"       conformance keygen [--private FILE] [--public FILE]\n" +
		"       conformance diff [flags] A B",
	Intro: "Runs the Partner API v" + spec.Version + " conformance suite against a deployment (--base-url) or\n" +
		"a container image (--image), and writes the verdict and reports to --report-dir, with\n" +
		"profile.json, the deployment's choices where the spec is silent (--no-profile: none).\n" +
		"profile learns that profile alone (conformance profile --help).\n" +
		"verify checks a signed certificate.json; keygen makes a signing key pair\n" +
		"(conformance verify --help, conformance keygen --help); diff compares two deployment\n" +
		"profiles (conformance diff --help). Flags win over their variables.",
	Prefix:  envPrefix,
	EnvNote: "An empty variable counts as unset. CONFORMANCE_IMAGE_ENV holds one K=V per line.",
	ExitCodes: []flagenv.ExitCode{
		{Code: exitPass, Meaning: "every selected scenario passed (also --help, --version)"},
		{Code: exitFail, Meaning: "a scenario failed: the target does not conform"},
		{Code: exitUsage, Meaning: "not run: a usage, configuration or connection error (the message says which)"},
		{Code: exitIncomplete, Meaning: "incomplete: no scenario failed, but a normative rule could not be decided even after trying again (a rate-limit burst crossed a window boundary each time); run again"},
	},
}

// envPrefix prefixes the environment fallback of every flag: --base-url is
// CONFORMANCE_BASE_URL.
const envPrefix = "CONFORMANCE_"

// reportFiles names the file each format writes in --report-dir.
var reportFiles = map[string]string{
	"pretty":   "pretty.txt",
	"progress": "progress.txt",
	"cucumber": "cucumber.json",
	"junit":    "junit.xml",
	"html":     "report.html",
}

// resultFormats are written from the Result once the run is over (godog
// writes the others as it goes): JUnit named and shaped as CI tools want
// it, the HTML report.
var resultFormats = map[string]func(*suite.Result, io.Writer) error{
	"junit": (*suite.Result).WriteJUnit,
	"html":  (*suite.Result).WriteHTML,
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// isTerminal reports whether w is a terminal: colours only make sense
// there, not in a piped CI log or a file.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// options are the parsed flags. Those the suite reads bind straight onto
// cfg, the suite's configuration (as godog's BindFlags binds its flags
// onto its Options); the others are the command's own, or name what config
// reads into the configuration it hands the suite (a CA file, a features
// directory, the report formats). Nothing is written into them after the
// flags and the environment are read.
type options struct {
	cfg         suite.Config      // bound by the flags; config derives the run's from it
	caCert      string            // --ca-cert: a PEM file, read by target
	insecure    bool              // --insecure
	featuresDir string            // --features: a directory, opened by config
	format      string            // --format, as given
	reportDir   string            // --report-dir
	out         string            // conformance profile --out
	showVersion bool              // --version
	signKey     string            // --sign-key: a key file
	image       imageOptions      // image.go
	flags       map[string]string // as given, credentials masked, for the certificate
	fs          *flag.FlagSet     // for --help
}

// parseFlags reads args, then the CONFORMANCE_* environment for every flag
// not given (flag > environment > default).
func parseFlags(args []string, getenv func(string) string) (*options, error) {
	return parseFlagsOf("conformance", args, getenv)
}

// parseFlagsOf is parseFlags for the command name: "conformance profile"
// adds --out.
func parseFlagsOf(name string, args []string, getenv func(string) string) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	flagenv.Quiet(fs)
	o.fs = fs
	c := &o.cfg
	fs.StringVar(&c.BaseURL, "base-url", "", "target base address, ending in "+spec.BasePath+" (required)")
	o.registerTarget(fs, "", "the primary account (required)", "the target")
	fs.StringVar(&c.Second.APIKey, "second-api-key", "", spec.HeaderAPIKey+" of a second account (optional; enables @two-accounts)")
	fs.StringVar(&c.Second.APISecret, "second-api-secret", "", spec.HeaderAPISecret+" of the second account")
	fs.StringVar(&c.Second.AccountID, "second-account-id", "", spec.HeaderAccountID+" of the second account")
	fs.BoolVar(&c.EphemeralAccounts, "ephemeral-accounts", false, "make the primary and second accounts through the simulator's control API for this run and delete them after it (needs --admin-url; replaces the credential flags), so parallel runs against one simulator never share a budget")
	fs.StringVar(&c.Tags, "tags", suite.DefaultTags, `scenarios to run, a godog tag expression ("@normative && ~@rate-limit", "@normative,@simulator")`)
	fs.BoolVar(&c.ReadOnly, "read-only", false, "skip the @writes scenarios (for production)")
	fs.BoolVar(&c.NoProfile, "no-profile", false, "do not learn the deployment profile after the scenarios (profile.json; its probes spend the rate budget again)")
	fs.StringVar(&o.format, "format", "pretty", "reports, comma-separated: pretty, progress, cucumber, junit, html; the first is shown on stdout, each is written to --report-dir")
	fs.StringVar(&o.reportDir, "report-dir", "conformance-report", `directory for the formatter files and the summary (summary.json, summary.md); "" writes none`)
	fs.StringVar(&o.featuresDir, "features", "", "directory of .feature files to run instead of the embedded suite")
	fs.IntVar(&c.RateLimit, "rate-limit", 0, fmt.Sprintf("the target's rate limit when configured away from the spec's %d (the verdict is then not a certification)", spec.RateLimit))
	fs.DurationVar(&c.RateWindow, "rate-window", 0, "the target's rate-limit window when configured away from the spec's "+flagenv.Duration(spec.RateWindow))
	fs.DurationVar(&c.Timeout, "timeout", 30*time.Second, "timeout of each request")
	fs.BoolVar(&c.NoColors, "no-colors", false, "no ANSI colours on stdout")
	fs.BoolVar(&o.showVersion, "version", false, "print the suite version and exit")
	fs.StringVar(&c.EmailDomain, "email-domain", "example.com", "domain of the contacts the @writes scenarios create (each run uses new addresses)")
	fs.StringVar(&o.signKey, "sign-key", "", "Ed25519 private key (PEM, PKCS #8) to sign certificate.json with (see: conformance keygen)")
	fs.Int64Var(&c.Randomize, "random", 0, "scenario order: 0 file order (rate limit last), -1 a random seed (printed by the formatter), N that seed")
	o.image.register(fs)
	if name == profileCommand {
		fs.StringVar(&o.out, "out", "deployment-profile.json", "file the learned profile is written to")
	}
	if err := flagenv.Parse(fs, args); errors.Is(err, flag.ErrHelp) {
		return o, err
	} else if err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	// An empty variable counts as unset.
	err := flagenv.Fill(fs, envPrefix, func(name string) (string, bool) {
		v := getenv(name)
		return v, v != ""
	})
	o.flags = maskedFlags(fs)
	return o, err
}

// registerTarget registers on fs the flags that say how to reach one
// target and which account to use there, each name prefixed by prefix:
// "" for the run's target, "b-" for side B of conformance diff (diff.go),
// so that both read the same flags and variables into the same options.
// account and target say whose they are in --help.
func (o *options) registerTarget(fs *flag.FlagSet, prefix, account, target string) {
	fs.StringVar(&o.cfg.Primary.APIKey, prefix+"api-key", "", spec.HeaderAPIKey+" of "+account)
	fs.StringVar(&o.cfg.Primary.APISecret, prefix+"api-secret", "", spec.HeaderAPISecret+" of "+account)
	fs.StringVar(&o.cfg.Primary.AccountID, prefix+"account-id", "", spec.HeaderAccountID+" of "+account)
	fs.StringVar(&o.caCert, prefix+"ca-cert", "", "PEM file of a CA (or self-signed certificate) to trust for "+target)
	fs.BoolVar(&o.insecure, prefix+"insecure", false, "skip TLS certificate verification of "+target+" (development targets only)")
	fs.StringVar(&o.cfg.AdminURL, prefix+"admin-url", "", "the simulator's control API, for "+target+" (simulator runs only)")
	fs.StringVar(&o.cfg.AdminToken, prefix+"admin-token", "", "the token of the control API at --"+prefix+"admin-url")
}

// maskedFlags lists every flag set away from its default, by flag or
// environment, with credentials masked: the certificate records how the
// run was made.
func maskedFlags(fs *flag.FlagSet) map[string]string {
	out := map[string]string{}
	fs.VisitAll(func(f *flag.Flag) {
		v := f.Value.String()
		if v == f.DefValue {
			return
		}
		switch f.Name {
		case "api-secret", "second-api-secret", "admin-token":
			v = suite.MaskSecret(v)
		case "api-key", "second-api-key", "account-id", "second-account-id":
			v = suite.MaskCredential(v)
		}
		out[f.Name] = v
	})
	return out
}

// target is the configuration of the target at baseURL the flags
// describe: cfg as bound, the suite's build, and the TLS configuration of
// --ca-cert and --insecure. On error it returns what it has, for the
// reports of a run that did not start.
func (o *options) target(baseURL string) (suite.Config, error) {
	cfg := o.cfg
	cfg.BaseURL = baseURL
	cfg.SuiteVersion, cfg.SuiteCommit = suiteVersion(), suiteCommit()
	if baseURL == "" {
		return cfg, errors.New("--base-url (or CONFORMANCE_BASE_URL) is required: the target's address, ending in " + spec.BasePath)
	}
	if o.insecure && o.caCert != "" {
		return cfg, errors.New("--ca-cert and --insecure exclude each other")
	}
	if o.insecure || o.caCert != "" {
		tc := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: o.insecure} //nolint:gosec // asked for with --insecure
		if o.caCert != "" {
			pem, err := os.ReadFile(o.caCert)
			if err != nil {
				return cfg, fmt.Errorf("read --ca-cert: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return cfg, fmt.Errorf("--ca-cert %s holds no PEM certificate", o.caCert)
			}
			tc.RootCAs = pool
		}
		cfg.TLSConfig = tc
	}
	return cfg, nil
}

// config is the run's configuration: the target's (the --image
// container's address when --base-url is not given), the features to run,
// where the formatters write, and the streams; formats are the --format
// names, checked, the first shown on stdout. On error it returns what it
// has, for the reports of a run that did not start.
func (o *options) config(stdout, stderr io.Writer) (cfg suite.Config, formats []string, err error) {
	cfg, err = o.target(o.image.baseURL(o.cfg.BaseURL))
	cfg.Output, cfg.Log = stdout, stderr
	cfg.NoColors = o.cfg.NoColors || !isTerminal(stdout)
	cfg.Flags = o.flags
	if err != nil {
		return cfg, nil, err
	}
	if o.featuresDir != "" {
		if st, err := os.Stat(o.featuresDir); err != nil || !st.IsDir() {
			return cfg, nil, fmt.Errorf("--features %s is not a directory", o.featuresDir)
		}
		cfg.Features = os.DirFS(o.featuresDir)
	}
	// godog takes its formatters as one comma-separated list of
	// name:path: a path with a comma in it cannot be said there.
	if strings.Contains(o.reportDir, ",") && o.format != "" {
		return cfg, nil, fmt.Errorf("--report-dir %q holds a comma, which the formatters' list cannot carry: choose a directory without one", o.reportDir)
	}
	var godogFormats []string
	for f := range strings.SplitSeq(o.format, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		file, ok := reportFiles[f]
		if !ok {
			return cfg, formats, fmt.Errorf("--format %q: want pretty, progress, cucumber, junit or html", f)
		}
		formats = append(formats, f)
		if _, ours := resultFormats[f]; ours {
			continue
		}
		if len(formats) == 1 {
			godogFormats = append(godogFormats, f)
		}
		if o.reportDir != "" {
			godogFormats = append(godogFormats, f+":"+filepath.Join(o.reportDir, file))
		}
	}
	cfg.Formats = slices.Compact(godogFormats)
	return cfg, formats, nil
}

// run is the whole command; main only adds the process around it.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "verify":
			return verify(args[1:], stdout, stderr)
		case "keygen":
			return keygen(args[1:], stdout, stderr)
		case "diff":
			return diff(ctx, args[1:], stdout, stderr, os.Getenv)
		case "profile":
			return learnProfile(ctx, args[1:], stdout, stderr)
		}
	}
	o, err := parseFlags(args, os.Getenv)
	if errors.Is(err, flag.ErrHelp) {
		flagenv.WriteHelp(stdout, o.fs, help)
		return exitPass
	}
	if err != nil {
		fmt.Fprintf(stderr, "conformance: usage error: %v\n", err)
		// The flags did not parse: find the report directory in them, so
		// that CI still gets its junit.xml.
		dir, ok := reportDirOf(args, os.Getenv)
		if !ok {
			dir = ""
		}
		return notRun(stdout, stderr, dir, suite.NotRun(o.notRunConfig(suite.Config{}), "usage error: "+err.Error()), nil)
	}
	if o.showVersion {
		fmt.Fprintln(stdout, versionLine())
		return exitPass
	}
	cfg, formats, err := o.config(stdout, stderr)
	if err == nil {
		err = o.checkCredentials()
	}
	if err != nil {
		fmt.Fprintf(stderr, "conformance: usage error: %v\n", err)
		return notRun(stdout, stderr, o.reportDir, suite.NotRun(o.notRunConfig(cfg), "usage error: "+err.Error()), formats)
	}
	var key ed25519.PrivateKey
	if o.signKey != "" {
		if key, err = suite.LoadPrivateKey(o.signKey); err != nil {
			fmt.Fprintf(stderr, "conformance: usage error: --sign-key: %v\n", err)
			return notRun(stdout, stderr, o.reportDir, suite.NotRun(o.notRunConfig(cfg), "usage error: --sign-key: "+err.Error()), formats)
		}
	}
	if o.reportDir != "" {
		if err := os.MkdirAll(o.reportDir, 0o755); err != nil {
			fmt.Fprintf(stderr, "conformance: configuration error: create --report-dir: %v\n", err)
			return exitUsage
		}
	}
	res, err := o.image.run(ctx, cfg, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "conformance: %v\n", err)
		if res == nil {
			// A configuration the suite refused, or a run interrupted
			// before its verdict (a CI job's timeout): the reports say why.
			res = suite.NotRun(o.notRunConfig(cfg), err.Error())
		}
		// The suite did not run: say so in the reports too, never that
		// the target does not conform.
		return notRun(stdout, stderr, o.reportDir, res, formats)
	}
	if o.reportDir != "" {
		if err := writeReports(o.reportDir, res, key, formats); err != nil {
			fmt.Fprintf(stderr, "conformance: %v\n", err)
			return exitUsage
		}
	}
	// The first format is the one shown on stdout; godog printed its own.
	if len(formats) > 0 {
		if write, ours := resultFormats[formats[0]]; ours {
			if err := write(res, stdout); err != nil {
				fmt.Fprintf(stderr, "conformance: %v\n", err)
			}
		}
	}
	printVerdict(stdout, res, o.reportDir)
	return exitStatus(res)
}

// exitStatus is the exit status of a run that ran: 0 pass, 3 incomplete,
// 1 fail.
func exitStatus(res *suite.Result) int {
	switch res.Verdict {
	case suite.VerdictPass:
		return exitPass
	case suite.VerdictIncomplete:
		return exitIncomplete
	}
	return exitFail
}

// writeFile creates path and fills it with write.
func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create report: %w", err)
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write report %s: %w", path, err)
	}
	return nil
}

// writeSummaries writes summary.json and summary.md.
func writeSummaries(dir string, res *suite.Result) error {
	for name, write := range map[string]func(io.Writer) error{
		"summary.json": res.WriteJSON,
		"summary.md":   res.WriteMarkdown,
	} {
		if err := writeFile(filepath.Join(dir, name), write); err != nil {
			return err
		}
	}
	return nil
}

// writeReports writes the deployment profile (profile.json, when the run
// learned one), the summaries, every request and response of the run
// (exchanges.har), the reports of the formats written from the Result, and
// certificate.json, signed when a key is given.
func writeReports(dir string, res *suite.Result, key ed25519.PrivateKey, formats []string) error {
	// First: the summary and the certificate record the digest of its
	// bytes.
	if res.Profile != nil {
		if err := writeFile(filepath.Join(dir, "profile.json"), res.WriteProfile); err != nil {
			return err
		}
	}
	if err := writeSummaries(dir, res); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, "exchanges.har"), res.WriteHAR); err != nil {
		return err
	}
	for _, f := range formats {
		if write, ours := resultFormats[f]; ours {
			if err := writeFile(filepath.Join(dir, reportFiles[f]), func(w io.Writer) error { return write(res, w) }); err != nil {
				return err
			}
		}
	}
	if res.Verdict == suite.VerdictNotRun {
		return nil // nothing to certify
	}
	return writeFile(filepath.Join(dir, "certificate.json"), func(w io.Writer) error {
		return suite.WriteCertificate(w, res.Certificate(), key)
	})
}

// printVerdict ends the output with the lines a CI log needs.
func printVerdict(w io.Writer, res *suite.Result, dir string) {
	if res.Target == "" {
		fmt.Fprintf(w, "\nconformance %s: %s\n", res.SuiteVersion, res.Headline())
	} else {
		fmt.Fprintf(w, "\nconformance %s against %s: %s\n", res.SuiteVersion, res.Target, res.Headline())
	}
	if res.Verdict == suite.VerdictNotRun {
		fmt.Fprintf(w, "  %s\n", res.NotRun)
	} else {
		fmt.Fprintf(w, "  %d passed, %d failed, %d skipped, %d inconclusive, %d warnings; %d requests; %s (waited %s for rate-limit windows)\n",
			res.Passed, res.Failed, res.Skipped, res.Inconclusive, res.Warnings, res.Requests, res.Duration.Round(time.Millisecond), res.Waited.Round(time.Second))
	}
	if n := len(res.BudgetWaits); n > 0 {
		var d time.Duration
		for _, bw := range res.BudgetWaits {
			d += bw.Duration
		}
		fmt.Fprintf(w, "  %d waits (%s) for a rate-limit budget spent before the request: not held against the target\n", n, d.Round(100*time.Millisecond))
	}
	for _, s := range res.FailedScenarios() {
		fmt.Fprintf(w, "  FAILURE %s  %s\n", result.SectionList(s.FailureSections()), s.Title())
	}
	for _, sec := range res.Sections {
		if sec.Warnings > 0 {
			fmt.Fprintf(w, "  WARNING §%s  %d warnings (%s): the spec allows it; see the summary\n", sec.ID, sec.Warnings, sec.Title)
		}
	}
	if len(res.Caveats) > 0 && res.Verdict != suite.VerdictNotRun {
		if !res.Certification {
			fmt.Fprintln(w, "  not a certification:")
		}
		for _, c := range res.Caveats {
			fmt.Fprintf(w, "  - %s\n", c)
		}
	}
	if res.Certification {
		fmt.Fprintln(w, "  this run is a certification of the target against the spec")
	}
	if dir != "" {
		fmt.Fprintf(w, "  summary: %s\n", filepath.Join(dir, "summary.md"))
		if res.Profile != nil {
			fmt.Fprintf(w, "  deployment profile: %s\n", filepath.Join(dir, "profile.json"))
		}
	}
}
