// Package buildinfo says which build a binary is, the same way for both
// commands: the version a release build was given with
// -ldflags "-X main.version=v1.2.3" (the Makefile does), otherwise what the
// Go toolchain recorded (the module version of `go install ...@v1.2.3`, or
// the VCS revision of a build in a checkout).
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
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
	var rev string
	var dirty bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
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

// String is the line --version prints: the command, its version and the
// Go toolchain that built it ("simulator v1.2.3 (go1.25.5)").
func String(command, linked string) string {
	return fmt.Sprintf("%s %s (%s)", command, Version(linked), runtime.Version())
}
