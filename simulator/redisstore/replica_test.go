package redisstore_test

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/fixtures"
	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/simulator/internal/apitest"
	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/suite"
)

// replica is one simulator process started by the replica test.
type replica struct {
	name     string
	baseURL  string // partner API, ending in spec.BasePath
	adminURL string
	token    string
	client   *http.Client // trusts the replicas' generated certificate
	cmd      *exec.Cmd
	done     chan struct{}
	log      *bytes.Buffer
	logMu    *sync.Mutex
}

// buildSimulator builds cmd/simulator into a temporary directory.
func buildSimulator(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "simulator")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/simulator")
	cmd.Dir = filepath.Join("..", "..") // the module root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/simulator: %v\n%s", err, out)
	}
	return bin
}

// lockedWriter lets the process and the test share the log buffer.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// startReplica runs the simulator over HTTPS on free loopback ports against
// redisURL, with the certificate it generates in (or reuses from) dataDir,
// and waits until its /healthz answers 200.
func startReplica(t *testing.T, bin, name, redisURL, dataDir string, extra ...string) *replica {
	t.Helper()
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	admin := "127.0.0.1:" + strconv.Itoa(freePort(t))
	r := &replica{
		name: name, baseURL: "https://" + addr + spec.BasePath, adminURL: "https://" + admin,
		token: "replica-test-token", done: make(chan struct{}), log: &bytes.Buffer{}, logMu: &sync.Mutex{},
	}
	args := []string{
		"--addr", addr, "--admin-addr", admin,
		"--redis-url", redisURL, "--seed", "4242", "--admin-token", r.token,
		"--data-dir", dataDir,
	}
	args = append(args, extra...)
	r.cmd = exec.Command(bin, args...)
	r.cmd.Env = os.Environ()
	w := lockedWriter{mu: r.logMu, w: r.log}
	r.cmd.Stdout, r.cmd.Stderr = w, w
	if err := r.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		_ = r.cmd.Wait()
		close(r.done)
	}()
	t.Cleanup(func() {
		select {
		case <-r.done:
		default:
			_ = r.cmd.Process.Signal(os.Interrupt)
			select {
			case <-r.done:
			case <-time.After(10 * time.Second):
				_ = r.cmd.Process.Kill()
				<-r.done
			}
		}
		if t.Failed() {
			t.Logf("%s output:\n%s", name, r.output())
		}
	})
	// Readiness only: the certificate is checked by r.client below.
	probe := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
	}}
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := probe.Get(r.adminURL + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				r.client = trustingClient(t, filepath.Join(dataDir, "cert.pem"))
				return r
			}
		}
		select {
		case <-r.done:
			t.Fatalf("%s exited: %s", name, r.output())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not healthy after 20 s (last: %v)\n%s", name, err, r.output())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// trustingClient returns a client that trusts only the certificate in
// certFile, the one the simulator generated.
func trustingClient(t *testing.T, certFile string) *http.Client {
	t.Helper()
	pem, err := os.ReadFile(certFile)
	if err != nil {
		t.Fatalf("read the generated certificate: %v", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatalf("%s holds no PEM certificate", certFile)
	}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
	}}
}

func (r *replica) output() string {
	r.logMu.Lock()
	defer r.logMu.Unlock()
	return r.log.String()
}

// call sends one partner request and returns the status, headers and body.
// servesAgain waits, up to recoverBound, until account a's Campaign List
// (body list) is served again after its store (what) came back, and
// checks that it answers as before and that Add Contact (email) works.
func (r *replica) servesAgain(t *testing.T, a *simulator.Account, list any, before []byte, what, email string) {
	t.Helper()
	start := time.Now()
	var after []byte
	for {
		var status int
		status, _, after = r.call(t, a, spec.PathCampaignList, list)
		if status == http.StatusOK {
			break
		}
		if time.Since(start) > recoverBound {
			t.Fatalf("campaign/list still %d %s %v after %s came back", status, after, recoverBound, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("serving again %v after %s came back", time.Since(start).Round(time.Millisecond), what)
	if !bytes.Equal(after, before) {
		t.Errorf("campaign/list after %s came back differs:\nbefore: %.300s\nafter:  %.300s", what, before, after)
	}
	if status, _, body := r.call(t, a, spec.PathContactAdd, map[string]string{"email": email}); status != http.StatusOK {
		t.Errorf("contact/add after %s came back: %d %s", what, status, body)
	}
}

func (r *replica) call(t *testing.T, a *simulator.Account, op string, body any) (int, http.Header, []byte) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, r.baseURL+"/"+op, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	apitest.SetCredentials(req.Header, a)
	resp, err := r.client.Do(req)
	if err != nil {
		t.Errorf("%s %s: %v", r.name, op, err)
		return 0, nil, nil
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Errorf("%s %s: read body: %v", r.name, op, err)
	}
	return resp.StatusCode, resp.Header, out
}

// admin sends one control API request and decodes the JSON answer into v.
func (r *replica) admin(t *testing.T, method, path string, body, v any) int {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, r.adminURL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+r.token)
	resp, err := r.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s %s: %v", r.name, method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s %s %s: %v in %s", r.name, method, path, err, b)
		}
	}
	return resp.StatusCode
}

// replicaSetup skips in -short mode (the replica tests build and run the
// simulator binary), starts a redis-server of its own and returns its URL
// and the development accounts the replicas serve.
func replicaSetup(t *testing.T) (string, []*simulator.Account) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the simulator binary")
	}
	port := freePort(t)
	startRedisServer(t, redisServerBinary(t), port)
	accounts, err := simulator.ReadAccounts(bytes.NewReader(fixtures.Accounts))
	if err != nil {
		t.Fatal(err)
	}
	return "redis://127.0.0.1:" + strconv.Itoa(port) + "/0", accounts
}

// TestReplicas runs two simulator processes on one real redis-server and
// checks that they behave as one service: spec §8's one shared counter per
// account, contacts stored through one visible through the other, the same
// campaigns, the same faults.
func TestReplicas(t *testing.T) {
	redisURL, accounts := replicaSetup(t)
	testReplicas(t, redisURL, accounts)
}

// testReplicas is TestReplicas on the Redis (or Redis Cluster) at redisURL.
func testReplicas(t *testing.T, redisURL string, accounts []*simulator.Account) {
	if len(accounts) < 2 {
		t.Fatalf("fixtures/accounts.json holds %d accounts, want 2", len(accounts))
	}
	alpha, bravo := accounts[0], accounts[1]

	bin := buildSimulator(t)
	// One data directory: the second replica reuses the first's certificate.
	dataDir := t.TempDir()
	one := startReplica(t, bin, "replica one", redisURL, dataDir)
	two := startReplica(t, bin, "replica two", redisURL, dataDir)

	t.Run("spec §8: one counter per account across replicas", func(t *testing.T) {
		// 60 requests to one and 40 to the other, all at once: exactly the
		// limit, so every one passes.
		var (
			wg       sync.WaitGroup
			mu       sync.Mutex
			statuses = map[int]int{}
		)
		send := func(r *replica, n int) {
			for range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					status, _, _ := r.call(t, alpha, spec.PathCampaignList, map[string]int{"limit": 1, "page": 1})
					mu.Lock()
					statuses[status]++
					mu.Unlock()
				}()
			}
		}
		send(one, 60)
		send(two, 40)
		wg.Wait()
		if got, want := statuses, map[int]int{http.StatusOK: 100}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("statuses of 60+40 requests = %v, want %v", got, want)
		}
		// The 101st, to either replica, is refused with the spec's body.
		for _, r := range []*replica{two, one} {
			status, header, body := r.call(t, alpha, spec.PathCampaignList, map[string]int{"limit": 1, "page": 1})
			if status != http.StatusTooManyRequests {
				t.Errorf("%s: 101st status = %d, want 429 (body %s)", r.name, status, body)
				continue
			}
			var got map[string]any
			if err := json.Unmarshal(body, &got); err != nil {
				t.Errorf("%s: 429 body %q is not JSON: %v", r.name, body, err)
			}
			if want := map[string]any{"error": spec.MsgRateLimit}; fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s: 429 body = %s, want {\"error\":%q}", r.name, body, spec.MsgRateLimit)
			}
			if header.Get("Retry-After") == "" {
				t.Errorf("%s: 429 without Retry-After", r.name)
			}
		}
		// Another account has its own counter.
		if status, _, body := two.call(t, bravo, spec.PathCampaignList, map[string]int{"limit": 1, "page": 1}); status != http.StatusOK {
			t.Errorf("other account: status = %d, want 200 (body %s)", status, body)
		}
	})

	t.Run("a contact added through one replica is listed by the other", func(t *testing.T) {
		status, _, body := one.call(t, bravo, spec.PathContactAdd, map[string]any{
			"email": "Replica.Test@example.com", "firstName": "Rep", "tag": []string{"replicas"},
		})
		if status != http.StatusOK {
			t.Fatalf("contact/add on one: status = %d, body %s", status, body)
		}
		var added struct {
			Status    string `json:"status"`
			ContactID string `json:"contactId"`
		}
		if err := json.Unmarshal(body, &added); err != nil || added.Status != "success" || added.ContactID == "" {
			t.Fatalf("contact/add body = %s (%v)", body, err)
		}
		var list struct {
			Contacts []simulator.Contact `json:"contacts"`
			Total    int                 `json:"total"`
		}
		if code := two.admin(t, http.MethodGet, "/contacts?accountId="+bravo.AccountID, nil, &list); code != http.StatusOK {
			t.Fatalf("GET /contacts on two: status %d", code)
		}
		if list.Total != 1 || len(list.Contacts) != 1 {
			t.Fatalf("contacts on two = %+v, want the one added on one", list)
		}
		if c := list.Contacts[0]; c.ID != added.ContactID || c.Email != "Replica.Test@example.com" || c.AccountID != bravo.AccountID {
			t.Errorf("contact on two = %+v, want id %s", c, added.ContactID)
		}
		// The same email through the other replica is the same contact.
		status, _, body = two.call(t, bravo, spec.PathContactAdd, map[string]any{"email": "replica.test@EXAMPLE.com", "city": "Oslo"})
		if status != http.StatusOK {
			t.Fatalf("contact/add on two: status = %d, body %s", status, body)
		}
		if code := one.admin(t, http.MethodGet, "/contacts?accountId="+bravo.AccountID, nil, &list); code != http.StatusOK || list.Total != 1 {
			t.Errorf("contacts on one after the same email on two: status %d, total %d, want 1", code, list.Total)
		} else if list.Contacts[0].City != "Oslo" {
			t.Errorf("merged contact = %+v, want city Oslo", list.Contacts[0])
		}
	})

	t.Run("both replicas list identical campaigns", func(t *testing.T) {
		for page := 1; page <= 3; page++ {
			req := map[string]int{"limit": 50, "page": page}
			s1, _, b1 := one.call(t, bravo, spec.PathCampaignList, req)
			s2, _, b2 := two.call(t, bravo, spec.PathCampaignList, req)
			if s1 != http.StatusOK || s2 != http.StatusOK {
				t.Fatalf("page %d: statuses %d, %d, want 200 (%s / %s)", page, s1, s2, b1, b2)
			}
			if !bytes.Equal(b1, b2) {
				t.Errorf("page %d differs:\none: %.300s\ntwo: %.300s", page, b1, b2)
			}
			if page == 1 && !strings.Contains(string(b1), `"Id"`) {
				t.Errorf("page 1 holds no campaign: %.300s", b1)
			}
		}
		// Generated and stored once: the second replica found them (its
		// banner says so; cmd/simulator prints sim.Simulator.Seeded).
		const found = "campaigns already seeded there"
		if strings.Contains(one.output(), found) || !strings.Contains(two.output(), found) {
			t.Errorf("want only the second replica to report %q\none:\n%s\ntwo:\n%s", found, one.output(), two.output())
		}
	})

	t.Run("a fault injected through one replica applies to the other", func(t *testing.T) {
		var fault struct {
			ID string `json:"id"`
		}
		if code := one.admin(t, http.MethodPost, "/faults", map[string]any{"operation": spec.PathCampaignStats, "kind": "error", "count": 1}, &fault); code != http.StatusCreated {
			t.Fatalf("POST /faults on one: status %d", code)
		}
		status, _, body := two.call(t, bravo, spec.PathCampaignStats, map[string]int{"campaignId": 1})
		if status != http.StatusInternalServerError || !strings.Contains(string(body), spec.MsgInternal) {
			t.Errorf("campaign/stats on two = %d %s, want 500 %q", status, body, spec.MsgInternal)
		}
		var faults struct {
			Faults []json.RawMessage `json:"faults"`
		}
		if code := one.admin(t, http.MethodGet, "/faults", nil, &faults); code != http.StatusOK || len(faults.Faults) != 0 {
			t.Errorf("faults on one after two consumed it: status %d, %s", code, faults.Faults)
		}
	})

	t.Run("the normative suite passes against each replica", func(t *testing.T) {
		// The third target alternates the replicas request by request,
		// as a load balancer may, while the suite resets counters
		// through one's control API only: every rule's state (counters,
		// contacts, the reset) must be the same on both.
		roundRobin := roundRobinProxy(t, dataDir, one, two)
		for _, r := range []*replica{one, two, roundRobin} {
			t.Run(r.name, func(t *testing.T) {
				if code := r.admin(t, http.MethodPost, "/reset", nil, nil); code != http.StatusOK {
					t.Fatalf("POST /reset: status %d", code)
				}
				res, err := suite.Run(t.Context(), suite.Config{
					BaseURL:    r.baseURL,
					TLSConfig:  r.client.Transport.(*http.Transport).TLSClientConfig,
					Primary:    control.Credentials{APIKey: alpha.APIKey, APISecret: alpha.APISecret, AccountID: alpha.AccountID},
					Second:     control.Credentials{APIKey: bravo.APIKey, APISecret: bravo.APISecret, AccountID: bravo.AccountID},
					AdminURL:   r.adminURL,
					AdminToken: r.token,
					Tags:       suite.DefaultTags,
					TestingT:   t, // each scenario a subtest: a failure names it
				})
				if err != nil {
					t.Fatalf("suite.Run: %v", err)
				}
				t.Logf("%s: %d passed, %d failed, %d skipped, %d requests in %s",
					r.name, res.Passed, res.Failed, res.Skipped, res.Requests, res.Duration.Round(time.Millisecond))
				if res.Verdict != suite.VerdictPass || res.Failed != 0 || res.Skipped != 0 {
					for _, sc := range res.FailedScenarios() {
						t.Errorf("failed: §%s %s: %s", strings.Join(sc.Sections, " §"), sc.Name, sc.Message)
					}
					t.Fatalf("verdict %q, %d skipped; want %q, none skipped", res.Verdict, res.Skipped, suite.VerdictPass)
				}
			})
		}
	})

	t.Run("the clock set through one replica is the other's", func(t *testing.T) {
		var c1, c2 struct {
			Now    string `json:"now"`
			Frozen bool   `json:"frozen"`
		}
		if code := one.admin(t, http.MethodPost, "/clock", map[string]any{"set": "2030-01-02T03:04:05.000Z", "freeze": true}, &c1); code != http.StatusOK {
			t.Fatalf("POST /clock on one: status %d", code)
		}
		if code := two.admin(t, http.MethodGet, "/clock", nil, &c2); code != http.StatusOK {
			t.Fatalf("GET /clock on two: status %d", code)
		}
		if c2.Now != "2030-01-02T03:04:05.000Z" || !c2.Frozen {
			t.Errorf("clock on two = %+v, want frozen at 2030-01-02T03:04:05.000Z (one says %+v)", c2, c1)
		}
	})
}

// roundRobinProxy is an HTTPS reverse proxy on loopback that sends each
// request to the next of the replicas in turn, with the certificate they
// share from dataDir. As a replica, its control API is the first's.
func roundRobinProxy(t *testing.T, dataDir string, replicas ...*replica) *replica {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(filepath.Join(dataDir, "cert.pem"), filepath.Join(dataDir, "key.pem"))
	if err != nil {
		t.Fatalf("the replicas' certificate: %v", err)
	}
	var next atomic.Uint64
	served := make([]atomic.Int64, len(replicas))
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			i := next.Add(1) % uint64(len(replicas))
			served[i].Add(1)
			u, err := url.Parse(replicas[i].baseURL)
			if err != nil {
				panic(err)
			}
			pr.SetURL(&url.URL{Scheme: u.Scheme, Host: u.Host})
		},
		Transport: proxyTransport(replicas[0]),
	}
	// The request body is read whole before it is passed on. Go's HTTP/1
	// server closes a request's body once the answer's header is written,
	// and the proxy's Transport, having sent the declared length, reads
	// the body once more to check for extra bytes: when the replica
	// answered first, that read fails, the Transport tears the connection
	// to the replica down, and the answer being copied is cut ("use of
	// closed network connection" here, "unexpected EOF" for the suite;
	// golang/go#40747). An in-memory body has nothing left to fail.
	buffered := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "read the request body: "+err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		proxy.ServeHTTP(w, r)
	})
	srv := httptest.NewUnstartedServer(buffered)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.StartTLS()
	t.Cleanup(func() {
		srv.Close()
		// Every replica must have served: a proxy that sent everything
		// to one would prove nothing.
		for i := range served {
			if served[i].Load() == 0 {
				t.Errorf("round robin: %s served no request", replicas[i].name)
			}
		}
	})
	first := *replicas[0]
	first.name = "round robin over the replicas"
	first.baseURL = srv.URL + spec.BasePath
	return &first
}

// proxyTransport trusts what r's client trusts, over HTTP/1.1 (the
// client's TLS settings may offer h2 through ALPN, which a plain
// http.Transport given them would then misread).
func proxyTransport(r *replica) *http.Transport {
	c := r.client.Transport.(*http.Transport).TLSClientConfig.Clone()
	c.NextProtos = nil
	return &http.Transport{TLSClientConfig: c, MaxIdleConnsPerHost: 8}
}

// TestReplicaOutage kills the redis-server under a running simulator and
// starts it again: meanwhile every partner request answers spec §7's 500
// Internal server error in JSON, quickly, and /healthz says why; afterwards
// the simulator serves again, campaigns included, without a restart.
func TestReplicaOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the simulator binary")
	}
	redisBin := redisServerBinary(t)
	port := freePort(t)
	srv := startRedisServer(t, redisBin, port)
	redisURL := "redis://127.0.0.1:" + strconv.Itoa(port) + "/0"
	accounts, err := simulator.ReadAccounts(bytes.NewReader(fixtures.Accounts))
	if err != nil {
		t.Fatal(err)
	}
	alpha := accounts[0]
	r := startReplica(t, buildSimulator(t), "replica", redisURL, t.TempDir())
	list := map[string]int{"limit": 10, "page": 1}
	status, _, before := r.call(t, alpha, spec.PathCampaignList, list)
	if status != http.StatusOK {
		t.Fatalf("campaign/list before the outage: %d %s", status, before)
	}

	srv.stop(t)
	for _, op := range []struct {
		name string
		body any
	}{
		{spec.PathContactAdd, map[string]string{"email": "outage@example.com"}},
		{spec.PathCampaignList, list},
		{spec.PathCampaignStats, map[string]int{"campaignId": 1}},
	} {
		start := time.Now()
		status, header, body := r.call(t, alpha, op.name, op.body)
		elapsed := time.Since(start)
		t.Logf("%s during the outage: %d %s after %v", op.name, status, bytes.TrimSpace(body), elapsed.Round(time.Millisecond))
		if status != http.StatusInternalServerError {
			t.Errorf("%s: status = %d, want 500", op.name, status)
		}
		if got, want := strings.TrimSpace(string(body)), `{"error":"`+spec.MsgInternal+`"}`; got != want {
			t.Errorf("%s: body = %s, want %s", op.name, got, want)
		}
		if ct := header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("%s: Content-Type = %q, want application/json", op.name, ct)
		}
		if elapsed >= hangBound {
			t.Errorf("%s took %v, want an answer before %v", op.name, elapsed, hangBound)
		}
	}
	var health struct {
		Status string `json:"status"`
		Error  string `json:"error"`
	}
	if code := r.admin(t, http.MethodGet, "/healthz", nil, &health); code != http.StatusServiceUnavailable || !strings.Contains(health.Error, "redis") {
		t.Errorf("/healthz during the outage = %d %+v, want 503 naming redis", code, health)
	}

	// The new redis-server starts empty; the campaigns are in the
	// simulator's memory, so they are served as before.
	startRedisServer(t, redisBin, port)
	r.servesAgain(t, alpha, list, before, "Redis", "outage@example.com")
	if code := r.admin(t, http.MethodGet, "/healthz", nil, &health); code != http.StatusOK || health.Status != "ok" {
		t.Errorf("/healthz after the restart = %d %+v, want 200 ok", code, health)
	}
}

// TestReplicaSeeds starts replicas with --contacts on one redis-server:
// alike ones share one copy of the seeded contacts; one started with
// another seed or another count refuses to start, naming both versions; a
// reset through either brings the seeded contacts back.
func TestReplicaSeeds(t *testing.T) {
	redisURL, accounts := replicaSetup(t)
	testReplicaSeeds(t, redisURL, accounts)
}

// testReplicaSeeds is TestReplicaSeeds on the Redis (or Redis Cluster)
// at redisURL.
func testReplicaSeeds(t *testing.T, redisURL string, accounts []*simulator.Account) {
	bin := buildSimulator(t)
	dataDir := t.TempDir()
	const n = 40
	one := startReplica(t, bin, "replica one", redisURL, dataDir, "--contacts", strconv.Itoa(n))
	two := startReplica(t, bin, "replica two", redisURL, dataDir, "--contacts", strconv.Itoa(n))

	type list struct {
		Contacts []simulator.Contact `json:"contacts"`
		Total    int                 `json:"total"`
	}
	want := n * len(accounts)
	var before list
	for _, r := range []*replica{one, two} {
		var l list
		if code := r.admin(t, http.MethodGet, "/contacts?limit=1000", nil, &l); code != http.StatusOK || l.Total != want {
			t.Fatalf("%s: GET /contacts = %d, total %d; want %d (seeded once, shared)", r.name, code, l.Total, want)
		}
		if r == one {
			before = l
		} else if !sameJSON(l, before) {
			t.Errorf("the replicas list different contacts")
		}
	}

	for _, tt := range []struct {
		name string
		args []string
		what string
	}{
		{"another seed", []string{"--seed", "4243", "--contacts", strconv.Itoa(n)}, "campaigns"},
		{"another contact count", []string{"--contacts", strconv.Itoa(n + 1)}, "contacts"},
	} {
		t.Run("a replica with "+tt.name+" refuses to start", func(t *testing.T) {
			args := []string{"--addr", "127.0.0.1:0", "--admin-addr", "", "--redis-url", redisURL,
				"--data-dir", dataDir, "--seed", "4242"}
			cmd := exec.Command(bin, append(args, tt.args...)...)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("started:\n%s", out)
			}
			if !strings.Contains(string(out), "replicas disagree") || !strings.Contains(string(out), tt.what+" version") {
				t.Errorf("output does not explain the refusal (%v):\n%s", err, out)
			}
		})
	}

	bravo := accounts[1]
	if status, _, body := one.call(t, bravo, spec.PathContactAdd, map[string]any{"email": "after.seed@example.com"}); status != http.StatusOK {
		t.Fatalf("contact/add: %d %s", status, body)
	}
	if code := two.admin(t, http.MethodPost, "/reset", nil, nil); code != http.StatusOK {
		t.Fatalf("POST /reset on two: status %d", code)
	}
	var after list
	if code := one.admin(t, http.MethodGet, "/contacts?limit=1000", nil, &after); code != http.StatusOK || !sameJSON(after, before) {
		t.Errorf("after a reset through two, one lists %d contacts (status %d), want the %d seeded ones", after.Total, code, want)
	}
}

// sameJSON compares by encoding: the contacts hold pointers.
func sameJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}
