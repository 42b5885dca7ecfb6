package container_test

import (
	"bytes"
	"crypto/x509"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/container"
	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/simulator/internal/apitest"
	"github.com/partner-v3/conformance-kit/simulator/sim"
	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/suite"
)

func TestRunAnswersOnLoopbackOverTrustedTLS(t *testing.T) {
	c := runSimulator(t)

	u, err := url.Parse(c.URL)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := u.Scheme, "https"; got != want {
		t.Errorf("URL scheme=%q, want %q", got, want)
	}
	if got, want := u.Hostname(), "127.0.0.1"; got != want {
		t.Errorf("URL host=%q, want %q", got, want)
	}
	if got, want := u.Path, spec.BasePath; got != want {
		t.Errorf("URL path=%q, want %q", got, want)
	}
	if got, want := len(c.Accounts), 2; got != want {
		t.Fatalf("len(Accounts)=%d, want the %d development accounts", got, want)
	}

	// The development credentials work, through the client that trusts
	// the returned CA.
	status, body := apitest.Post(t, c.HTTPClient(), c.URL, &c.Accounts[0], spec.PathCampaignList, `{"limit": 2, "page": 1}`)
	if status != http.StatusOK {
		t.Fatalf("campaign/list status=%d, want 200; body %s", status, body)
	}
	var page struct {
		PageSize  int               `json:"pageSize"`
		Campaigns []json.RawMessage `json:"campaigns"`
	}
	if err := json.Unmarshal(body, &page); err != nil {
		t.Fatalf("campaign/list body: %v: %s", err, body)
	}
	if got, want := len(page.Campaigns), 2; got != want {
		t.Errorf("campaign/list returned %d campaigns, want %d", got, want)
	}

	// The certificate is the one handed back, not one the system trusts.
	_, err = http.Get(strings.TrimSuffix(c.URL, spec.BasePath) + "/healthz")
	var unknown x509.UnknownAuthorityError
	if !errors.As(err, &unknown) {
		t.Errorf("GET with the system roots: err=%v, want x509.UnknownAuthorityError", err)
	}

	// The control API: healthz open, the rest behind the token.
	admin := c.HTTPClient()
	for _, tt := range []struct {
		name, path, token string
		want              int
	}{
		{"healthz needs no token", "/healthz", "", http.StatusOK},
		{"config with the token", "/config", c.AdminToken, http.StatusOK},
		{"config without the token", "/config", "", http.StatusUnauthorized},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, c.AdminURL+tt.path, nil)
			if tt.token != "" {
				req.Header.Set("Authorization", "Bearer "+tt.token)
			}
			resp, err := admin.Do(req)
			if err != nil {
				t.Fatalf("GET %s: %v", tt.path, err)
			}
			resp.Body.Close()
			if got := resp.StatusCode; got != tt.want {
				t.Errorf("GET %s status=%d, want %d", tt.path, got, tt.want)
			}
		})
	}

	// Host networking, yet nothing listens beyond the loopback: the ports
	// are closed on this machine's other addresses.
	inspect, err := c.Inspect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(inspect.HostConfig.NetworkMode), "host"; got != want {
		t.Errorf("NetworkMode=%q, want %q", got, want)
	}
	if got, want := inspect.Config.Labels[container.Label], "simulator"; got != want {
		t.Errorf("label %s=%q, want %q", container.Label, got, want)
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, a := range addrs {
		ipnet, ok := a.(*net.IPNet)
		if !ok || ipnet.IP.IsLoopback() || ipnet.IP.To4() == nil {
			continue
		}
		conn, err := net.DialTimeout("tcp", net.JoinHostPort(ipnet.IP.String(), u.Port()), time.Second)
		if err == nil {
			conn.Close()
			t.Errorf("port %s answers on %s: the simulator must listen on 127.0.0.1 only", u.Port(), ipnet.IP)
		}
		checked++
	}
	if checked == 0 {
		t.Log("no non-loopback IPv4 address here: the loopback-only check had nothing to dial")
	}
}

func TestRunOptionsReachTheSimulator(t *testing.T) {
	accounts := []simulator.Account{
		{APIKey: "k-one", APISecret: "s-one", AccountID: "acc_one", Name: "one"},
		{APIKey: "k-two", APISecret: "s-two", AccountID: "acc_two", Name: "two"},
	}
	c := runSimulator(t,
		container.WithAccounts(accounts...),
		container.WithSeed(7),
		container.WithCampaigns(3),
		container.WithRateLimit(2, time.Hour),
		container.WithAdminToken("token-of-the-test"),
		container.WithEnv(map[string]string{"SIM_LOG_LEVEL": "debug"}),
	)
	client := c.HTTPClient()

	if got, want := c.AdminToken, "token-of-the-test"; got != want {
		t.Errorf("AdminToken=%q, want %q", got, want)
	}
	if got, want := c.Accounts, accounts; len(got) != len(want) || got[0] != want[0] {
		t.Errorf("Accounts=%v, want %v", got, want)
	}

	// The development credentials are gone: WithAccounts replaced them.
	alpha := &simulator.Account{APIKey: "dev-key-alpha-7f3c2b9e", APISecret: "dev-secret-alpha-9d41e6a0c58b", AccountID: "acc_enc_QWxwaGFQYXJ0bmVyMDAx"}
	status, body := apitest.Post(t, client, c.URL, alpha, spec.PathCampaignList, `{"limit": 50, "page": 1}`)
	if status != http.StatusUnauthorized {
		t.Errorf("development credentials: status=%d, want 401; body %s", status, body)
	}

	// WithSeed and WithCampaigns: the same bytes as an in-process
	// simulator with the same seed, accounts and count.
	status, got := apitest.Post(t, client, c.URL, &accounts[0], spec.PathCampaignList, `{"limit": 50, "page": 1}`)
	if status != http.StatusOK {
		t.Fatalf("campaign/list status=%d, want 200; body %s", status, got)
	}
	want := inProcessCampaignList(t, accounts, 7, 3)
	if !bytes.Equal(got, want) {
		t.Errorf("campaign/list of the container differs from an in-process simulator with seed 7:\n got %s\nwant %s", got, want)
	}
	var page struct {
		TotalRecords int `json:"totalRecords"`
	}
	if err := json.Unmarshal(got, &page); err != nil {
		t.Fatal(err)
	}
	if page.TotalRecords != 3 {
		t.Errorf("totalRecords=%d, want 3 (WithCampaigns)", page.TotalRecords)
	}

	// WithRateLimit(2, time.Hour): the account spent one request above;
	// the second passes, the third is refused.
	if status, body := apitest.Post(t, client, c.URL, &accounts[0], spec.PathCampaignList, `{"limit": 1, "page": 1}`); status != http.StatusOK {
		t.Errorf("request 2 of 2: status=%d, want 200; body %s", status, body)
	}
	if status, body := apitest.Post(t, client, c.URL, &accounts[0], spec.PathCampaignList, `{"limit": 1, "page": 1}`); status != http.StatusTooManyRequests {
		t.Errorf("request 3 of 2: status=%d, want 429; body %s", status, body)
	}
}

// inProcessCampaignList serves the first campaign page of an in-process
// simulator built like the container's.
func inProcessCampaignList(t *testing.T, accounts []simulator.Account, seed int64, n int) []byte {
	t.Helper()
	var ptrs []*simulator.Account
	for i := range accounts {
		ptrs = append(ptrs, &accounts[i])
	}
	s, err := sim.New(t.Context(), sim.Config{Accounts: ptrs, Seed: seed, CampaignsPerAccount: n, Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(s.Handler())
	defer srv.Close()
	status, body := apitest.Post(t, srv.Client(), srv.URL+spec.BasePath, &accounts[0], spec.PathCampaignList, `{"limit": 50, "page": 1}`)
	if status != http.StatusOK {
		t.Fatalf("in-process campaign/list status=%d; body %s", status, body)
	}
	return body
}

// suiteConfig describes a simulator container as a suite.Config.
func suiteConfig(c *container.Container, tags string) suite.Config {
	return suite.Config{
		BaseURL:    c.URL,
		TLSConfig:  c.TLSConfig(),
		Primary:    control.Credentials{APIKey: c.Accounts[0].APIKey, APISecret: c.Accounts[0].APISecret, AccountID: c.Accounts[0].AccountID},
		Second:     control.Credentials{APIKey: c.Accounts[1].APIKey, APISecret: c.Accounts[1].APISecret, AccountID: c.Accounts[1].AccountID},
		AdminURL:   c.AdminURL,
		AdminToken: c.AdminToken,
		Tags:       tags,
	}
}

func TestNormativeSuitePassesAgainstTheContainer(t *testing.T) {
	c := runSimulator(t)
	cfg := suiteConfig(c, suite.DefaultTags)
	cfg.TestingT = t // each scenario a subtest: a failure names it
	started := time.Now()
	res, err := suite.Run(t.Context(), cfg)
	if err != nil {
		t.Fatalf("suite.Run: %v", err)
	}
	t.Logf("normative suite: %d passed, %d failed, %d skipped, %d requests in %s",
		res.Passed, res.Failed, res.Skipped, res.Requests, time.Since(started).Round(time.Millisecond))
	if res.Verdict != suite.VerdictPass || res.Failed != 0 {
		for _, s := range res.FailedScenarios() {
			t.Errorf("failed: §%s %s: %s", strings.Join(s.Sections, " §"), s.Name, s.Message)
		}
		t.Fatalf("verdict %q, want %q", res.Verdict, suite.VerdictPass)
	}
	// Both accounts and the control API were given: nothing normative
	// may be left unverified.
	if res.Passed == 0 || res.Skipped != 0 {
		t.Errorf("passed=%d skipped=%d, want every normative scenario run and passed", res.Passed, res.Skipped)
	}
}

func TestSuiteFailsAgainstABrokenContainer(t *testing.T) {
	// The same run against a simulator told (through WithEnv) to break
	// §4.2 must fail, and on §4.2: the verdict above means something.
	c := runSimulator(t, container.WithEnv(map[string]string{"SIM_VIOLATE": "list-total-pages-floor"}))
	res, err := suite.Run(t.Context(), suiteConfig(c, suite.DefaultTags))
	if err != nil {
		t.Fatalf("suite.Run: %v", err)
	}
	if res.Verdict != suite.VerdictFail {
		t.Fatalf("verdict %q against a simulator violating §4.2, want %q", res.Verdict, suite.VerdictFail)
	}
	var sections []string
	for _, s := range res.FailedScenarios() {
		sections = append(sections, s.Sections...)
	}
	if !strings.Contains(strings.Join(sections, " "), "4.2") {
		t.Errorf("failed sections %v, want §4.2 among them", sections)
	}
}

func TestRunRefusesAnImageNotOnTheEngine(t *testing.T) {
	requireDocker(t)
	missing := "partner-v3-test/simulator:not-built"
	c, err := container.Run(t.Context(), container.WithImage(missing))
	if err == nil || c != nil {
		t.Fatalf("Run(%s): container %v, err %v; want no container and an error", missing, c, err)
	}
	if !strings.Contains(err.Error(), "is not on the Docker engine") {
		t.Errorf("err=%v, want it to say the image is not on the engine", err)
	}
	if ids := leftovers(t, missing); len(ids) > 0 {
		t.Errorf("containers of %s: %v", missing, ids)
	}
}

func TestRunStartsAgainWhenAPortWasTakenMeanwhile(t *testing.T) {
	requireDocker(t)
	// A port this process holds, handed to Run as if it had been free
	// when chosen: the first container cannot bind it and exits.
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	takenPort := taken.Addr().(*net.TCPAddr).Port
	real := *container.FreePorts
	t.Cleanup(func() { *container.FreePorts = real })
	calls := 0
	*container.FreePorts = func(n int) ([]int, error) {
		calls++
		ports, err := real(n)
		if calls == 1 && err == nil {
			ports[0] = takenPort
		}
		return ports, err
	}

	c := runSimulator(t)
	if calls != 2 {
		t.Errorf("ports chosen %d times, want 2 (once more after the clash)", calls)
	}
	u, err := url.Parse(c.URL)
	if err != nil {
		t.Fatal(err)
	}
	if u.Port() == strconv.Itoa(takenPort) {
		t.Errorf("URL %s uses the taken port", c.URL)
	}
	if status, body := apitest.Post(t, c.HTTPClient(), c.URL, &c.Accounts[0], spec.PathCampaignList, `{"limit": 1, "page": 1}`); status != http.StatusOK {
		t.Errorf("campaign/list status=%d, want 200; body %s", status, body)
	}
	// The container that clashed is gone; only the running one is left.
	if ids := leftovers(t, simImage); len(ids) != 1 {
		t.Errorf("containers of %s: %v, want only the running one", simImage, ids)
	}
}
