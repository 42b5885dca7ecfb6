package container

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/partner-v3/conformance-kit/simulator/profile"
)

// TestProfileOptions: WithProfile and WithProfileFile copy the profile
// into the container and name it by SIM_PROFILE; a file the simulator
// would refuse is the option's error, which Run returns before starting
// anything.
func TestProfileOptions(t *testing.T) {
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good.json"), filepath.Join(dir, "bad.json")
	if err := os.WriteFile(good, profile.DefaultJSON(), 0o600); err != nil {
		t.Fatal(err)
	}
	refused := strings.Replace(string(profile.DefaultJSON()), `"value": "sliding"`, `"value": "rolling"`, 1)
	if err := os.WriteFile(bad, []byte(refused), 0o600); err != nil {
		t.Fatal(err)
	}
	staging := profile.Default()
	staging.Source.Name = "staging"
	tests := []struct {
		name     string
		opt      Option
		wantName string // the profile copied; empty: none
		wantErr  string
	}{
		{"none", func(*settings) {}, "", ""},
		{"a profile", WithProfile(staging), "staging", ""},
		{"a profile file", WithProfileFile(good), "simulator default", ""},
		{"a file Check refuses", WithProfileFile(bad), "", "rateLimit.window"},
		{"no file", WithProfileFile(filepath.Join(dir, "missing.json")), "", "missing.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s settings
			tt.opt(&s)
			if tt.wantErr != "" {
				if s.profileErr == nil || !strings.Contains(s.profileErr.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one naming %q", s.profileErr, tt.wantErr)
				}
				return
			}
			files, env := s.profileFile()
			if tt.wantName == "" {
				if len(files) != 0 || len(env) != 0 {
					t.Fatalf("files %v, env %v, want none", files, env)
				}
				return
			}
			if len(files) != 1 || files[0].ContainerFilePath != env["SIM_PROFILE"] || files[0].FileMode&0o004 == 0 {
				t.Fatalf("files %+v, env %v: want one world-readable file, named by SIM_PROFILE", files, env)
			}
			data, err := io.ReadAll(files[0].Reader)
			if err != nil {
				t.Fatal(err)
			}
			p, err := profile.Parse(data)
			if err != nil || p.Source.Name != tt.wantName {
				t.Fatalf("copied profile %v, %v; want %q", p, err, tt.wantName)
			}
		})
	}
}
