package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"encoding/xml"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/fixtures"
	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/simulator/sim"
	"github.com/partner-v3/conformance-kit/steps/result"
	"github.com/partner-v3/conformance-kit/steps/suite"
)

// devAccount is one entry of fixtures/accounts.json.
type devAccount struct {
	APIKey    string `json:"apiKey"`
	APISecret string `json:"apiSecret"`
	AccountID string `json:"accountId"`
}

func devAccounts(tb testing.TB) []devAccount {
	tb.Helper()
	var as []devAccount
	if err := json.Unmarshal(fixtures.Accounts, &as); err != nil {
		tb.Fatalf("decode fixtures/accounts.json: %v", err)
	}
	if len(as) < 2 {
		tb.Fatalf("fixtures/accounts.json has %d accounts, the suite's tests need 2", len(as))
	}
	return as
}

// credentials are a's as the suite and the control client take them.
func (a devAccount) credentials() control.Credentials {
	return control.Credentials{APIKey: a.APIKey, APISecret: a.APISecret, AccountID: a.AccountID}
}

// simulatorSuiteConfig is the suite's configuration for s over its
// verified HTTPS listener: both accounts, its control API, no profile
// learned.
func simulatorSuiteConfig(tb testing.TB, s *sim.Simulator) suite.Config {
	tb.Helper()
	as := devAccounts(tb)
	return suite.Config{
		BaseURL:   s.URL(),
		TLSConfig: &tls.Config{RootCAs: certPool(tb, s.Cert.CertFile)},
		Primary:   as[0].credentials(),
		Second:    as[1].credentials(),
		// The control API's certificate is the simulator's too.
		AdminURL:   s.AdminURL(),
		AdminToken: "test-admin-token",
		NoProfile:  true,
	}
}

// MustOpenSimulator starts a simulator over HTTPS on 127.0.0.1 with its
// control API, and closes it when the test ends.
// seededContacts is how many contacts MustOpenSimulator seeds per account:
// more than a page of the control API's contact list (100), so the steps
// that look a contact up there must page.
const seededContacts = 250

func MustOpenSimulator(tb testing.TB, violations ...string) *sim.Simulator {
	tb.Helper()
	s, err := sim.New(context.Background(), sim.Config{
		Addr:               "127.0.0.1:0",
		AdminAddr:          "127.0.0.1:0",
		DataDir:            tb.TempDir(),
		AdminToken:         "test-admin-token",
		Violations:         violations,
		ContactsPerAccount: seededContacts,
	})
	if err != nil {
		tb.Fatalf("new simulator: %v", err)
	}
	if err := s.Open(); err != nil {
		tb.Fatalf("open simulator: %v", err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("close simulator: %v", err)
		}
	})
	return s
}

// simulatorArgs are the runner flags for a simulator: both accounts, its
// certificate, its control API.
func simulatorArgs(tb testing.TB, s *sim.Simulator) []string {
	as := devAccounts(tb)
	args := []string{
		"--base-url", s.URL(),
		"--api-key", as[0].APIKey, "--api-secret", as[0].APISecret, "--account-id", as[0].AccountID,
		"--second-api-key", as[1].APIKey, "--second-api-secret", as[1].APISecret, "--second-account-id", as[1].AccountID,
		"--admin-url", s.AdminURL(), "--admin-token", "test-admin-token",
		"--no-colors",
		// Most tests are about the verdict: learning the profile would only
		// make them slower (learn_test.go tests it).
		"--no-profile",
	}
	if s.Cert != nil {
		args = append(args, "--ca-cert", s.Cert.CertFile)
	}
	return args
}

// waitsForWindows marks t as a test that waits for rate-limit windows:
// skipped under -short, and run in parallel with the others, since it
// mostly waits.
func waitsForWindows(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("waits for rate-limit windows")
	}
	t.Parallel()
}

func readSummary(tb testing.TB, dir string) *suite.Result {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		tb.Fatalf("read summary: %v", err)
	}
	var r suite.Result
	if err := json.Unmarshal(b, &r); err != nil {
		tb.Fatalf("decode summary: %v", err)
	}
	return &r
}

// TestRunSimulator runs every normative and simulator-choice scenario
// against a spec-faithful simulator: all must pass, none may skip (the
// simulator has campaigns, two accounts and a control API).
func TestRunSimulator(t *testing.T) {
	s := MustOpenSimulator(t)
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	// A random order each run: scenarios must not depend on each other.
	args := append(simulatorArgs(t, s), "--tags", "@normative,@simulator", "--format", "progress,junit,cucumber,html", "--report-dir", dir, "--random", "-1")
	code := run(context.Background(), args, &stdout, &stderr)
	if code != exitPass {
		t.Fatalf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitPass, stdout.String(), stderr.String())
	}
	r := readSummary(t, dir)
	if r.Verdict != suite.VerdictPass || r.Failed != 0 {
		t.Fatalf("verdict %s with %d failed, want pass", r.Verdict, r.Failed)
	}
	for _, sc := range r.Scenarios {
		if sc.Status == result.StatusSkipped {
			t.Errorf("scenario %q skipped against the simulator: %s", sc.Name, sc.Message)
		}
	}
	for _, f := range []string{"junit.xml", "cucumber.json", "progress.txt", "summary.md", "report.html", "exchanges.har", "certificate.json"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("report file %s missing or empty: %v", f, err)
		}
	}
	checkReports(t, dir, r)
	t.Logf("%d scenarios passed, %d requests, %s", r.Passed, r.Requests, r.Duration)
	if !strings.Contains(stdout.String(), "PASS") {
		t.Errorf("stdout does not end with the verdict:\n%s", stdout.String())
	}
}

// TestBaseURLFaultsAreFailedScenarios checks that a target that answers
// but breaks the spec's transport (plain HTTP) or address (a base path
// without /v3) fails the scenarios of spec §1 and §9 (exit status 1): it is
// the target's fault, not a usage error.
func TestBaseURLFaultsAreFailedScenarios(t *testing.T) {
	tests := []struct {
		name     string
		args     func(t *testing.T) []string
		scenario string
		section  string
	}{
		{"plain HTTP fails spec §1", func(t *testing.T) []string {
			s, err := sim.New(context.Background(), sim.Config{Addr: "127.0.0.1:0", AdminAddr: "127.0.0.1:0", Insecure: true, DataDir: t.TempDir(), AdminToken: "test-admin-token"})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Open(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return simulatorArgs(t, s)
		}, "The base address uses HTTPS", "1"},
		{"operations served under /v2 fail spec §9", func(t *testing.T) []string {
			// The simulator's operations, served under /v2/partner/webhook
			// with its own certificate.
			s := MustOpenSimulator(t)
			h := s.Handler()
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				r.URL.Path = strings.Replace(r.URL.Path, "/v2/", "/v3/", 1)
				h.ServeHTTP(w, r)
			}))
			srv.TLS = s.Cert.TLSConfig()
			srv.StartTLS()
			t.Cleanup(srv.Close)
			args := simulatorArgs(t, s)
			setFlag(args, "--base-url", srv.URL+"/v2/partner/webhook")
			return args
		}, "The base address ends in the versioned path prefix", "9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), append(tt.args(t), "--report-dir", dir, "--format", "progress"), &stdout, &stderr)
			if code != exitFail {
				t.Fatalf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitFail, stdout.String(), stderr.String())
			}
			r := readSummary(t, dir)
			for _, f := range r.FailedScenarios() {
				if f.Name == tt.scenario && slices.Contains(f.Sections, tt.section) {
					return
				}
			}
			t.Fatalf("scenario %q (§%s) did not fail; failed: %d", tt.scenario, tt.section, r.Failed)
		})
	}
}

// withoutFlags is a copy of args without each of flags and the value that
// follows it.
func withoutFlags(args []string, flags ...string) []string {
	out := slices.Clone(args)
	for _, f := range flags {
		i := slices.Index(out, f)
		out = slices.Delete(out, i, i+2)
	}
	return out
}

// setFlag sets the value that follows flag in args.
func setFlag(args []string, flag, value string) {
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			args[i+1] = value
		}
	}
}

// writeCert writes a test server's certificate as a PEM file for --ca-cert.
func writeCert(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(f, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestUsageAndConnectionErrorsExit2 checks exit status 2 and its message for
// what keeps the suite from running at all.
func TestUsageAndConnectionErrorsExit2(t *testing.T) {
	s := MustOpenSimulator(t)
	good := simulatorArgs(t, s)
	// A port nothing listens on: open and close a listener.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadURL := "https://" + ln.Addr().String() + "/v3/partner/webhook"
	ln.Close()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no base URL", []string{"--api-key", "k"}, "usage error: --base-url"},
		{"an unknown format", append(slices.Clone(good), "--format", "xml"), `usage error: --format "xml"`},
		{"an unknown flag", []string{"--bogus"}, "usage error"},
		{"missing credentials", []string{"--base-url", s.URL(), "--ca-cert", s.Cert.CertFile}, "--api-key or CONFORMANCE_API_KEY"},
		{"tags that select nothing", append(slices.Clone(good), "--tags", "@nothing-has-this"), "selects no scenario"},
		{"an unreachable target", append(slices.Clone(good[:0]), "--base-url", deadURL, "--api-key", "k", "--api-secret", "s", "--account-id", "a"), "connection error"},
		{"throwaway accounts without the control API", []string{"--base-url", s.URL(), "--ca-cert", s.Cert.CertFile, "--ephemeral-accounts"}, "--admin-url, --admin-token"},
		{"throwaway accounts with credentials given", append(slices.Clone(good), "--ephemeral-accounts"), "give no account credentials"},
		{"an untrusted certificate", withoutFlags(good, "--ca-cert"), "--ca-cert"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), append(tt.args, "--report-dir", ""), &stdout, &stderr)
			if code != exitUsage {
				t.Fatalf("exit status %d, want %d\nstderr:\n%s", code, exitUsage, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.want) {
				t.Fatalf("stderr %q does not say %q", stderr.String(), tt.want)
			}
		})
	}
}

// TestReadOnlyCreatesNothing runs the normative profile with --read-only
// and checks, through the simulator's control API, that no contact was
// stored and no @writes scenario ran.
func TestReadOnlyCreatesNothing(t *testing.T) {
	s := MustOpenSimulator(t)
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), append(simulatorArgs(t, s), "--read-only", "--report-dir", dir, "--format", "progress"), &stdout, &stderr); code != exitPass {
		t.Fatalf("exit status %d, want 0\n%s\n%s", code, stdout.String(), stderr.String())
	}
	r := readSummary(t, dir)
	for _, sc := range r.Scenarios {
		if slices.Contains(sc.Tags, "@writes") {
			t.Errorf("--read-only ran the @writes scenario %q", sc.Name)
		}
	}
	if r.Certification {
		t.Error("a read-only run reported itself a certification")
	}
	c := &control.Client{BaseURL: s.AdminURL(), Token: "test-admin-token",
		HTTP: &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: certPool(t, s.Cert.CertFile)}}}}
	for _, a := range devAccounts(t) {
		_, total, err := c.Contacts(context.Background(), control.ContactFilter{AccountID: a.AccountID, Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		if total != seededContacts {
			t.Errorf("account %s holds %d contacts after a read-only run, want the %d seeded", a.AccountID, total, seededContacts)
		}
	}
}

func certPool(tb testing.TB, file string) *x509.CertPool {
	tb.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		tb.Fatal(err)
	}
	p := x509.NewCertPool()
	if !p.AppendCertsFromPEM(b) {
		tb.Fatalf("%s holds no certificate", file)
	}
	return p
}

// TestInterruptedRunHasNoVerdict cancels a run while it waits for a
// rate-limit window (no control API, the spec's limit): the runner must
// exit 2 saying it was interrupted, not report failed scenarios.
func TestInterruptedRunHasNoVerdict(t *testing.T) {
	s := MustOpenSimulator(t)
	var args []string
	for _, a := range simulatorArgs(t, s) {
		if len(args) > 0 && (args[len(args)-1] == "--admin-url" || args[len(args)-1] == "--admin-token") {
			args = args[:len(args)-1]
			continue
		}
		args = append(args, a)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr lockedBuffer
	done := make(chan int)
	dir := t.TempDir()
	go func() {
		done <- run(ctx, append(args, "--tags", "@rate-limit && @normative", "--report-dir", dir), &stdout, &stderr)
	}()
	// The first @rate-limit scenario waits for a fresh window after the
	// preflight request: cancel once that wait has been announced.
	for !strings.Contains(stderr.String(), "fresh rate-limit window") {
		select {
		case code := <-done:
			t.Fatalf("the run ended (status %d) before waiting for a window\n%s", code, stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	cancel()
	if code := <-done; code != exitUsage {
		t.Fatalf("exit status %d, want %d\n%s", code, exitUsage, stderr.String())
	}
	if !strings.Contains(stderr.String(), "run interrupted") {
		t.Fatalf("stderr does not say the run was interrupted:\n%s", stderr.String())
	}
	// Like every exit 2, it leaves CI a report saying why (issue 27).
	if r := readSummary(t, dir); r.Verdict != suite.VerdictNotRun || !strings.Contains(r.NotRun, "run interrupted") || r.Passed+r.Failed != 0 {
		t.Errorf("summary: verdict %q, why %q, %d passed, %d failed; want not run, interrupted, no counts", r.Verdict, r.NotRun, r.Passed, r.Failed)
	}
	if _, err := os.Stat(filepath.Join(dir, "junit.xml")); err != nil {
		t.Errorf("no junit.xml: %v", err)
	}
}

// lockedBuffer is a bytes.Buffer a test may read while a run writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestFlagsOverrideEnvironment checks the precedence flag > CONFORMANCE_*
// environment > default.
func TestFlagsOverrideEnvironment(t *testing.T) {
	env := map[string]string{
		"CONFORMANCE_BASE_URL":   "https://env.example/v3/partner/webhook",
		"CONFORMANCE_API_KEY":    "env-key",
		"CONFORMANCE_READ_ONLY":  "true",
		"CONFORMANCE_RATE_LIMIT": "7",
	}
	o, err := parseFlags([]string{"--api-key", "flag-key"}, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if got, want := o.cfg.Primary.APIKey, "flag-key"; got != want {
		t.Errorf("api key %q, want the flag's %q", got, want)
	}
	if got, want := o.cfg.BaseURL, env["CONFORMANCE_BASE_URL"]; got != want {
		t.Errorf("base URL %q, want the environment's %q", got, want)
	}
	if !o.cfg.ReadOnly || o.cfg.RateLimit != 7 {
		t.Errorf("read-only %v, rate limit %d: want true, 7 from the environment", o.cfg.ReadOnly, o.cfg.RateLimit)
	}
	if got, want := o.cfg.Tags, "@normative"; got != want {
		t.Errorf("tags %q, want the default %q", got, want)
	}
	if _, err := parseFlags(nil, func(k string) string {
		if k == "CONFORMANCE_RATE_WINDOW" {
			return "soon"
		}
		return ""
	}); err == nil || !strings.Contains(err.Error(), "CONFORMANCE_RATE_WINDOW") {
		t.Errorf("a bad environment value gave %v, want an error naming CONFORMANCE_RATE_WINDOW", err)
	}
}

// checkReports reads the reports of a run as their users' tools would: the
// JUnit XML a CI parses (a testcase per scenario, named by feature and
// scenario), the HAR a browser's devtools open (every request, no
// credential), the self-contained HTML.
func checkReports(t *testing.T, dir string, r *suite.Result) {
	t.Helper()
	var junit struct {
		Suites []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Classname string `xml:"classname,attr"`
				Name      string `xml:"name,attr"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "junit.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(b, &junit); err != nil {
		t.Fatalf("junit.xml: %v", err)
	}
	cases := 0
	for _, s := range junit.Suites {
		seen := map[string]bool{}
		for _, c := range s.Cases {
			cases++
			if c.Classname != s.Name || seen[c.Name] {
				t.Errorf("junit testcase %q of %q: classname %q, seen before %v", c.Name, s.Name, c.Classname, seen[c.Name])
			}
			seen[c.Name] = true
		}
	}
	if cases != len(r.Scenarios) {
		t.Errorf("junit.xml has %d testcases, the run %d scenarios", cases, len(r.Scenarios))
	}
	var har struct {
		Log struct {
			Version string `json:"version"`
			Entries []struct {
				Request struct {
					URL string `json:"url"`
				} `json:"request"`
			} `json:"entries"`
		} `json:"log"`
	}
	b, err = os.ReadFile(filepath.Join(dir, "exchanges.har"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &har); err != nil || har.Log.Version != "1.2" {
		t.Fatalf("exchanges.har: version %q, %v", har.Log.Version, err)
	}
	if int64(len(har.Log.Entries)) < r.Requests {
		t.Errorf("exchanges.har holds %d entries for %d requests", len(har.Log.Entries), r.Requests)
	}
	for _, secret := range []string{"dev-secret-alpha-9d41e6a0c58b", "dev-key-alpha-7f3c2b9e", "acc_enc_QWxwaGFQYXJ0bmVyMDAx"} {
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("exchanges.har shows the credential %q", secret)
		}
	}
	b, err = os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(r.Headline())) || bytes.Contains(b, []byte(`src="http`)) || bytes.Contains(b, []byte(`href="http`)) {
		t.Errorf("report.html lacks the verdict or loads something from outside")
	}
}

// TestReportDirWithACommaExits2: godog takes its formatters as one
// comma-separated list of name:path, which cannot carry a directory with
// a comma; the runner says so (exit 2, what to change) instead of passing
// on godog's "unregistered formatter".
func TestReportDirWithACommaExits2(t *testing.T) {
	s := MustOpenSimulator(t)
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), append(simulatorArgs(t, s), "--report-dir", filepath.Join(t.TempDir(), "a,b")), &stdout, &stderr)
	if code != exitUsage || !strings.Contains(stderr.String(), "holds a comma") {
		t.Fatalf("exit status %d, want %d and the reason\nstderr:\n%s", code, exitUsage, stderr.String())
	}
}
