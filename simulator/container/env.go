package container

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"

	"github.com/testcontainers/testcontainers-go"
)

// TestcontainersDefaults are the testcontainers-go settings Run, and the
// conformance runner's --image, need and set themselves when the
// environment has none:
//
//   - TESTCONTAINERS_RYUK_DISABLED=true: Ryuk, testcontainers' reaper, is
//     an image to pull, which fails where nothing can be pulled; Run labels
//     its containers (Label) and they are terminated by their owner.
//   - TESTCONTAINERS_HOST_OVERRIDE=127.0.0.1: the simulator runs with host
//     networking on this machine's loopback. Without it, testcontainers on
//     a machine that is itself a container dials the default gateway, and
//     every readiness check times out.
var TestcontainersDefaults = map[string]string{
	"TESTCONTAINERS_RYUK_DISABLED": "true",
	"TESTCONTAINERS_HOST_OVERRIDE": "127.0.0.1",
}

// SetTestcontainersDefaults sets each of TestcontainersDefaults the
// environment lacks (a variable set, even to "", is left alone) and returns
// the names it set. The host override is not set when DOCKER_HOST names a
// remote engine, whose ports are not on this machine's loopback.
//
// testcontainers-go reads TESTCONTAINERS_RYUK_DISABLED once per process,
// at its first call: Run calls this first, but a program that calls
// testcontainers before Run must call this (or set the variables) first.
func SetTestcontainersDefaults() []string {
	return setDefaults(os.LookupEnv, os.Setenv)
}

func setDefaults(lookup func(string) (string, bool), set func(string, string) error) []string {
	var names []string
	for _, k := range []string{"TESTCONTAINERS_RYUK_DISABLED", "TESTCONTAINERS_HOST_OVERRIDE"} {
		if _, ok := lookup(k); ok {
			continue
		}
		if k == "TESTCONTAINERS_HOST_OVERRIDE" {
			if h, _ := lookup("DOCKER_HOST"); remoteEngine(h) {
				continue
			}
		}
		if set(k, TestcontainersDefaults[k]) == nil {
			names = append(names, k)
		}
	}
	return names
}

// remoteEngine reports whether a DOCKER_HOST value names an engine on
// another machine (tcp:// or http(s):// to a host that is not loopback).
func remoteEngine(dockerHost string) bool {
	u, err := url.Parse(dockerHost)
	if err != nil || dockerHost == "" {
		return false
	}
	switch u.Scheme {
	case "tcp", "http", "https":
	default:
		return false // unix://, npipe://: this machine
	}
	h := u.Hostname()
	if h == "localhost" {
		return false
	}
	ip := net.ParseIP(h)
	return ip == nil || !ip.IsLoopback()
}

// startError explains a start that failed without an answer: "context
// deadline exceeded" alone says nothing of why. It lists the likely causes
// with the settings in force; logs is the end of the container's output,
// if it started.
func startError(ctx context.Context, image string, err error, logs string) error {
	if ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	override, set := os.LookupEnv("TESTCONTAINERS_HOST_OVERRIDE")
	if !set {
		override = "(unset)"
	}
	ryuk := "disabled"
	if !testcontainers.ReadConfig().RyukDisabled {
		ryuk = "enabled: its image must be pullable; TESTCONTAINERS_RYUK_DISABLED=true before the first testcontainers call turns it off"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "the simulator did not answer in time; likely causes:\n")
	fmt.Fprintf(&b, "  - the Docker engine is not local or not running (`docker info`; DOCKER_HOST=%q): Run needs a local engine, its host network is this machine's loopback\n", os.Getenv("DOCKER_HOST"))
	fmt.Fprintf(&b, "  - TESTCONTAINERS_HOST_OVERRIDE=%s: it must be 127.0.0.1 (or unset on a machine that is not itself a container)\n", override)
	fmt.Fprintf(&b, "  - Ryuk (testcontainers' reaper) is %s\n", ryuk)
	fmt.Fprintf(&b, "  - %s is not the simulator's image, or an old one (`make image` builds %s)\n", image, DefaultImage)
	fmt.Fprintf(&b, "  - the simulator exited: a port taken, a bad WithEnv or WithCmdArgs value")
	if logs != "" {
		fmt.Fprintf(&b, "; its last output:\n%s", logs)
	}
	return fmt.Errorf("%s: %w", strings.TrimRight(b.String(), "\n"), err)
}
