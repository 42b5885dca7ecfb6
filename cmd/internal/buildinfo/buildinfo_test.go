package buildinfo

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// settings are build settings from key, value pairs.
func settings(kv ...string) []debug.BuildSetting {
	var out []debug.BuildSetting
	for i := 0; i < len(kv); i += 2 {
		out = append(out, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
	}
	return out
}

func TestVersion(t *testing.T) {
	tests := []struct {
		name   string
		linked string
		info   *debug.BuildInfo // nil: no build information
		want   string
	}{
		{"the linker flag wins over everything", "v1.2.3", &debug.BuildInfo{Main: debug.Module{Version: "v9.9.9"}}, "v1.2.3"},
		{"a linked dev counts as unset", "dev", &debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}}, "v1.4.0"},
		{"go install at a version gives the module version", "", &debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}}, "v1.4.0"},
		{"a pseudo-version is kept whole", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261122100000-0123456789ab"}}, "v0.0.0-20261122100000-0123456789ab"},
		{"a checkout build gives the short revision", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: settings("vcs.revision", "0123456789abcdef0123", "vcs.modified", "false")}, "0123456789ab"},
		{"local changes mark the revision dirty", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: settings("vcs.revision", "0123456789abcdef0123", "vcs.modified", "true")}, "0123456789ab-dirty"},
		{"devel without VCS stamping is dev", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, Dev},
		{"no build information is dev", "", nil, Dev},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func(f func() (*debug.BuildInfo, bool)) { readBuildInfo = f }(readBuildInfo)
			readBuildInfo = func() (*debug.BuildInfo, bool) { return tt.info, tt.info != nil }
			if got := Version(tt.linked); got != tt.want {
				t.Fatalf("Version(%q)=%q, want %q", tt.linked, got, tt.want)
			}
		})
	}
}

func TestCommit(t *testing.T) {
	rev := "0123456789abcdef0123456789abcdef01234567"
	tests := []struct {
		name      string
		linked    string
		info      *debug.BuildInfo // nil: no build information
		want      string
		wantDirty bool
	}{
		{"the linker flag wins over the stamped revision", rev, &debug.BuildInfo{Settings: settings("vcs.revision", "ffff", "vcs.modified", "false")}, rev, false},
		{"a linked dirty commit stays dirty", rev + "-dirty", nil, rev + "-dirty", true},
		{"the stamped revision, whole", "", &debug.BuildInfo{Settings: settings("vcs.revision", rev, "vcs.modified", "false")}, rev, false},
		{"a stamped modified tree is dirty", "", &debug.BuildInfo{Settings: settings("vcs.revision", rev, "vcs.modified", "true")}, rev + "-dirty", true},
		{"go install at a version records no commit", "", &debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}}, "", false},
		{"no build information, no commit", "", nil, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func(f func() (*debug.BuildInfo, bool)) { readBuildInfo = f }(readBuildInfo)
			readBuildInfo = func() (*debug.BuildInfo, bool) { return tt.info, tt.info != nil }
			got := Commit(tt.linked)
			if got != tt.want {
				t.Fatalf("Commit(%q)=%q, want %q", tt.linked, got, tt.want)
			}
			if Dirty(got) != tt.wantDirty {
				t.Fatalf("Dirty(%q)=%v, want %v", got, !tt.wantDirty, tt.wantDirty)
			}
		})
	}
}

func TestStringNamesCommandVersionCommitAndToolchain(t *testing.T) {
	defer func(f func() (*debug.BuildInfo, bool)) { readBuildInfo = f }(readBuildInfo)
	readBuildInfo = func() (*debug.BuildInfo, bool) { return nil, false }
	tests := []struct {
		name   string
		commit string
		extra  []string
		want   string
	}{
		{"without a commit", "", nil, "simulator v1.2.3 (" + runtime.Version() + ")"},
		{"with a commit", "abc123", nil, "simulator v1.2.3 (commit abc123, " + runtime.Version() + ")"},
		{"with a dirty commit and more", "abc123-dirty", []string{"source sha256:ff"}, "simulator v1.2.3 (commit abc123-dirty, " + runtime.Version() + ", source sha256:ff)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := String("simulator", "v1.2.3", tt.commit, tt.extra...)
			if got != tt.want {
				t.Fatalf("String=%q, want %q", got, tt.want)
			}
			if strings.Contains(got, "\n") {
				t.Fatalf("String=%q is more than one line", got)
			}
		})
	}
}

func TestRelabelled(t *testing.T) {
	tests := []struct {
		name, version, describe string
		want                    bool
	}{
		{"the build of a tag", "v1.4.0", "v1.4.0", false},
		{"a label set by hand on another commit", "v9.0.0", "v1.3.0-4-g1a2b3c4", true},
		{"a label set by hand on a modified tag", "v1.4.0", "v1.4.0-dirty", true},
		{"no describe linked: go install or go build", "v1.4.0", "", false},
		{"no version linked", "", "v1.4.0", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, got := Relabelled(tt.version, tt.describe)
			if got != tt.want || (got && d != tt.describe) {
				t.Fatalf("Relabelled(%q, %q)=%q, %v; want %v", tt.version, tt.describe, d, got, tt.want)
			}
		})
	}
}
