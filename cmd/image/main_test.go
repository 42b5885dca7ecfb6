package main

import (
	"bytes"
	"errors"
	"flag"
	"slices"
	"strings"
	"testing"
)

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		wantNames []string
		wantErr   string
	}{
		{name: "no names build both", args: nil, wantNames: []string{"simulator", "conformance"}},
		{name: "one name builds one", args: []string{"-tag", "v1", "conformance"}, wantNames: []string{"conformance"}},
		{name: "an unknown name is refused", args: []string{"runner"}, wantErr: `unknown image "runner"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseFlags(tt.args, &bytes.Buffer{})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err=%v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(o.names, tt.wantNames) {
				t.Errorf("names=%v, want %v", o.names, tt.wantNames)
			}
		})
	}
}

func TestMissingCABundleIsNamed(t *testing.T) {
	o := &options{repo: "r", tag: "t", caBundle: "/nonexistent/ca.crt", docker: "docker"}
	dir := t.TempDir()
	err := o.build(t.Context(), dir, dir, dir, image{name: "conformance", caBundle: true}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "-ca-bundle") {
		t.Fatalf("err=%v, want one naming -ca-bundle", err)
	}
}

// TestHelpSaysWhatItDoes: --help says what the tool builds and needs, on
// stdout; usage errors are errUsage (exit 2), not build failures (issue 27).
func TestHelpSaysWhatItDoes(t *testing.T) {
	var stdout bytes.Buffer
	if _, err := parseFlags([]string{"--help"}, &stdout); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("err=%v, want flag.ErrHelp", err)
	}
	for _, want := range []string{"usage: image", "container images", "REPO/conformance:TAG", "Needs a Docker engine", "--commit", "Exit status"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("the help lacks %q:\n%s", want, stdout.String())
		}
	}
	for _, args := range [][]string{{"--bogus"}, {"runner"}} {
		if _, err := parseFlags(args, &bytes.Buffer{}); !errors.Is(err, errUsage) {
			t.Errorf("%q: err=%v, want errUsage", args, err)
		}
	}
}
