// Command image builds the kit's container images, FROM scratch with static
// binaries: REPO/simulator:TAG (the simulator) and REPO/conformance:TAG (the
// conformance runner with a CA bundle). `make image` runs it, and so do the
// container tests, so both build the same thing the same way.
//
//	go run ./cmd/image [-repo partner-v3] [-tag latest] [-version v1.2.3] [simulator] [conformance]
//
// For each image it compiles the binary (CGO_ENABLED=0, -trimpath, for the
// Docker engine's architecture), puts it in a temporary build context with
// the image's Dockerfile (cmd/NAME/Dockerfile) and what that copies, and runs
// `docker build`. The context holds nothing else: Docker tars all of it.
// The Dockerfiles use the classic builder's syntax only, and need no pull.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/partner-v3/conformance-kit/cmd/internal/flagenv"
)

// image is one image the command builds.
type image struct {
	// name is the image's name under -repo and the directory under cmd/
	// holding its main package and Dockerfile.
	name string
	// dirs are empty directories the Dockerfile copies in, so a scratch
	// image (no mkdir there) has somewhere writable for a non-root user.
	dirs []string
	// caBundle says the Dockerfile copies ca-certificates.crt, so the
	// binary can verify real deployments' certificates.
	caBundle bool
}

var images = []image{
	{name: "simulator", dirs: []string{"data"}},
	{name: "conformance", dirs: []string{"reports"}, caBundle: true},
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		if errors.Is(err, errUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// errUsage marks what the user must fix in the arguments: exit 2.
var errUsage = errors.New("usage error")

// help is what --help says besides the flags.
var help = flagenv.Help{
	Usage: "usage: image [flags] [simulator] [conformance]   (make image, or go run ./cmd/image)",
	Intro: "Builds the kit's container images, FROM scratch with static binaries:\n" +
		"REPO/simulator:TAG (the simulator) and REPO/conformance:TAG (the conformance runner,\n" +
		"with a CA bundle to verify real deployments); both unless one is named. It compiles\n" +
		"each binary (CGO_ENABLED=0, -trimpath, for the Docker engine's architecture) with\n" +
		"-version and -commit linked in, and runs docker build on a context holding only the\n" +
		"binary and its Dockerfile (cmd/NAME/Dockerfile). Needs a Docker engine; pulls\n" +
		"nothing. docs/containers.md says how to run them. Its flags have no variables.",
	ExitCodes: []flagenv.ExitCode{
		{Code: 0, Meaning: "every image named was built (also --help)"},
		{Code: 1, Meaning: "a build failed (the message says which)"},
		{Code: 2, Meaning: "usage error: a flag or image name is wrong"},
	},
}

// options are the parsed flags.
type options struct {
	repo, tag, version string
	commit, describe   string
	caBundle           string
	binDir             string
	docker             string
	names              []string
}

func parseFlags(args []string, stdout io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("image", flag.ContinueOnError)
	flagenv.Quiet(fs)
	fs.StringVar(&o.repo, "repo", "partner-v3", "repository prefix: images are REPO/simulator:TAG and REPO/conformance:TAG")
	fs.StringVar(&o.tag, "tag", "latest", "image tag")
	fs.StringVar(&o.version, "version", "dev", "version embedded in the binaries (main.version) and the image label")
	fs.StringVar(&o.describe, "describe", "", "git describe of the source (main.describe): a -version that differs is reported as relabelled; make image passes git's")
	fs.StringVar(&o.commit, "commit", "", "commit embedded in the binaries (main.commit, with -dirty for a modified tree) and the image's revision label; make image passes git's")
	fs.StringVar(&o.caBundle, "ca-bundle", "/etc/ssl/certs/ca-certificates.crt", "CA bundle copied into the conformance image (Debian's ca-certificates)")
	fs.StringVar(&o.binDir, "bin-dir", "", "also keep the static binaries in this directory")
	fs.StringVar(&o.docker, "docker", "docker", "docker command")
	if err := flagenv.Parse(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			flagenv.WriteHelp(stdout, fs, help)
			return nil, err
		}
		return nil, fmt.Errorf("%w: %w", errUsage, err)
	}
	o.names = fs.Args()
	if len(o.names) == 0 {
		for _, im := range images {
			o.names = append(o.names, im.name)
		}
	}
	for _, n := range o.names {
		if !slices.ContainsFunc(images, func(im image) bool { return im.name == n }) {
			return nil, fmt.Errorf("%w: unknown image %q: want simulator or conformance", errUsage, n)
		}
	}
	return o, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stdout)
	if err != nil {
		return err
	}
	root, err := moduleRoot(ctx)
	if err != nil {
		return err
	}
	// The binaries run on the engine's machine, which is not this one on
	// Docker Desktop (a Linux VM, perhaps another architecture).
	arch, err := output(ctx, "", o.docker, "version", "--format", "{{.Server.Arch}}")
	if err != nil {
		return fmt.Errorf("ask the Docker engine its architecture (is it running?): %w", err)
	}
	work, err := os.MkdirTemp("", "partner-v3-image-")
	if err != nil {
		return fmt.Errorf("create build directory: %w", err)
	}
	defer os.RemoveAll(work)

	// One go build for every binary: it compiles the shared packages once.
	binDir := filepath.Join(work, "bin")
	started := time.Now()
	build := []string{"build", "-trimpath", "-ldflags", "-s -w -X main.version=" + o.version + " -X main.commit=" + o.commit + " -X main.describe=" + o.describe, "-o", binDir + string(filepath.Separator)}
	for _, n := range o.names {
		build = append(build, "./cmd/"+n)
	}
	cmd := exec.CommandContext(ctx, "go", build...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = root, stderr, stderr
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s: %w", strings.Join(o.names, " "), err)
	}
	fmt.Fprintf(stdout, "compiled %s for linux/%s in %s\n", strings.Join(o.names, ", "), arch, time.Since(started).Round(time.Millisecond))

	if o.binDir != "" {
		if err := os.MkdirAll(o.binDir, 0o755); err != nil {
			return fmt.Errorf("create -bin-dir: %w", err)
		}
	}
	for _, im := range images {
		if !slices.Contains(o.names, im.name) {
			continue
		}
		if o.binDir != "" {
			if err := copyFile(filepath.Join(binDir, im.name), filepath.Join(o.binDir, im.name), 0o755); err != nil {
				return err
			}
		}
		if err := o.build(ctx, root, work, binDir, im, stdout, stderr); err != nil {
			return err
		}
	}
	return nil
}

// build assembles the context of one image and runs docker build on it.
func (o *options) build(ctx context.Context, root, work, binDir string, im image, stdout, stderr io.Writer) error {
	dir := filepath.Join(work, im.name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create build context: %w", err)
	}
	files := map[string]string{
		filepath.Join(binDir, im.name):                    im.name,
		filepath.Join(root, "cmd", im.name, "Dockerfile"): "Dockerfile",
	}
	if im.caBundle {
		if _, err := os.Stat(o.caBundle); err != nil {
			return fmt.Errorf("CA bundle for the %s image (-ca-bundle; Debian's ca-certificates package has it): %w", im.name, err)
		}
		files[o.caBundle] = "ca-certificates.crt"
	}
	for src, dst := range files {
		mode := os.FileMode(0o644)
		if dst == im.name {
			mode = 0o755
		}
		if err := copyFile(src, filepath.Join(dir, dst), mode); err != nil {
			return err
		}
	}
	for _, d := range im.dirs {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return fmt.Errorf("create build context: %w", err)
		}
	}
	ref := fmt.Sprintf("%s/%s:%s", o.repo, im.name, o.tag)
	started := time.Now()
	// -q keeps the step-by-step output out of test logs; errors still
	// reach stderr.
	if _, err := output(ctx, dir, o.docker, "build", "-q", "-t", ref,
		"--label", "org.opencontainers.image.title=partner-v3-"+im.name,
		"--label", "org.opencontainers.image.version="+o.version,
		"--label", "org.opencontainers.image.revision="+o.commit,
		"."); err != nil {
		return fmt.Errorf("docker build %s: %w", ref, err)
	}
	took := time.Since(started)
	size, err := output(ctx, "", o.docker, "image", "inspect", "--format", "{{.Size}}", ref)
	if err != nil {
		return fmt.Errorf("inspect %s: %w", ref, err)
	}
	var n int64
	fmt.Sscan(size, &n)
	fmt.Fprintf(stdout, "built %s (%.1f MB) in %s\n", ref, float64(n)/1e6, took.Round(time.Millisecond))
	return nil
}

// moduleRoot finds the directory of go.mod, so the command works from any
// directory of the module.
func moduleRoot(ctx context.Context) (string, error) {
	gomod, err := output(ctx, "", "go", "env", "GOMOD")
	if err != nil {
		return "", fmt.Errorf("find the module: %w", err)
	}
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("run inside the conformance-kit module (go env GOMOD is empty)")
	}
	return filepath.Dir(gomod), nil
}

// output runs a command and returns its trimmed stdout; its stderr is in
// the error.
func output(ctx context.Context, dir, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return "", fmt.Errorf("%s %s: %w: %s", name, args[0], err, msg)
		}
		return "", fmt.Errorf("%s %s: %w", name, args[0], err)
	}
	return strings.TrimSpace(string(out)), nil
}

func copyFile(src, dst string, mode os.FileMode) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("copy into build context: %w", err)
	}
	if err := os.WriteFile(dst, data, mode); err != nil {
		return fmt.Errorf("copy into build context: %w", err)
	}
	return nil
}
