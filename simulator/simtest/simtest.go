// Package simtest runs the Partner API v3 simulator inside a Go test: the
// same code as the simulator binary (simulator/sim), started in-process
// over HTTPS on 127.0.0.1, with a certificate of its own, in milliseconds,
// with no Docker and no Redis. A partner tests their client against it in
// one line:
//
//	func TestMyClient(t *testing.T) {
//		t.Parallel()
//		sim := simtest.New(t) // closed when the test ends
//		acc := sim.Accounts[0]
//		client := myclient.New(sim.URL, acc.APIKey, acc.APISecret, acc.AccountID, sim.HTTPClient())
//		...
//		entries, _ := sim.Control.Journal(ctx, control.JournalFilter{AccountID: acc.AccountID})
//	}
//
// Every Simulator is separate: its own listeners, contacts, rate budgets
// (spec §8), clock, faults and journal, so parallel tests never see each
// other's state. simulator/container starts the same simulator from its
// image instead (docs/simtest.md says when to use which).
package simtest

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/simulator/sim"
)

// Simulator is a running in-process simulator.
type Simulator struct {
	// URL is the partner API's base address, ending in the spec §1 path
	// prefix: https://127.0.0.1:PORT/v3/partner/webhook.
	URL string
	// AdminURL is the control API's address (https://127.0.0.1:PORT) and
	// AdminToken its bearer token.
	AdminURL   string
	AdminToken string
	// Accounts are the credentials (spec §5) the simulator accepts; the
	// first is the primary account. The development accounts of
	// fixtures/accounts.json unless WithAccounts gave others.
	Accounts []simulator.Account
	// Control is a client of the control API, ready to use.
	Control *control.Client
	// CACertPEM is the PEM certificate to trust for URL and AdminURL: the
	// simulator's own, self-signed, for 127.0.0.1, ::1 and localhost, made
	// for this Simulator alone.
	CACertPEM []byte

	sim       *sim.Simulator
	client    *http.Client
	pool      *x509.CertPool
	removeDir string // Start's temporary directory, removed by Close

	closeOnce sync.Once
	closeErr  error
}

// settings are what the Options set.
type settings struct {
	seed       int64
	campaigns  *int
	contacts   int
	rateLimit  int
	rateWindow time.Duration
	accounts   []simulator.Account
	// withAccounts tells WithAccounts() with no account, an error, from
	// no WithAccounts.
	withAccounts bool
	adminToken   string
	faults       []control.FaultSpec
	logger       *slog.Logger
	profile      *profile.Profile
}

// Option configures a Simulator; the options mirror simulator/container's.
type Option func(*settings)

// WithSeed seeds the campaign generator (--seed): the same seed gives
// byte-identical campaigns. Zero means the simulator's default seed.
func WithSeed(seed int64) Option {
	return func(s *settings) { s.seed = seed }
}

// WithCampaigns sets how many campaigns each account gets (--campaigns); 0
// means none. Without it, sim.DefaultCampaigns (120).
func WithCampaigns(n int) Option {
	return func(s *settings) { s.campaigns = &n }
}

// WithContacts seeds n fake contacts for each account at start and again
// at every reset (--contacts). Without it, none.
func WithContacts(n int) Option {
	return func(s *settings) { s.contacts = n }
}

// WithRateLimit allows limit requests per window per account instead of
// the spec's 100 per minute (§8; --rate-limit, --rate-window), to exercise
// a client's back-off quickly. Zero keeps the spec's value.
func WithRateLimit(limit int, window time.Duration) Option {
	return func(s *settings) { s.rateLimit, s.rateWindow = limit, window }
}

// WithAccounts replaces the development accounts (--accounts). Each needs
// an APIKey, an APISecret and an AccountID, keys and ids unique; the first
// is the primary one.
func WithAccounts(accounts ...simulator.Account) Option {
	return func(s *settings) { s.accounts, s.withAccounts = accounts, true }
}

// WithAdminToken sets the control API's token instead of a random one.
func WithAdminToken(token string) Option {
	return func(s *settings) { s.adminToken = token }
}

// WithFaults injects faults through the control API once the simulator
// listens, before New or Start returns: the client's first requests meet
// them. A reset (Control.Reset) clears them like any fault.
func WithFaults(faults ...control.FaultSpec) Option {
	return func(s *settings) { s.faults = append(s.faults, faults...) }
}

// WithLogger logs the simulator's requests and errors there. Without it,
// nothing is logged.
func WithLogger(logger *slog.Logger) Option {
	return func(s *settings) { s.logger = logger }
}

// WithProfile makes the simulator play p where the spec is silent (issue
// 20, --profile): its error bodies, rate-limit window and headers,
// vocabulary and the rest. Nil means the default profile.
func WithProfile(p *profile.Profile) Option {
	return func(s *settings) { s.profile = p }
}

// New starts a simulator for the test and closes it when the test and its
// subtests end (tb.Cleanup). It fails the test (tb.Fatal) when the
// simulator cannot start.
func New(tb testing.TB, opts ...Option) *Simulator {
	tb.Helper()
	s, err := start(tb.TempDir(), opts)
	if err != nil {
		tb.Fatalf("simtest: %v", err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("simtest: close: %v", err)
		}
	})
	return s
}

// Start starts a simulator outside a test (an Example, a TestMain, a
// tool); Close stops it and removes its temporary files.
func Start(opts ...Option) (*Simulator, error) {
	dir, err := os.MkdirTemp("", "simtest-")
	if err != nil {
		return nil, fmt.Errorf("simtest: %w", err)
	}
	s, err := start(dir, opts)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("simtest: %w", err)
	}
	s.removeDir = dir
	return s, nil
}

// start builds the simulator's configuration from opts, with dataDir for
// its certificate, and opens it.
func start(dataDir string, opts []Option) (*Simulator, error) {
	var st settings
	for _, o := range opts {
		o(&st)
	}
	cfg := sim.Config{
		Addr:               "127.0.0.1:0",
		AdminAddr:          "127.0.0.1:0",
		DataDir:            dataDir,
		Seed:               st.seed,
		ContactsPerAccount: st.contacts,
		RateLimit:          st.rateLimit,
		RateWindow:         st.rateWindow,
		AdminToken:         st.adminToken,
		Logger:             st.logger,
		Profile:            st.profile,
	}
	if st.campaigns != nil {
		// sim.Config: zero means the default, a negative count none.
		cfg.CampaignsPerAccount = *st.campaigns
		if *st.campaigns == 0 {
			cfg.CampaignsPerAccount = -1
		}
	}
	if st.withAccounts {
		accounts, err := checkAccounts(st.accounts)
		if err != nil {
			return nil, err
		}
		cfg.Accounts = accounts
	}
	ss, err := sim.New(context.Background(), cfg)
	if err != nil {
		return nil, fmt.Errorf("new simulator: %w", err)
	}
	if err := ss.Open(); err != nil {
		ss.Close()
		return nil, fmt.Errorf("open simulator: %w", err)
	}
	s := &Simulator{URL: ss.URL(), AdminURL: ss.AdminURL(), AdminToken: ss.AdminToken, sim: ss}
	for _, a := range ss.Accounts {
		s.Accounts = append(s.Accounts, *a)
	}
	// The certificate in memory, not its file: the same bytes the
	// listeners serve.
	leaf := ss.Cert.TLS.Certificate[0]
	s.CACertPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leaf})
	s.pool = x509.NewCertPool()
	if !s.pool.AppendCertsFromPEM(s.CACertPEM) {
		ss.Close()
		return nil, errors.New("simulator certificate: not a PEM certificate")
	}
	s.client = s.newHTTPClient()
	s.Control = &control.Client{BaseURL: s.AdminURL, Token: s.AdminToken, HTTP: s.newHTTPClient()}
	for _, f := range st.faults {
		if _, err := s.Control.InjectFault(context.Background(), f); err != nil {
			s.Close()
			return nil, fmt.Errorf("WithFaults: %w", err)
		}
	}
	return s, nil
}

// checkAccounts validates WithAccounts' accounts as an accounts file is
// validated (simulator.ReadAccounts), so a test learns of a duplicate key
// at start instead of by a puzzling 401.
func checkAccounts(accounts []simulator.Account) ([]*simulator.Account, error) {
	if len(accounts) == 0 {
		return nil, errors.New("WithAccounts needs at least one account")
	}
	data, err := json.Marshal(accounts)
	if err != nil {
		return nil, fmt.Errorf("WithAccounts: %w", err)
	}
	out, err := simulator.ReadAccounts(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("WithAccounts: %w", err)
	}
	return out, nil
}

func (s *Simulator) newHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = s.TLSConfig()
	return &http.Client{Transport: t, Timeout: 30 * time.Second}
}

// CertPool returns a pool holding only the simulator's certificate.
func (s *Simulator) CertPool() *x509.CertPool { return s.pool.Clone() }

// TLSConfig returns client TLS settings that trust the simulator, and
// nothing else: for a client that builds its own transport.
func (s *Simulator) TLSConfig() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: s.CertPool()}
}

// HTTPClient returns a client that trusts the simulator's certificate and
// nothing else. It is the same client at every call (like
// httptest.Server.Client); Close closes its idle connections, so the
// simulator stops at once.
func (s *Simulator) HTTPClient() *http.Client { return s.client }

// Close stops the simulator: in-flight requests finish first. It closes
// the idle connections of HTTPClient and Control; a client of your own
// should close its idle connections before, or Close waits up to a second
// for each of its HTTP/2 connections to go. Calling Close again does
// nothing and returns the first call's error.
func (s *Simulator) Close() error {
	s.closeOnce.Do(func() {
		s.client.CloseIdleConnections()
		s.Control.HTTP.CloseIdleConnections()
		s.closeErr = s.sim.Close()
		if s.removeDir != "" {
			if err := os.RemoveAll(s.removeDir); err != nil && s.closeErr == nil {
				s.closeErr = err
			}
		}
	})
	return s.closeErr
}
