// Command simulator runs the Partner Contact and Campaign Service, API v3,
// simulator: the three operations over HTTPS and the control API.
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/redis/go-redis/v9"

	"github.com/partner-v3/conformance-kit/cmd/internal/buildinfo"
	"github.com/partner-v3/conformance-kit/cmd/internal/flagenv"
	"github.com/partner-v3/conformance-kit/cmd/internal/memlimit"
	"github.com/partner-v3/conformance-kit/simulator/partnerapi"
	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/simulator/sim"
	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/simulator/violation"
)

// version and commit are set at build time with -ldflags "-X
// main.version=... -X main.commit=..." (the Makefile: git describe, git
// rev-parse HEAD and "-dirty" for a modified tree); left as they are,
// buildinfo finds what the toolchain recorded.
var (
	version = "dev"
	commit  = ""
)

// help is what --help says besides the flags.
var help = flagenv.Help{
	Usage: "usage: simulator [flags]",
	Intro: "Runs the " + spec.Title + ", simulator: the three\n" +
		"operations over HTTPS and the control API. Flags win over their variables.",
	Prefix:  "SIM_",
	EnvNote: "A variable set to the empty string counts: SIM_ADMIN_ADDR= turns the control API off.",
	ExitCodes: []flagenv.ExitCode{
		{Code: 0, Meaning: "clean shutdown after SIGINT or SIGTERM (also --help, --version, --list-violations)"},
		{Code: 1, Meaning: "the simulator failed to start, or to shut down cleanly"},
		{Code: 2, Meaning: "usage error: a flag or variable is wrong"},
	},
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	m := NewMain(os.Stdout, os.Stderr)
	if err := m.ParseFlags(ctx, os.Args[1:]); errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	} else if err != nil {
		fmt.Fprintln(os.Stderr, "simulator:", err)
		os.Exit(2)
	}
	if m.showVersion {
		m.printVersion()
		return
	}
	if m.listViolations {
		m.printViolations()
		return
	}
	// The whole process's memory limit: set here, not in Run, which
	// tests call in their own process.
	applied, stopTuning := memlimit.Apply(m.memoryLimit)
	defer stopTuning()
	m.memoryApplied = &applied
	if err := m.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "simulator:", err)
		os.Exit(1)
	}
	<-ctx.Done()
	stop() // a second signal now kills at once
	fmt.Fprintln(os.Stderr, "simulator: shutting down")
	if err := m.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "simulator: shutdown:", err)
		os.Exit(1)
	}
}

// maxContacts bounds --contacts: positions and record numbers are 32-bit,
// and ten million per account is far past what fits in memory anyway.
const maxContacts = 10_000_000

// Main is the program, separated from main so tests can run it.
type Main struct {
	Config    sim.Config
	LogFormat string
	LogLevel  string

	Simulator *sim.Simulator

	listViolations bool
	showVersion    bool
	// profileFile is --profile's path, read by ParseFlags into
	// Config.Profile.
	profileFile string
	// memoryLimit is --memory-limit; memoryApplied what main made of it
	// (nil when Run is called without main, as in tests).
	memoryLimit    memlimit.Limit
	memoryApplied  *memlimit.Applied
	stdout, stderr io.Writer
}

// NewMain returns a Main with the defaults of the flags.
func NewMain(stdout, stderr io.Writer) *Main {
	return &Main{stdout: stdout, stderr: stderr}
}

// stringList is a repeatable flag that also takes comma-separated values.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}

// ParseFlags fills the config from args, then from SIM_* variables for the
// flags not given: flag > environment > default.
func (m *Main) ParseFlags(_ context.Context, args []string) error {
	c := &m.Config
	def := sim.Config{}.WithDefaults() // the flags show the defaults sim applies
	fs := flag.NewFlagSet("simulator", flag.ContinueOnError)
	flagenv.Quiet(fs)
	fs.BoolVar(&m.showVersion, "version", false, "print the version and exit")
	fs.StringVar(&c.Addr, "addr", "127.0.0.1:8443", "partner API listen address")
	fs.StringVar(&c.AdminAddr, "admin-addr", "127.0.0.1:8444", "control API listen address (empty: none)")
	fs.BoolVar(&c.Insecure, "insecure", false, "serve plain HTTP instead of HTTPS (not what the spec says; for debugging)")
	fs.StringVar(&c.TLSCert, "tls-cert", "", "PEM certificate (default: a self-signed one in --data-dir)")
	fs.StringVar(&c.TLSKey, "tls-key", "", "PEM private key of --tls-cert")
	fs.StringVar(&c.DataDir, "data-dir", def.DataDir, "directory for the generated certificate")
	fs.StringVar(&c.AccountsFile, "accounts", "", "accounts JSON file (default: the embedded fixtures/accounts.json)")
	fs.StringVar(&c.CampaignsFile, "campaigns-file", "", "campaigns JSON file replacing the generated campaigns")
	fs.Int64Var(&c.Seed, "seed", def.Seed, "seed of the campaign generator (not 0)")
	fs.IntVar(&c.CampaignsPerAccount, "campaigns", def.CampaignsPerAccount, "generated campaigns per account")
	fs.IntVar(&c.ContactsPerAccount, "contacts", 0, "fake contacts seeded per account at start and by every reset")
	fs.IntVar(&c.RateLimit, "rate-limit", def.RateLimit, fmt.Sprintf("requests allowed per account per window (spec §8: %d)", spec.RateLimit))
	fs.DurationVar(&c.RateWindow, "rate-window", def.RateWindow, fmt.Sprintf("rate-limit window (spec §8: %s)", flagenv.Duration(spec.RateWindow)))
	fs.StringVar(&c.RedisURL, "redis-url", "", "keep state in this Redis (redis://127.0.0.1:6379/0, or a Redis Cluster: redis-cluster://host:port,host:port), shared by replicas (default: in memory)")
	fs.StringVar(&c.RedisPrefix, "redis-prefix", "", "key prefix in Redis; replicas that share state use the same (default partnersim:)")
	fs.StringVar(&c.AdminToken, "admin-token", "", "control API bearer token (default: random, printed at start)")
	fs.Int64Var(&c.MaxBodyBytes, "max-body-bytes", def.MaxBodyBytes, "largest accepted request body")
	fs.IntVar(&c.JournalDetail, "journal-detail", def.JournalDetail, "latest partner requests kept in full, headers and bodies, for GET /journal/{requestId} and the dashboard (0: none)")
	fs.StringVar(&m.LogFormat, "log-format", "text", "log format: text or json")
	fs.StringVar(&m.LogLevel, "log-level", "info", "log level: debug, info, warn, error")
	fs.StringVar(&m.profileFile, "profile", "", "deployment profile JSON file to play where the spec is silent (default: the simulator's own choices)")
	fs.Var(&m.memoryLimit, "memory-limit", "the Go runtime's soft memory `limit`: auto (the live heap plus a quarter, at least 128MiB, under 90% of a cgroup's limit), off, or a size such as 300MiB; GOMEMLIMIT, when set, wins over auto")
	fs.BoolVar(&c.ProfileLatency, "profile-latency", false, "delay each answer by a draw of the --profile's learned latency (default: answer at once)")
	var violations stringList
	fs.Var(&violations, "violate", "break one normative rule on purpose, to test a test suite (repeatable; see --list-violations)")
	fs.BoolVar(&m.listViolations, "list-violations", false, "list the --violate names and exit")
	if err := flagenv.Parse(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			flagenv.WriteHelp(m.stdout, fs, help)
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	// A variable set to "" counts: SIM_ADMIN_ADDR= turns the control API off.
	if err := flagenv.Fill(fs, "SIM_", os.LookupEnv); err != nil {
		return err
	}
	switch {
	case c.Seed == 0:
		return errors.New("--seed 0 would mean a random seed; give any other number")
	case c.RateLimit < 1:
		return errors.New("--rate-limit must be at least 1")
	case c.RateWindow <= 0:
		return errors.New("--rate-window must be positive")
	case c.CampaignsPerAccount < 0 || c.CampaignsPerAccount > 10000:
		return errors.New("--campaigns must be between 0 and 10000")
	case c.ContactsPerAccount < 0 || c.ContactsPerAccount > maxContacts:
		return fmt.Errorf("--contacts must be between 0 and %d", maxContacts)
	case c.MaxBodyBytes < 1024:
		return errors.New("--max-body-bytes must be at least 1024")
	case c.JournalDetail < 0 || c.JournalDetail > 100000:
		return errors.New("--journal-detail must be between 0 and 100000")
	}
	if c.JournalDetail == 0 {
		c.JournalDetail = -1 // sim.Config reads 0 as "the default"
	}
	if c.CampaignsPerAccount == 0 {
		c.CampaignsPerAccount = -1 // sim.Config reads 0 as "the default"
	}
	if m.profileFile != "" {
		// A profile the kit cannot read or that asks what the spec
		// forbids (profile.Check) is a usage error: exit 2 with the reasons.
		p, err := profile.Load(m.profileFile)
		if err != nil {
			return fmt.Errorf("--profile: %w", err)
		}
		c.Profile = p
	}
	c.Violations = violations
	return nil
}

// Run starts the simulator and prints how to reach it.
func (m *Main) Run(ctx context.Context) error {
	logger, err := newLogger(m.stderr, m.LogFormat, m.LogLevel)
	if err != nil {
		return err
	}
	m.Config.Logger = logger
	m.Config.Version = buildinfo.Version(version)
	// go-redis logs its reconnection attempts with the standard logger;
	// give them the simulator's format and level instead.
	redis.SetLogger(redisLogger{logger})
	s, err := sim.New(ctx, m.Config)
	if err != nil {
		return err
	}
	if err := s.Open(); err != nil {
		return explainListen(err, m.Config.Addr, m.Config.AdminAddr)
	}
	m.Simulator = s
	m.printBanner()
	return nil
}

// Close shuts the simulator down gracefully.
func (m *Main) Close() error {
	if m.Simulator == nil {
		return nil
	}
	return m.Simulator.Close()
}

func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: l}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format must be text or json, not %q", format)
}

func (m *Main) printBanner() {
	s, w := m.Simulator, m.stdout
	a := s.Accounts[0]
	fmt.Fprintf(w, "Partner API v%s simulator %s\n\n", spec.Version, buildinfo.Version(version))
	fmt.Fprintf(w, "  Base URL:     %s\n", s.URL())
	if s.AdminURL() != "" {
		fmt.Fprintf(w, "  Control API:  %s  (Authorization: Bearer %s)\n", s.AdminURL(), s.AdminToken)
		fmt.Fprintf(w, "  Dashboard:    %s  (log in with the control API's token)\n", s.DashboardURL())
	}
	curlTLS := ""
	if s.Cert != nil {
		fmt.Fprintf(w, "  Certificate:  %s\n", s.Cert.CertFile)
		fmt.Fprintf(w, "  SHA-256:      %s\n", s.Cert.Fingerprint)
		curlTLS = fmt.Sprintf(" --cacert %s", s.Cert.CertFile)
	} else {
		fmt.Fprintf(w, "  WARNING:      plain HTTP (--insecure); the spec (§1) requires HTTPS\n")
	}
	state := "in memory (this process only)"
	if m.Config.RedisURL != "" {
		state = "Redis " + redactURL(m.Config.RedisURL)
		if !s.Seeded {
			state += " (campaigns already seeded there)"
		}
	}
	fmt.Fprintf(w, "  State:        %s\n", state)
	limit, window := m.Config.RateLimit, m.Config.RateWindow
	fmt.Fprintf(w, "  Rate limit:   %d requests per %s per account\n", limit, window)
	if m.memoryApplied != nil {
		fmt.Fprintf(w, "  Memory limit: %s\n", m.memoryApplied)
	}
	pi := partnerapi.ProfileInfo(s.API.Profile)
	latency := ""
	if m.Config.ProfileLatency {
		latency = ", playing its latency"
	}
	fmt.Fprintf(w, "  Profile:      %s (%s)%s\n", cmp.Or(pi.Name, "unnamed"), pi.Digest, latency)
	if len(m.Config.Violations) > 0 {
		fmt.Fprintf(w, "  VIOLATING:    %s (not a faithful simulator)\n", strings.Join(m.Config.Violations, ", "))
	}
	fmt.Fprintf(w, "\n  Accounts:\n")
	for _, acc := range s.Accounts {
		fmt.Fprintf(w, "    %-30s %s: %s  %s: %s  %s: %s\n", acc.Name,
			spec.HeaderAPIKey, acc.APIKey, spec.HeaderAPISecret, acc.APISecret, spec.HeaderAccountID, acc.AccountID)
	}
	fmt.Fprintf(w, "\n  Try it:\n")
	fmt.Fprintf(w, "    curl%s -X POST %s/%s \\\n", curlTLS, s.URL(), spec.PathCampaignList)
	fmt.Fprintf(w, "      -H 'Content-Type: %s' -H '%s: %s' \\\n", spec.ContentType, spec.HeaderAPIKey, a.APIKey)
	fmt.Fprintf(w, "      -H '%s: %s' -H '%s: %s' \\\n", spec.HeaderAPISecret, a.APISecret, spec.HeaderAccountID, a.AccountID)
	fmt.Fprintf(w, "      -d '{\"limit\": 2, \"page\": 1}'\n\n")
}

// redisLogger hands go-redis's log lines to slog as warnings.
type redisLogger struct{ l *slog.Logger }

func (r redisLogger) Printf(ctx context.Context, format string, v ...any) {
	r.l.WarnContext(ctx, "redis: "+fmt.Sprintf(format, v...))
}

// redactURL drops a password from a URL before it is printed.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// printVersion prints the --version line.
func (m *Main) printVersion() {
	fmt.Fprintln(m.stdout, buildinfo.String("simulator", version, commit))
}

// printViolations lists the catalogue: each name and the rule it breaks.
func (m *Main) printViolations() {
	all := violation.Catalogue()
	width := 0
	for _, v := range all {
		width = max(width, len(v.Name))
	}
	for _, v := range all {
		fmt.Fprintf(m.stdout, "%-*s  %s\n", width, v.Name, v.Rule)
	}
}
