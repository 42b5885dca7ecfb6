package partnerapi_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/gavv/httpexpect/v2"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/internal/apitest"
	"github.com/partner-v3/conformance-kit/simulator/sim"
)

// harness is an open simulator on a real TLS listener with clients for it.
type harness struct {
	t      testing.TB
	sim    *sim.Simulator
	clock  *apitest.Clock
	client *http.Client
	alpha  *simulator.Account
	bravo  *simulator.Account
}

// MustOpenServer starts a simulator on 127.0.0.1 with a fake clock, HTTPS
// and a control listener, and closes it when the test ends.
func MustOpenServer(tb testing.TB, cfg sim.Config) *harness {
	tb.Helper()
	if cfg.CampaignsPerAccount == 0 {
		cfg.CampaignsPerAccount = 73 // not a multiple of any page size tried
	}
	return openHarness(tb, cfg, 0, true)
}

// openHarness starts the simulator cfg describes with MustOpenServer's
// addresses, token, data directory and fake clock, the server's read
// timeout set when readTimeout is not zero, and a client trusting its
// certificate that speaks HTTP/2 when h2 (HTTP/1.1 otherwise).
func openHarness(tb testing.TB, cfg sim.Config, readTimeout time.Duration, h2 bool) *harness {
	tb.Helper()
	clock := apitest.NewClock(time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC))
	cfg.Addr, cfg.AdminAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.AdminToken = "test-token"
	cfg.DataDir = tb.TempDir()
	cfg.Now = clock.Now
	s, err := sim.New(context.Background(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	if readTimeout != 0 {
		s.ReadTimeout = readTimeout
	}
	if err := s.Open(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { MustCloseServer(tb, s) })
	pool := x509.NewCertPool()
	pem, err := os.ReadFile(s.Cert.CertFile)
	if err != nil {
		tb.Fatal(err)
	}
	pool.AppendCertsFromPEM(pem)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: h2}
	tb.Cleanup(tr.CloseIdleConnections)
	return &harness{t: tb, sim: s, clock: clock, client: &http.Client{Transport: tr, Timeout: 10 * time.Second},
		alpha: s.Accounts[0], bravo: s.Accounts[1]}
}

// MustCloseServer shuts s down.
func MustCloseServer(tb testing.TB, s *sim.Simulator) {
	tb.Helper()
	if err := s.Close(); err != nil {
		tb.Fatal(err)
	}
}

func (h *harness) expect(baseURL string) *httpexpect.Expect {
	return httpexpect.WithConfig(httpexpect.Config{
		BaseURL:  baseURL,
		Client:   h.client,
		Reporter: httpexpect.NewRequireReporter(h.t),
	})
}

// anon is the partner API with no credentials.
func (h *harness) anon() *httpexpect.Expect { return h.expect(h.sim.URL()) }

// as is the partner API with an account's three headers (spec §5).
func (h *harness) as(a *simulator.Account) *httpexpect.Expect {
	return h.anon().Builder(func(r *httpexpect.Request) {
		r.WithHeader("x-api-key", a.APIKey).WithHeader("x-api-secret", a.APISecret).WithHeader("x-account-id", a.AccountID)
	})
}

// admin is the control API with its token.
func (h *harness) admin() *httpexpect.Expect {
	return h.expect(h.sim.AdminURL()).Builder(func(r *httpexpect.Request) {
		r.WithHeader("Authorization", "Bearer test-token")
	})
}

// expectError checks a JSON error answer: status and exact message.
func expectError(resp *httpexpect.Response, status int, message string) {
	resp.Status(status).HasContentType("application/json")
	resp.JSON().Object().IsEqual(map[string]any{"error": message})
}

func (h *harness) contactCount(a *simulator.Account) int {
	return int(h.admin().GET("/contacts").WithQuery("accountId", a.AccountID).Expect().
		Status(http.StatusOK).JSON().Object().Value("total").Number().Raw())
}
