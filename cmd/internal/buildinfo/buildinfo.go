// Package buildinfo says which build a binary is, the same way for both
// commands: the version a release build was given with
// -ldflags "-X main.version=v1.2.3" (the Makefile does, from `git
// describe`), otherwise what the Go toolchain recorded (the module version
// of `go install ...@v1.2.3`, or the VCS revision of a build in a
// checkout); and the commit it was built from, given with
// -ldflags "-X main.commit=<git rev-parse HEAD>[-dirty]" (the Makefile
// does: GOFLAGS=-buildvcs=false and builds outside a checkout stamp no VCS
// information) or the VCS revision the toolchain stamped.
//
// A version is a label anyone can set (VERSION=v9.0.0 make build); the
// commit, with "-dirty" for a modified tree, is what tells a relabelled
// build from the tagged one.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Dev is the version of a build that knows nothing better: a `go build`
// or `go run` without -ldflags and without VCS stamping (-buildvcs=false,
// or no checkout).
const Dev = "dev"

// readBuildInfo is debug.ReadBuildInfo; tests replace it.
var readBuildInfo = debug.ReadBuildInfo

// Version resolves the version of this binary. linked is main.version as
// set by -ldflags -X; empty or "dev" means unset. Then the main module's
// version from the build information when it is a real one (not
// "(devel)"), then the VCS revision (12 hex digits, "-dirty" with local
// changes), then Dev.
func Version(linked string) string {
	if linked != "" && linked != Dev {
		return linked
	}
	info, ok := readBuildInfo()
	if !ok {
		return Dev
	}
	return fromBuildInfo(info)
}

func fromBuildInfo(info *debug.BuildInfo) string {
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, dirty := vcs(info)
	if rev == "" {
		return Dev
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return rev
}

// vcs is the VCS revision the toolchain stamped ("" when none) and whether
// the tree was modified.
func vcs(info *debug.BuildInfo) (rev string, dirty bool) {
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	return rev, dirty
}

// Relabelled says, for a version set by hand that is not what git says of
// the source (VERSION=v9.0.0 make build on a commit git describes as
// v1.3.0-4-g1a2b3c4), what git says: the version is a label, not a
// release. linkedDescribe is main.describe as set by -ldflags -X (the
// Makefile's `git describe --tags --always --dirty`, whatever VERSION
// says); "" when the build did not say (go install, go build), and then
// nothing is known.
func Relabelled(linkedVersion, linkedDescribe string) (describe string, relabelled bool) {
	if linkedDescribe == "" || linkedVersion == "" || linkedVersion == Dev || linkedVersion == linkedDescribe {
		return "", false
	}
	return linkedDescribe, true
}

// DirtySuffix ends the commit of a build from a modified tree.
const DirtySuffix = "-dirty"

// Commit resolves the commit this binary was built from: linked (main.commit
// as set by -ldflags -X: a full hex revision, DirtySuffix appended for a
// modified tree) when set, otherwise the VCS revision the toolchain stamped
// (DirtySuffix when vcs.modified), otherwise "" (unknown: `go install
// ...@v1.2.3` stamps no revision, and the module version says which
// source it is).
func Commit(linked string) string {
	if linked != "" {
		return linked
	}
	info, ok := readBuildInfo()
	if !ok {
		return ""
	}
	rev, dirty := vcs(info)
	if rev != "" && dirty {
		rev += DirtySuffix
	}
	return rev
}

// Dirty reports whether a commit (as Commit returns it) names a build from
// a modified tree: no tag names that source.
func Dirty(commit string) bool { return strings.HasSuffix(commit, DirtySuffix) }

// String is the line --version prints: the command, its version, the
// commit it was built from when known and the Go toolchain that built it
// ("simulator v1.2.3 (commit 0123456789ab…, go1.25.5)"). extra, when not
// empty, is added after the toolchain ("source sha256:…").
func String(command, linkedVersion, linkedCommit string, extra ...string) string {
	parts := []string{}
	if c := Commit(linkedCommit); c != "" {
		parts = append(parts, "commit "+c)
	}
	parts = append(parts, runtime.Version())
	parts = append(parts, extra...)
	return fmt.Sprintf("%s %s (%s)", command, Version(linkedVersion), strings.Join(parts, ", "))
}
