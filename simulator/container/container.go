// Package container starts the Partner API v3 simulator's image with
// testcontainers-go, in the style of a testcontainers module, so partners'
// own Go tests get a running simulator in one line:
//
//	sim, err := container.Run(ctx)
//	defer testcontainers.TerminateContainer(sim)
//	client := sim.HTTPClient() // trusts the simulator's certificate
//	resp, err := client.Post(sim.URL+"/campaign/list", ...)
//
// The container uses the host's network and listens on 127.0.0.1 only, on
// free ports, over HTTPS with a certificate made for this one container. Run
// returns once both the partner API and the control API answer over TLS.
//
// The image must exist on the Docker engine (`make image` builds it as
// DefaultImage); Run never pulls, so a registry's image of the same name
// cannot stand in for it. The engine must be local, so that its host
// network is this machine's loopback. Run sets TESTCONTAINERS_RYUK_DISABLED
// and TESTCONTAINERS_HOST_OVERRIDE itself when they are unset (see
// TestcontainersDefaults): terminate the container yourself, as above.
package container

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/big"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	dockercontainer "github.com/moby/moby/api/types/container"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/partner-v3/conformance-kit/fixtures"
	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// DefaultImage is the image Run starts unless WithImage names another: the
// one `make image` builds.
const DefaultImage = "partner-v3/simulator:latest"

// Label is set, with the value "simulator", on every container Run starts,
// so leftovers can be found (`docker ps -a --filter label=...`) where Ryuk
// is disabled.
const Label = "org.partner-v3.conformance-kit"

// DefaultStartupTimeout bounds the wait for the simulator to answer.
const DefaultStartupTimeout = 30 * time.Second

// Paths inside the container of the files Run copies in before the start;
// outside /data, the simulator's own directory, so nothing there is taken
// for a certificate it made.
const (
	certPath     = "/etc/simulator/cert.pem"
	keyPath      = "/etc/simulator/key.pem"
	accountsPath = "/etc/simulator/accounts.json"
	profilePath  = "/etc/simulator/profile.json"
)

// Container is a running simulator.
type Container struct {
	*testcontainers.DockerContainer

	// URL is the partner API's base address, ending in /v3/partner/webhook:
	// https://127.0.0.1:PORT/v3/partner/webhook.
	URL string
	// AdminURL is the control API (https://127.0.0.1:PORT) and AdminToken
	// its bearer token.
	AdminURL   string
	AdminToken string
	// Accounts are the credentials the simulator accepts; the first is the
	// primary account. The development accounts of fixtures/accounts.json
	// unless WithAccounts gave others.
	Accounts []simulator.Account
	// CACertPEM is the PEM certificate to trust for URL and AdminURL (the
	// simulator's own, self-signed, for 127.0.0.1, ::1 and localhost).
	CACertPEM []byte
}

// Terminate stops and removes the container. Unless opts say otherwise
// (testcontainers.StopTimeout), the simulator is killed at once instead of
// stopped gracefully: it keeps nothing worth a clean shutdown, and a
// graceful one waits a second on each listener for HTTP/2 clients (the
// readiness probe's among them) to hang up after GOAWAY.
func (c *Container) Terminate(ctx context.Context, opts ...testcontainers.TerminateOption) error {
	if c == nil {
		return nil
	}
	opts = append([]testcontainers.TerminateOption{testcontainers.StopTimeout(0)}, opts...)
	return c.DockerContainer.Terminate(ctx, opts...)
}

// CertPool returns a pool holding only the simulator's certificate.
func (c *Container) CertPool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(c.CACertPEM)
	return pool
}

// TLSConfig returns client TLS settings that trust the simulator, and
// nothing else.
func (c *Container) TLSConfig() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: c.CertPool()}
}

// HTTPClient returns a client that trusts the simulator's certificate.
func (c *Container) HTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = c.TLSConfig()
	return &http.Client{Transport: t, Timeout: 30 * time.Second}
}

// Control returns a typed client of the simulator's control API (AdminURL,
// AdminToken), over a client that trusts its certificate.
func (c *Container) Control() *control.Client {
	return &control.Client{BaseURL: c.AdminURL, Token: c.AdminToken, HTTP: c.HTTPClient()}
}

// settings are what the Options set.
type settings struct {
	image          string
	seed           int64
	campaigns      *int
	rateLimit      int
	rateWindow     time.Duration
	accounts       []simulator.Account
	adminToken     string
	startupTimeout time.Duration
	// profile is the deployment profile's file, nil for none; profileErr
	// why the option could not make one (Run returns it).
	profile    []byte
	profileErr error
}

// Option configures the simulator Run starts. It is a
// testcontainers.ContainerCustomizer, so Run takes Options and
// testcontainers' own customizers (WithLogger, WithCmdArgs, WithLabels...)
// in one list.
type Option func(*settings)

// Customize implements testcontainers.ContainerCustomizer; Options act on
// the settings, not on the request, so it does nothing.
func (o Option) Customize(*testcontainers.GenericContainerRequest) error { return nil }

// WithImage starts image instead of DefaultImage.
func WithImage(image string) Option {
	return func(s *settings) { s.image = image }
}

// WithSeed seeds the campaign generator (--seed): the same seed gives
// byte-identical responses.
func WithSeed(seed int64) Option {
	return func(s *settings) { s.seed = seed }
}

// WithCampaigns sets how many campaigns each account gets (--campaigns); 0
// means none.
func WithCampaigns(n int) Option {
	return func(s *settings) { s.campaigns = &n }
}

// WithRateLimit allows limit requests per window per account instead of
// the spec's 100 per minute (--rate-limit, --rate-window), to exercise a
// client's back-off quickly.
func WithRateLimit(limit int, window time.Duration) Option {
	return func(s *settings) { s.rateLimit, s.rateWindow = limit, window }
}

// WithAccounts replaces the development accounts (--accounts). Each needs
// an APIKey, an APISecret and an AccountID; the first is the primary one.
func WithAccounts(accounts ...simulator.Account) Option {
	return func(s *settings) { s.accounts = accounts }
}

// WithAdminToken sets the control API's token instead of a random one.
func WithAdminToken(token string) Option {
	return func(s *settings) { s.adminToken = token }
}

// WithProfile makes the simulator play p where the spec is silent (issue
// 20, --profile): the file is copied into the container and named by
// SIM_PROFILE. Nil means the simulator's own choices.
func WithProfile(p *profile.Profile) Option {
	return func(s *settings) {
		s.profile, s.profileErr = nil, nil
		if p != nil {
			s.profile, s.profileErr = p.Marshal()
		}
	}
}

// WithProfileFile is WithProfile of the profile file at path, read and
// checked (profile.Load) when Run starts: a profile the simulator would
// refuse is Run's error, not a container that exits at once.
func WithProfileFile(path string) Option {
	return func(s *settings) {
		s.profile, s.profileErr = nil, nil
		p, err := profile.Load(path)
		if err != nil {
			s.profileErr = err
			return
		}
		s.profile, s.profileErr = p.Marshal()
	}
}

// profileFile is the container file and environment that play the
// settings' profile: none without one.
func (s *settings) profileFile() ([]testcontainers.ContainerFile, map[string]string) {
	if s.profile == nil {
		return nil, nil
	}
	return []testcontainers.ContainerFile{{Reader: bytes.NewReader(s.profile), ContainerFilePath: profilePath, FileMode: 0o644}},
		map[string]string{"SIM_PROFILE": profilePath}
}

// WithStartupTimeout bounds the wait for the simulator to answer instead
// of DefaultStartupTimeout.
func WithStartupTimeout(d time.Duration) Option {
	return func(s *settings) { s.startupTimeout = d }
}

// WithEnv adds environment variables, e.g. SIM_LOG_LEVEL=debug. Every flag
// of the simulator has a SIM_* variable; those Run sets as flags (addresses,
// certificate, seed, rate limit, accounts) win over the environment.
func WithEnv(env map[string]string) testcontainers.CustomizeRequestOption {
	return testcontainers.WithEnv(env)
}

// Run starts the simulator image and waits until its partner API and its
// control API answer over HTTPS. When the container started but did not
// become ready, Run returns it with the error, so it can be terminated
// (testcontainers.TerminateContainer accepts a nil *Container).
func Run(ctx context.Context, opts ...testcontainers.ContainerCustomizer) (*Container, error) {
	SetTestcontainersDefaults() // before testcontainers reads its configuration
	s := settings{image: DefaultImage, startupTimeout: DefaultStartupTimeout}
	for _, opt := range opts {
		if o, ok := opt.(Option); ok {
			o(&s)
		}
	}
	accounts := s.accounts
	if accounts == nil {
		devs, err := simulator.ReadAccounts(bytes.NewReader(fixtures.Accounts))
		if err != nil {
			return nil, fmt.Errorf("read development accounts: %w", err)
		}
		for _, a := range devs {
			accounts = append(accounts, *a)
		}
	}
	if len(accounts) == 0 {
		return nil, errors.New("run simulator: WithAccounts needs at least one account")
	}
	if s.profileErr != nil {
		return nil, fmt.Errorf("run simulator: profile: %w", s.profileErr)
	}
	accountsJSON, err := json.Marshal(accounts)
	if err != nil {
		return nil, fmt.Errorf("encode accounts: %w", err)
	}
	certPEM, keyPEM, err := selfSignedCertificate()
	if err != nil {
		return nil, err
	}
	token := s.adminToken
	if token == "" {
		var b [16]byte
		_, _ = rand.Read(b[:])
		token = hex.EncodeToString(b[:])
	}
	if err := checkImage(ctx, s.image); err != nil {
		return nil, err
	}
	l := launch{settings: s, opts: opts, token: token, accounts: accounts, certPEM: certPEM, keyPEM: keyPEM, accountsJSON: accountsJSON}
	// The ports are free when chosen and bound a moment later by the
	// container: another process may take one in between (parallel tests
	// do). The container then exits at once; start again on other ports.
	const attempts = 3
	for i := 1; ; i++ {
		c, err := l.start(ctx)
		if err == nil || c == nil || i == attempts || !c.portTaken(ctx) {
			return c, err
		}
		if terr := c.Terminate(context.WithoutCancel(ctx)); terr != nil {
			return nil, fmt.Errorf("%w; remove it: %w", err, terr)
		}
	}
}

// launch is what every start of one Run shares.
type launch struct {
	settings
	opts                          []testcontainers.ContainerCustomizer
	token                         string
	accounts                      []simulator.Account
	certPEM, keyPEM, accountsJSON []byte
}

// start starts one container on newly chosen ports and waits for it.
func (l *launch) start(ctx context.Context) (*Container, error) {
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))
	adminAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[1]))

	// Flags, not SIM_* variables, for what Run must know: they win over
	// anything WithEnv or the image sets.
	cmd := []string{
		"--addr", addr,
		"--admin-addr", adminAddr,
		"--tls-cert", certPath,
		"--tls-key", keyPath,
		"--accounts", accountsPath,
	}
	if l.seed != 0 {
		cmd = append(cmd, "--seed", strconv.FormatInt(l.seed, 10))
	}
	if l.campaigns != nil {
		cmd = append(cmd, "--campaigns", strconv.Itoa(*l.campaigns))
	}
	if l.rateLimit != 0 {
		cmd = append(cmd, "--rate-limit", strconv.Itoa(l.rateLimit))
	}
	if l.rateWindow != 0 {
		cmd = append(cmd, "--rate-window", l.rateWindow.String())
	}

	c := &Container{
		URL:        "https://" + addr + spec.BasePath,
		AdminURL:   "https://" + adminAddr,
		AdminToken: l.token,
		Accounts:   l.accounts,
		CACertPEM:  l.certPEM,
	}
	// Readiness is a TLS handshake that verifies the simulator's
	// certificate, then GET /healthz: what every client will do next.
	ready := func(port int) wait.Strategy {
		return wait.ForHTTP("/healthz").
			WithPort(strconv.Itoa(port)+"/tcp").
			WithTLS(true, c.TLSConfig()).
			WithPollInterval(50 * time.Millisecond)
	}
	req := testcontainers.GenericContainerRequest{
		ContainerRequest: testcontainers.ContainerRequest{
			Image: l.image,
			Cmd:   cmd,
			// The token goes by environment, not argv, which shows in ps.
			Env:    map[string]string{"SIM_ADMIN_TOKEN": l.token},
			Labels: map[string]string{Label: "simulator"},
			Files: []testcontainers.ContainerFile{
				// Copied as root; the image runs as a non-root user, so
				// the key must be world-readable. It is made for this
				// container alone and dies with it.
				{Reader: bytes.NewReader(l.certPEM), ContainerFilePath: certPath, FileMode: 0o644},
				{Reader: bytes.NewReader(l.keyPEM), ContainerFilePath: keyPath, FileMode: 0o644},
				{Reader: bytes.NewReader(l.accountsJSON), ContainerFilePath: accountsPath, FileMode: 0o644},
			},
			// Host networking keeps every packet on 127.0.0.1: the
			// simulator binds the loopback addresses above, nothing is
			// published on other interfaces.
			HostConfigModifier: func(hc *dockercontainer.HostConfig) { hc.NetworkMode = "host" },
			WaitingFor:         wait.ForAll(ready(ports[0]), ready(ports[1])).WithDeadline(l.startupTimeout),
		},
		Started: true,
	}
	files, env := l.profileFile()
	req.Files = append(req.Files, files...)
	maps.Copy(req.Env, env)
	for _, opt := range l.opts {
		if err := opt.Customize(&req); err != nil {
			return nil, fmt.Errorf("customize simulator container: %w", err)
		}
	}
	ctr, err := testcontainers.GenericContainer(ctx, req)
	if ctr != nil {
		c.DockerContainer = ctr.(*testcontainers.DockerContainer)
	}
	if err != nil {
		if c.DockerContainer == nil {
			return nil, fmt.Errorf("run simulator %s: %w", l.image, startError(ctx, l.image, err, ""))
		}
		return c, fmt.Errorf("run simulator %s: %w", l.image, startError(ctx, l.image, err, c.logTail(ctx, 10)))
	}
	return c, nil
}

// logTail returns the last n lines of the container's output, indented.
func (c *Container) logTail(ctx context.Context, n int) string {
	rc, err := c.Logs(context.WithoutCancel(ctx))
	if err != nil {
		return ""
	}
	defer rc.Close()
	out, _ := io.ReadAll(io.LimitReader(rc, 1<<20))
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	if len(lines) == 1 && lines[0] == "" {
		return ""
	}
	return "    | " + strings.Join(lines, "\n    | ")
}

// portTaken reports whether the simulator exited because a port it was
// to listen on was in use.
func (c *Container) portTaken(ctx context.Context) bool {
	rc, err := c.Logs(context.WithoutCancel(ctx))
	if err != nil {
		return false
	}
	defer rc.Close()
	out, _ := io.ReadAll(io.LimitReader(rc, 1<<20))
	return bytes.Contains(out, []byte("address already in use"))
}

// checkImage makes sure the image is on the engine already. Run never
// pulls: the simulator's image is built locally, and whatever a registry
// holds under the same name is not it.
func checkImage(ctx context.Context, image string) error {
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return fmt.Errorf("docker client: %w", err)
	}
	defer cli.Close()
	if _, err := cli.ImageInspect(ctx, image); err != nil {
		if cerrdefs.IsNotFound(err) {
			return fmt.Errorf("run simulator: image %s is not on the Docker engine (`make image` builds %s; Run does not pull)", image, DefaultImage)
		}
		return fmt.Errorf("run simulator: inspect image %s: %w", image, err)
	}
	return nil
}

// freePorts asks the kernel for n free loopback ports. They are free when
// asked, not reserved: the simulator binds them a moment later.
var freePorts = func(n int) ([]int, error) {
	var ports []int
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// selfSignedCertificate makes the container's TLS identity: an ECDSA P-256
// certificate for 127.0.0.1, ::1 and localhost, its own CA, valid for a
// week (a test's container lives minutes).
func selfSignedCertificate() (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generate key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, nil, fmt.Errorf("generate serial: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "Partner API v3 simulator (container)", Organization: []string{"conformance-kit"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(7 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("create certificate: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("encode key: %w", err)
	}
	certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM = pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	return certPEM, keyPEM, nil
}
