package container_test

// The container tests need a Docker engine and the two images. TestMain
// builds the images once per test binary (with go run ./cmd/image, what
// `make image` runs, under a tag of this run alone) and removes them and
// any container left from them at the end. Without an engine every test
// skips, saying why, unless REQUIRE_DOCKER=1 (CI), where they fail.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/log"

	"github.com/partner-v3/conformance-kit/simulator/container"
)

var (
	// simImage and runnerImage are the images this run built.
	simImage, runnerImage string
	// runnerBinary is the static conformance runner the images were built
	// from, for the --image test.
	runnerBinary string
	// dockerErr says why Docker is unusable; buildErr why the images could
	// not be built.
	dockerErr, buildErr error
)

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	// Before any testcontainers call (probeDocker's is the first): its
	// configuration is read once. container.Run would set the same, too
	// late for a process that called testcontainers before it.
	container.SetTestcontainersDefaults()
	if dockerErr = probeDocker(); dockerErr != nil {
		return m.Run()
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	tag := "test-" + hex.EncodeToString(b[:])
	simImage, runnerImage = "partner-v3-test/simulator:"+tag, "partner-v3-test/conformance:"+tag
	binDir, err := os.MkdirTemp("", "container-test-bin-")
	if err != nil {
		buildErr = err
		return m.Run()
	}
	defer os.RemoveAll(binDir)
	runnerBinary = filepath.Join(binDir, "conformance")
	defer removeImages(simImage, runnerImage)
	buildErr = buildImages(tag, binDir)
	return m.Run()
}

// probeDocker checks for the docker command (the images are built with
// it) and an engine that answers testcontainers.
func probeDocker() error {
	if _, err := exec.LookPath("docker"); err != nil {
		return fmt.Errorf("no docker command: %w", err)
	}
	// The images are built through the docker command, the containers run
	// through testcontainers: both must reach the engine (they may not
	// resolve it alike: testcontainers falls back to the default socket).
	if out, err := exec.Command("docker", "version", "--format", "{{.Server.Version}}").CombinedOutput(); err != nil {
		return fmt.Errorf("docker version: %w: %s", err, strings.TrimSpace(string(out)))
	}
	p, err := testcontainers.NewDockerProvider(testcontainers.WithLogger(log.NewNoopLogger()))
	if err != nil {
		return fmt.Errorf("docker provider: %w", err)
	}
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.Health(ctx); err != nil {
		return fmt.Errorf("docker engine: %w", err)
	}
	return nil
}

func buildImages(tag, binDir string) error {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		return err
	}
	started := time.Now()
	cmd := exec.Command("go", "run", "./cmd/image", "-repo", "partner-v3-test", "-tag", tag, "-version", "test", "-bin-dir", binDir)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("go run ./cmd/image: %w\n%s", err, out)
	}
	fmt.Fprintf(os.Stderr, "%sbuilt the test images in %s\n", out, time.Since(started).Round(time.Millisecond))
	return nil
}

// removeImages removes the containers left from the images (a test that
// died before its cleanup), then the images.
func removeImages(images ...string) {
	for _, img := range images {
		out, _ := exec.Command("docker", "ps", "-aq", "--filter", "ancestor="+img).Output()
		if ids := strings.Fields(string(out)); len(ids) > 0 {
			fmt.Fprintf(os.Stderr, "removing %d leftover container(s) of %s\n", len(ids), img)
			_ = exec.Command("docker", append([]string{"rm", "-f"}, ids...)...).Run()
		}
		if out, err := exec.Command("docker", "rmi", img).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "docker rmi %s: %v: %s", img, err, out)
		}
	}
}

// requireDocker skips the test without Docker, or fails it when
// REQUIRE_DOCKER=1 says Docker must be there.
func requireDocker(t *testing.T) {
	t.Helper()
	if dockerErr != nil {
		if os.Getenv("REQUIRE_DOCKER") == "1" {
			t.Fatalf("REQUIRE_DOCKER=1 but Docker is unusable: %v", dockerErr)
		}
		t.Skipf("Docker is unusable, skipping the container tests (REQUIRE_DOCKER=1 makes this a failure): %v", dockerErr)
	}
	if buildErr != nil {
		t.Fatalf("build the images: %v", buildErr)
	}
}

// runSimulator starts the simulator image through the package, as a
// partner's test would, and terminates it when the test ends.
func runSimulator(t *testing.T, opts ...testcontainers.ContainerCustomizer) *container.Container {
	t.Helper()
	requireDocker(t)
	opts = append([]testcontainers.ContainerCustomizer{
		container.WithImage(simImage),
		testcontainers.WithLogger(log.TestLogger(t)),
	}, opts...)
	started := time.Now()
	c, err := container.Run(t.Context(), opts...)
	testcontainers.CleanupContainer(t, c)
	if err != nil {
		t.Fatalf("container.Run: %v", err)
	}
	t.Logf("simulator container ready at %s in %s", c.URL, time.Since(started).Round(time.Millisecond))
	return c
}
