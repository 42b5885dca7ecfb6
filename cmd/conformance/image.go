package main

// --image: the target is a container image (a vendor's implementation, or
// the simulator's image), started with testcontainers-go for the run and
// removed after it. Everything else (flags, reports, exit status) is the
// same as against a URL.

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	dockercontainer "github.com/moby/moby/api/types/container"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/partner-v3/conformance-kit/simulator/container"
	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/suite"
)

// imageLabel marks the containers --image starts, so leftovers of a killed
// run can be found: docker ps -a --filter label=org.partner-v3.conformance-kit=target.
const imageLabel = "org.partner-v3.conformance-kit"

// imageOptions are the --image flags.
type imageOptions struct {
	name    string
	env     envPairs
	port    int
	timeout time.Duration
}

// register adds the --image flags to fs.
func (im *imageOptions) register(fs *flag.FlagSet) {
	fs.StringVar(&im.name, "image", "", "container image of the implementation to test: started with host networking for the run, then removed; --base-url defaults to https://127.0.0.1:<--image-port>"+spec.BasePath)
	fs.Var(&im.env, "image-env", "K=V environment variable of the --image container (repeatable; CONFORMANCE_IMAGE_ENV holds one per line)")
	fs.IntVar(&im.port, "image-port", 8443, "port the --image container listens on, on this machine's loopback (host networking)")
	fs.DurationVar(&im.timeout, "image-timeout", time.Minute, "how long to wait for the --image container to answer over HTTPS")
}

// baseURL is the base URL of a run given baseURL (--base-url): an --image
// run's default is the container's, which shares the host's network, so
// it is on this machine's loopback.
func (im *imageOptions) baseURL(given string) string {
	if im.name != "" && given == "" {
		return "https://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(im.port)) + spec.BasePath
	}
	return given
}

// run runs the suite, around a container of --image when one is given.
func (im *imageOptions) run(ctx context.Context, cfg suite.Config, log io.Writer) (*suite.Result, error) {
	if im.name == "" {
		return suite.Run(ctx, cfg)
	}
	if im.port < 1 || im.port > 65535 {
		return nil, fmt.Errorf("%w: --image-port %d is not a TCP port", suite.ErrConfig, im.port)
	}
	if im.timeout <= 0 {
		return nil, fmt.Errorf("%w: --image-timeout must be positive", suite.ErrConfig)
	}
	// Check the configuration before starting what may be a slow image.
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ctr, err := im.start(ctx, log)
	defer func() {
		if ctr == nil {
			return
		}
		// The run's context may be cancelled (SIGINT): remove the
		// container all the same.
		tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if err := ctr.Terminate(tctx); err != nil {
			fmt.Fprintf(log, "conformance: remove the %s container %.12s: %v\n", im.name, ctr.GetContainerID(), err)
		}
	}()
	if err != nil {
		if ctr != nil {
			im.printLogTail(ctx, ctr, log, cfg.MaskSecrets)
		}
		return nil, fmt.Errorf("%w: image %s: %w", suite.ErrConnection, im.name, err)
	}
	return suite.Run(ctx, cfg)
}

// start runs the image with host networking and waits until it answers
// HTTPS on --image-port.
func (im *imageOptions) start(ctx context.Context, log io.Writer) (*testcontainers.DockerContainer, error) {
	// Ryuk, testcontainers' reaper, is an image to pull; this run removes
	// its container itself (also on SIGINT), so it goes without unless
	// asked for. With host networking the target is on this machine's
	// loopback, whatever address testcontainers would guess for the engine.
	// The same defaults as the simulator's container.Run.
	container.SetTestcontainersDefaults()
	logger := prefixLogger{w: log}
	tclog.SetDefault(logger)
	started := time.Now()
	fmt.Fprintf(log, "conformance: starting %s (host network, port %d)\n", im.name, im.port)
	ctr, err := testcontainers.Run(ctx, im.name,
		testcontainers.WithLogger(logger),
		testcontainers.WithEnv(im.env.m),
		testcontainers.WithLabels(map[string]string{imageLabel: "target"}),
		testcontainers.WithHostConfigModifier(func(hc *dockercontainer.HostConfig) { hc.NetworkMode = "host" }),
		// Readiness only: any HTTP answer over TLS on the base path. Whether
		// the certificate is trusted, and what the answer says, is for the
		// scenarios to check (spec §1, §9).
		testcontainers.WithWaitStrategy(wait.ForHTTP(spec.BasePath).
			WithPort(strconv.Itoa(im.port)+"/tcp").
			WithTLS(true, &tls.Config{InsecureSkipVerify: true}). //nolint:gosec // readiness probe, not the suite's client
			WithStatusCodeMatcher(func(int) bool { return true }).
			WithPollInterval(100*time.Millisecond).
			WithStartupTimeout(im.timeout)),
	)
	if err != nil {
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("no HTTPS answer on 127.0.0.1:%d within %s (--image-port, --image-timeout): %w", im.port, im.timeout, err)
		}
		return ctr, err
	}
	fmt.Fprintf(log, "conformance: %s answers on 127.0.0.1:%d after %s\n", im.name, im.port, time.Since(started).Round(time.Millisecond))
	return ctr, nil
}

// printLogTail shows the end of the container's output, which says why it
// did not answer far better than a timeout does, with the run's secrets
// hidden (a service may log the credentials it was given).
func (im *imageOptions) printLogTail(ctx context.Context, ctr *testcontainers.DockerContainer, log io.Writer, hide func(string) string) {
	rc, err := ctr.Logs(context.WithoutCancel(ctx))
	if err != nil {
		return
	}
	defer rc.Close()
	var lines []string
	sc := bufio.NewScanner(rc)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > 20 {
			lines = lines[1:]
		}
	}
	fmt.Fprintf(log, "conformance: last output of the %s container:\n", im.name)
	for _, l := range lines {
		fmt.Fprintf(log, "  | %s\n", hide(l))
	}
}

// envPairs is the repeatable --image-env flag.
type envPairs struct{ m map[string]string }

func (e *envPairs) String() string {
	if e == nil {
		return ""
	}
	var s []string
	for k, v := range e.m {
		s = append(s, k+"="+v)
	}
	return strings.Join(s, " ")
}

// Set takes K=V, or several lines of them: the environment fallback
// (CONFORMANCE_IMAGE_ENV) is one value for the whole flag.
func (e *envPairs) Set(v string) error {
	for _, line := range strings.Split(v, "\n") {
		if line = strings.TrimSpace(line); line == "" {
			continue
		}
		k, val, ok := strings.Cut(line, "=")
		if !ok || k == "" {
			return fmt.Errorf("%q is not K=V", line)
		}
		if e.m == nil {
			e.m = map[string]string{}
		}
		e.m[k] = val
	}
	return nil
}

// prefixLogger sends testcontainers' messages to the runner's log stream.
type prefixLogger struct{ w io.Writer }

func (l prefixLogger) Printf(format string, v ...any) {
	fmt.Fprintf(l.w, "conformance: testcontainers: "+strings.TrimRight(format, "\n")+"\n", v...)
}
