package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/partner-v3/conformance-kit/simulator/profile"
)

// writeProfile writes the default profile with one replacement made, and
// returns its path.
func writeProfile(t *testing.T, old, new string) string {
	t.Helper()
	data := profile.DefaultJSON()
	if old != "" {
		if !bytes.Contains(data, []byte(old)) {
			t.Fatalf("default.json holds no %q", old)
		}
		data = bytes.Replace(data, []byte(old), []byte(new), 1)
	}
	path := filepath.Join(t.TempDir(), "profile.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestParseFlags_Profile: --profile (or SIM_PROFILE) is read at start; a
// profile that profile.Load refuses (unreadable, or asking what the spec
// forbids: Check) is a usage error, exit 2, that says why.
func TestParseFlags_Profile(t *testing.T) {
	staging := writeProfile(t, `"name": "simulator default"`, `"name": "staging"`)
	tests := []struct {
		name     string
		args     []string
		env      map[string]string
		wantErr  string // empty: accepted
		wantName string
	}{
		{"a good profile by flag", []string{"--profile", staging}, nil, "", "staging"},
		{"a good profile by variable", nil, map[string]string{"SIM_PROFILE": staging}, "", "staging"},
		{"no profile: the default", nil, nil, "", ""},
		{"a window the spec's rate limit cannot have", []string{"--profile", writeProfile(t, `"value": "sliding"`, `"value": "rolling"`)}, nil, "rateLimit.window", ""},
		{"a 429 body other than §7's", []string{"--profile", writeProfile(t, `"400": {`, `"429": {`)}, nil, "errors.bodies.429", ""},
		{"not JSON", []string{"--profile", writeProfile(t, `{`, `[`)}, nil, "--profile", ""},
		{"no such file", []string{"--profile", filepath.Join(t.TempDir(), "missing.json")}, nil, "--profile", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			m := NewMain(&bytes.Buffer{}, &bytes.Buffer{})
			err := m.ParseFlags(context.Background(), tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseFlags: %v", err)
			}
			if tt.wantName == "" {
				if m.Config.Profile != nil {
					t.Fatalf("Profile = %q, want none (the default)", m.Config.Profile.Source.Name)
				}
				return
			}
			if m.Config.Profile == nil || m.Config.Profile.Source.Name != tt.wantName {
				t.Fatalf("Profile = %+v, want %q", m.Config.Profile, tt.wantName)
			}
		})
	}
}
