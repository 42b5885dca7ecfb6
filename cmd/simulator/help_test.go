package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/partner-v3/conformance-kit/cmd/internal/flagenv"
)

// TestHelpListsEveryFlagWithItsVariable: --help (and -h) is no error, goes
// to stdout, and gives each flag its SIM_* variable, then the exit codes.
func TestHelpListsEveryFlagWithItsVariable(t *testing.T) {
	for _, arg := range []string{"--help", "-h"} {
		t.Run(arg, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := NewMain(&out, &errOut).ParseFlags(context.Background(), []string{arg})
			if !errors.Is(err, flag.ErrHelp) {
				t.Fatalf("ParseFlags(%s)=%v, want flag.ErrHelp (exit 0)", arg, err)
			}
			help := out.String()
			lines := strings.Split(help, "\n")
			var flags []string
			for i, l := range lines {
				name, ok := strings.CutPrefix(l, "  --")
				if !ok {
					continue
				}
				name, _, _ = strings.Cut(name, " ")
				flags = append(flags, name)
				if name == flagenv.CommandLineOnly {
					continue
				}
				env := "(env " + flagenv.Name("SIM_", name)
				found := false
				for _, next := range lines[i+1:] {
					if strings.HasPrefix(next, "  --") || next == "" {
						break
					}
					found = found || strings.Contains(next, env)
				}
				if !found {
					t.Errorf("--%s is listed without %s)", name, env)
				}
			}
			for _, want := range []string{"addr", "admin-addr", "redis-url", "rate-limit", "violate", "list-violations", "version"} {
				if !strings.Contains("\n"+strings.Join(flags, "\n")+"\n", "\n"+want+"\n") {
					t.Errorf("help lists no --%s; it lists %v", want, flags)
				}
			}
			for _, want := range []string{"(env SIM_ADDR, default 127.0.0.1:8443)", "Exit status:\n  0  clean shutdown", "\n  1  ", "\n  2  usage error"} {
				if !strings.Contains(help, want) {
					t.Errorf("help lacks %q:\n%s", want, help)
				}
			}
		})
	}
}

func TestVersionFlagPrintsTheLinkedVersion(t *testing.T) {
	defer func(v, c string) { version, commit = v, c }(version, commit)
	version, commit = "v1.2.3", "0123456789abcdef0123456789abcdef01234567"
	var out bytes.Buffer
	m := mustParseFlags(t, &out, []string{"--version"})
	if !m.showVersion {
		t.Fatal("--version did not ask for the version")
	}
	m.printVersion()
	if got, want := out.String(), "simulator v1.2.3 (commit 0123456789abcdef0123456789abcdef01234567, "+runtime.Version()+")\n"; got != want {
		t.Fatalf("--version printed %q, want %q", got, want)
	}
}

// TestControlAPIShowsTheVersion: GET /version names the build (issue 11).
func TestControlAPIShowsTheVersion(t *testing.T) {
	defer func(v string) { version = v }(version)
	version = "v1.2.3"
	args := []string{"--addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--campaigns", "0"}
	m := mustParseFlags(t, io.Discard, args)
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	s := m.Simulator
	client := trustingClient(t, s.Cert.CertFile)
	req, _ := http.NewRequest(http.MethodGet, s.AdminURL()+"/version", nil)
	req.Header.Set("Authorization", "Bearer "+s.AdminToken)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Version string `json:"version"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /version: status %d, %v", resp.StatusCode, err)
	}
	if got, want := body.Version, "v1.2.3"; got != want {
		t.Fatalf("GET /version: version %q, want %q", got, want)
	}
}
