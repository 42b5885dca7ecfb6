package container_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	dockercontainer "github.com/moby/moby/api/types/container"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/log"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/partner-v3/conformance-kit/fixtures"
	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/container"
	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/suite"
)

// summary is the part of the runner's summary.json the tests read.
type summary struct {
	Target    string `json:"target"`
	Verdict   string `json:"verdict"`
	Passed    int    `json:"passed"`
	Failed    int    `json:"failed"`
	Scenarios []struct {
		Status   string   `json:"status"`
		Sections []string `json:"sections"`
	} `json:"scenarios"`
}

func (s summary) failedSections() string {
	var out []string
	for _, sc := range s.Scenarios {
		if sc.Status == "failed" {
			out = append(out, sc.Sections...)
		}
	}
	return strings.Join(out, " ")
}

// credentialFlags are the runner flags for a simulator container's
// accounts.
func credentialFlags(accounts []simulator.Account) []string {
	a, b := accounts[0], accounts[1]
	return []string{
		"--api-key", a.APIKey, "--api-secret", a.APISecret, "--account-id", a.AccountID,
		"--second-api-key", b.APIKey, "--second-api-secret", b.APISecret, "--second-account-id", b.AccountID,
	}
}

func TestRunnerImageAgainstASimulatorContainer(t *testing.T) {
	tests := []struct {
		name       string
		violate    string
		wantExit   int
		wantResult string
	}{
		{name: "a faithful simulator passes", wantExit: 0, wantResult: suite.VerdictPass},
		{name: "a simulator breaking §4.2 fails", violate: "list-total-pages-floor", wantExit: 1, wantResult: suite.VerdictFail},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var opts []testcontainers.ContainerCustomizer
			if tt.violate != "" {
				opts = append(opts, container.WithEnv(map[string]string{"SIM_VIOLATE": tt.violate}))
			}
			c := runSimulator(t, opts...)

			const caPath = "/etc/conformance/ca.pem"
			args := append([]string{
				"--base-url", c.URL, "--ca-cert", caPath,
				"--admin-url", c.AdminURL, "--admin-token", c.AdminToken,
				"--format", "progress,junit", "--no-colors",
			}, credentialFlags(c.Accounts)...)
			started := time.Now()
			runner, err := testcontainers.GenericContainer(t.Context(), testcontainers.GenericContainerRequest{
				ContainerRequest: testcontainers.ContainerRequest{
					Image:  runnerImage,
					Cmd:    args, // after the image's entrypoint, /conformance
					Labels: map[string]string{container.Label: "conformance"},
					Files: []testcontainers.ContainerFile{
						{Reader: bytes.NewReader(c.CACertPEM), ContainerFilePath: caPath, FileMode: 0o644},
					},
					HostConfigModifier: func(hc *dockercontainer.HostConfig) { hc.NetworkMode = "host" },
					WaitingFor:         wait.ForExit().WithExitTimeout(2 * time.Minute),
				},
				Started: true,
				Logger:  log.TestLogger(t),
			})
			testcontainers.CleanupContainer(t, runner)
			if err != nil {
				t.Fatalf("run the runner image: %v", err)
			}
			state, err := runner.State(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			output := containerOutput(t, runner)
			t.Logf("runner container exited %d after %s", state.ExitCode, time.Since(started).Round(time.Millisecond))
			if state.ExitCode != tt.wantExit {
				t.Fatalf("runner exit status=%d, want %d; output:\n%s", state.ExitCode, tt.wantExit, output)
			}
			if want := "against " + c.URL + ": " + strings.ToUpper(tt.wantResult); !strings.Contains(output, want) {
				t.Errorf("output does not say %q:\n%s", want, output)
			}

			// The reports are written in the image's /reports, as the
			// non-root user.
			var s summary
			if err := json.Unmarshal(copyOut(t, runner, "/reports/summary.json"), &s); err != nil {
				t.Fatalf("summary.json: %v", err)
			}
			if s.Verdict != tt.wantResult || s.Target != c.URL {
				t.Errorf("summary.json: verdict %q target %q, want %q and %q", s.Verdict, s.Target, tt.wantResult, c.URL)
			}
			if tt.violate != "" && !strings.Contains(s.failedSections(), "4.2") {
				t.Errorf("failed sections %q, want 4.2 among them", s.failedSections())
			}
			if junit := copyOut(t, runner, "/reports/junit.xml"); !bytes.Contains(junit, []byte("<testsuites")) {
				t.Errorf("junit.xml is no JUnit report: %.200s", junit)
			}
		})
	}
}

func containerOutput(t *testing.T, c testcontainers.Container) string {
	t.Helper()
	rc, err := c.Logs(t.Context())
	if err != nil {
		t.Fatalf("container logs: %v", err)
	}
	defer rc.Close()
	out, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("container logs: %v", err)
	}
	return string(out)
}

func copyOut(t *testing.T, c testcontainers.Container, path string) []byte {
	t.Helper()
	rc, err := c.CopyFileFromContainer(t.Context(), path)
	if err != nil {
		t.Fatalf("copy %s out of the container: %v", path, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("copy %s out of the container: %v", path, err)
	}
	return data
}

// freePort returns a loopback port free at the time of asking.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// leftovers lists the containers of an image, running or not.
func leftovers(t *testing.T, image string) []string {
	t.Helper()
	out, err := exec.Command("docker", "ps", "-aq", "--filter", "ancestor="+image).Output()
	if err != nil {
		t.Fatalf("docker ps: %v", err)
	}
	return strings.Fields(string(out))
}

func TestRunnerImageFlagStartsTheTarget(t *testing.T) {
	requireDocker(t)
	if ids := leftovers(t, simImage); len(ids) > 0 {
		t.Fatalf("containers of %s before the test: %v", simImage, ids)
	}
	// The image's default accounts: the development ones.
	devs, err := simulator.ReadAccounts(bytes.NewReader(fixtures.Accounts))
	if err != nil {
		t.Fatal(err)
	}
	var accounts []simulator.Account
	for _, a := range devs {
		accounts = append(accounts, *a)
	}

	tests := []struct {
		name      string
		env       []string
		wrongPort bool
		wantExit  int
		wantText  string
	}{
		{name: "the simulator image passes", wantExit: 0, wantText: "PASS"},
		{name: "a simulator image breaking §4.2 fails", env: []string{"SIM_VIOLATE=list-total-pages-floor"}, wantExit: 1, wantText: "FAIL"},
		{name: "an image that never answers on --image-port is a connection error", wrongPort: true, wantExit: 2, wantText: "connection error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			port, adminPort := freePort(t), freePort(t)
			imagePort := port
			if tt.wrongPort {
				imagePort = freePort(t)
			}
			token := "token-" + strconv.Itoa(port)
			reports := t.TempDir()
			args := []string{
				"--image", simImage,
				"--image-port", strconv.Itoa(imagePort),
				"--image-timeout", "3s",
				// The image listens on 0.0.0.0 by default; on the host
				// network that would be every interface of this machine.
				"--image-env", fmt.Sprintf("SIM_ADDR=127.0.0.1:%d", port),
				"--image-env", fmt.Sprintf("SIM_ADMIN_ADDR=127.0.0.1:%d", adminPort),
				"--image-env", "SIM_ADMIN_TOKEN=" + token,
				"--admin-url", fmt.Sprintf("https://127.0.0.1:%d", adminPort), "--admin-token", token,
				// The image makes its own certificate at start: nothing
				// to hand the runner beforehand.
				"--insecure",
				"--format", "progress", "--no-colors", "--report-dir", reports,
			}
			for _, e := range tt.env {
				args = append(args, "--image-env", e)
			}
			args = append(args, credentialFlags(accounts)...)
			cmd := exec.CommandContext(t.Context(), runnerBinary, args...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			started := time.Now()
			err := cmd.Run()
			exit := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				exit = ee.ExitCode()
			} else if err != nil {
				t.Fatalf("run %s: %v", runnerBinary, err)
			}
			t.Logf("conformance --image exited %d after %s", exit, time.Since(started).Round(time.Millisecond))
			output := stdout.String() + stderr.String()
			if exit != tt.wantExit {
				t.Fatalf("exit status=%d, want %d; output:\n%s", exit, tt.wantExit, output)
			}
			if !strings.Contains(output, tt.wantText) {
				t.Errorf("output does not say %q:\n%s", tt.wantText, output)
			}
			// Started for the run, removed after it, whatever the verdict.
			if ids := leftovers(t, simImage); len(ids) > 0 {
				t.Errorf("containers of %s left after the run: %v", simImage, ids)
			}
			if tt.wantExit == 2 {
				return
			}
			data, err := os.ReadFile(filepath.Join(reports, "summary.json"))
			if err != nil {
				t.Fatalf("summary: %v", err)
			}
			var s summary
			if err := json.Unmarshal(data, &s); err != nil {
				t.Fatalf("summary.json: %v", err)
			}
			if want := fmt.Sprintf("https://127.0.0.1:%d%s", port, spec.BasePath); s.Target != want {
				t.Errorf("summary target %q, want the default --image base URL %q", s.Target, want)
			}
			if tt.wantExit == 1 && !strings.Contains(s.failedSections(), "4.2") {
				t.Errorf("failed sections %q, want 4.2 among them", s.failedSections())
			}
		})
	}
}
