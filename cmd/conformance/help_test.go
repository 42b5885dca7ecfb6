package main

import (
	"bytes"
	"context"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/partner-v3/conformance-kit/cmd/internal/flagenv"
	"github.com/partner-v3/conformance-kit/steps/suite"
)

// helpFlags returns the flags a help text lists, each with the lines that
// follow it up to the next flag.
func helpFlags(help string) map[string]string {
	out := map[string]string{}
	var name string
	for _, l := range strings.Split(help, "\n") {
		if rest, ok := strings.CutPrefix(l, "  --"); ok {
			name, _, _ = strings.Cut(rest, " ")
			out[name] = ""
			continue
		}
		if l == "" || !strings.HasPrefix(l, "      ") {
			name = ""
		}
		if name != "" {
			out[name] += l + "\n"
		}
	}
	return out
}

// TestHelpListsEveryFlagWithItsVariable: --help of the command and of its
// subcommands exits 0, on stdout, with each flag, its variable where it
// has one, its default, and the exit codes.
func TestHelpListsEveryFlagWithItsVariable(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		withEnv   bool
		flags     []string
		exitCodes []string
	}{
		{"the runner's help gives every flag its CONFORMANCE_ variable", []string{"--help"}, true,
			[]string{"base-url", "api-key", "report-dir", "image", "image-env", "sign-key", "version", "no-profile"},
			[]string{"  0  every selected scenario passed", "  1  a scenario failed", "  2  not run"}},
		{"-h is --help", []string{"-h"}, true, []string{"base-url"}, []string{"  2  not run"}},
		{"verify's help lists its flag and its codes", []string{"verify", "--help"}, false,
			[]string{"public-key"}, []string{"  0  verified", "  1  not verified", "  2  usage error"}},
		{"profile's help lists the target flags, --out and its codes", []string{"profile", "--help"}, true,
			[]string{"base-url", "api-key", "read-only", "out"}, []string{"  0  the profile was learned", "  2  not learned"}},
		{"keygen's help lists its flags and its codes", []string{"keygen", "-h"}, false,
			[]string{"private", "public"}, []string{"  0  both keys written", "  2  usage error"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), tt.args, &stdout, &stderr); code != exitPass {
				t.Fatalf("exit=%d, want %d; stderr %s", code, exitPass, stderr.String())
			}
			if stderr.Len() > 0 {
				t.Errorf("stderr %q, want the help on stdout alone", stderr.String())
			}
			help := stdout.String()
			flags := helpFlags(help)
			for _, want := range tt.flags {
				if _, ok := flags[want]; !ok {
					t.Errorf("help lists no --%s", want)
				}
			}
			for name, text := range flags {
				env := "(env " + flagenv.Name(envPrefix, name)
				if has := strings.Contains(text, env); has != (tt.withEnv && name != flagenv.CommandLineOnly) {
					t.Errorf("--%s: mentions %s) %v, want %v:\n%s", name, env, has, !has, text)
				}
			}
			for _, want := range tt.exitCodes {
				if !strings.Contains(help, "Exit status:\n") || !strings.Contains(help, want) {
					t.Errorf("help lacks exit code %q:\n%s", want, help)
				}
			}
		})
	}
	var stdout bytes.Buffer
	run(context.Background(), []string{"--help"}, &stdout, io.Discard)
	if want := "(env CONFORMANCE_REPORT_DIR, default conformance-report)"; !strings.Contains(stdout.String(), want) {
		t.Errorf("help lacks %q", want)
	}
}

// TestVersionIsOneResolution: --version and the reports show the same
// version, the linked one when there is one.
func TestVersionIsOneResolution(t *testing.T) {
	defer func(v, c string) { version, commit = v, c }(version, commit)
	version, commit = "v1.2.3", "0123456789abcdef0123456789abcdef01234567-dirty"
	var stdout bytes.Buffer
	if code := run(context.Background(), []string{"--version"}, &stdout, io.Discard); code != exitPass {
		t.Fatalf("exit=%d", code)
	}
	if got, want := stdout.String(), "conformance v1.2.3 (commit 0123456789abcdef0123456789abcdef01234567-dirty, "+runtime.Version()+
		", source sha256:"+suite.OwnDigests().Source+"), Partner API v3\n"; got != want {
		t.Fatalf("--version printed %q, want %q", got, want)
	}
	o, err := parseFlags([]string{"--base-url", "https://x.example/v3/partner/webhook"}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, err := o.config(io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.SuiteVersion != "v1.2.3" {
		t.Fatalf("SuiteVersion=%q, want the linked v1.2.3", cfg.SuiteVersion)
	}
	if cfg.SuiteCommit != commit {
		t.Fatalf("SuiteCommit=%q, want the linked %q", cfg.SuiteCommit, commit)
	}
	// CONFORMANCE_VERSION is not --version: a runner image may carry it.
	if o, err = parseFlags(nil, func(k string) string {
		if k == "CONFORMANCE_VERSION" {
			return "2"
		}
		return ""
	}); err != nil || o.showVersion {
		t.Fatalf("with CONFORMANCE_VERSION=2: err %v, showVersion %v; want a normal run", err, o != nil && o.showVersion)
	}
}

// TestRelabelledBuildIsNoRelease: VERSION=v9.0.0 make build on a source git
// describes otherwise says so in --version and the reports, and does not
// count as a release; the build of the tag does (issue 27).
func TestRelabelledBuildIsNoRelease(t *testing.T) {
	defer func(v, c, d string) { version, commit, describe = v, c, d }(version, commit, describe)
	tests := []struct {
		name, version, describe string
		released                bool
	}{
		{"the build of the tag", "v1.4.0", "v1.4.0", true},
		{"a label set by hand", "v9.0.0", "v1.3.0-4-g1a2b3c4", false},
		{"a release label on a modified tree", "v1.4.0", "v1.4.0-dirty", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			version, commit, describe = tt.version, "0123456789abcdef0123456789abcdef01234567", tt.describe
			var stdout bytes.Buffer
			if code := run(context.Background(), []string{"--version"}, &stdout, io.Discard); code != exitPass {
				t.Fatalf("exit=%d", code)
			}
			if got := suite.Released(suiteVersion()); got != tt.released {
				t.Fatalf("Released(%q)=%v, want %v", suiteVersion(), got, tt.released)
			}
			if want := "relabelled: git describes its source as " + tt.describe; !tt.released && !strings.Contains(stdout.String(), want) {
				t.Errorf("--version %q does not say %q", stdout.String(), want)
			}
		})
	}
}
