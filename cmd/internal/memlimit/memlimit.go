// Package memlimit sets the Go runtime's soft memory limit of a
// long-running command (the simulator), so that a large store stays near
// its live size instead of the twice its live size that GOGC=100 lets the
// heap reach between collections (issue 21: 1,000,000 contacts held 200 MB
// ready and 404 MB after an Add Contact run).
//
// The limit is soft: the runtime collects more often as the heap nears it,
// and never fails an allocation because of it. "auto" follows the live
// heap, so it never asks the collector to squeeze the live set itself:
//
//	limit = max(Floor, live + max(live/4, MinHeadroom)), at most 90 % of
//	        the cgroup's memory.max when the process runs under one
//
// recomputed after every collection. Under Floor (the size of a simulator
// with a few hundred thousand contacts) the limit never binds and the
// runtime behaves as with GOGC alone; above it, the heap may grow by a
// quarter of the live set between collections instead of all of it. The
// simulator's contacts live in pointer-free arenas (simulator/inmem), so a
// collection marks little whatever their number: more collections cost
// little CPU (docs/performance.md has the measured figures).
package memlimit

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
)

const (
	// Floor is the least limit "auto" sets.
	Floor = 128 << 20
	// MinHeadroom is the least the heap may grow past its live size
	// before a collection, so that a small live set is not collected
	// after every few requests.
	MinHeadroom = 32 << 20
	// cgroupShare is the part of a cgroup's memory limit "auto" stays
	// under: the rest is for what the runtime does not count (the binary's
	// text, thread stacks outside Go, the kernel's page cache charge).
	cgroupShare = 0.9
)

// Mode says how a Limit is set.
type Mode int

const (
	// Auto follows the live heap (see the package comment). With
	// GOMEMLIMIT in the environment, the runtime's limit from it is kept.
	Auto Mode = iota
	// Off leaves the runtime without a limit (GOGC alone).
	Off
	// Fixed is a fixed limit of Bytes.
	Fixed
)

// Limit is the value of a --memory-limit flag: "auto", "off" or a size.
type Limit struct {
	Mode  Mode
	Bytes int64 // Fixed only
}

// String gives the flag's form back.
func (l Limit) String() string {
	switch l.Mode {
	case Off:
		return "off"
	case Fixed:
		return formatBytes(l.Bytes)
	}
	return "auto"
}

// Set parses "auto", "off" or a size: a whole number of bytes with an
// optional unit B, KiB, MiB, GiB, TiB (powers of 1024) or KB, MB, GB, TB
// (powers of 1000), as GOMEMLIMIT takes them. It implements flag.Value.
func (l *Limit) Set(s string) error {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "auto", "":
		*l = Limit{Mode: Auto}
		return nil
	case "off":
		*l = Limit{Mode: Off}
		return nil
	}
	n, err := ParseBytes(s)
	if err != nil {
		return err
	}
	if n < 16<<20 {
		return fmt.Errorf("%q is under 16MiB: the simulator would spend its time collecting garbage", s)
	}
	*l = Limit{Mode: Fixed, Bytes: n}
	return nil
}

var units = []struct {
	suffix string
	mult   int64
}{ // longest suffixes first, so that "MiB" is not read as "B"
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"B", 1},
}

// ParseBytes reads a size such as "300MiB", "1GB" or "268435456".
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range units {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a size: give auto, off, or bytes with an optional unit (300MiB, 1GiB, 512MB)", s)
	}
	if n > math.MaxInt64/mult {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return n * mult, nil
}

func formatBytes(n int64) string {
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.mult && n%u.mult == 0 {
			return strconv.FormatInt(n/u.mult, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}

// Target is the limit "auto" sets for a live heap of live bytes under a
// ceiling (0: none).
func Target(live, ceiling int64) int64 {
	t := live + max(live/4, MinHeadroom)
	t = max(t, Floor)
	if ceiling > 0 {
		t = min(t, ceiling)
	}
	return t
}

// Applied says what Apply did, for the start banner and /config.
type Applied struct {
	Mode Mode
	// Bytes is the fixed limit, or the ceiling "auto" keeps under (0:
	// none).
	Bytes int64
	// FromEnv is set when GOMEMLIMIT was given and "auto" kept it.
	FromEnv bool
}

func (a Applied) String() string {
	switch {
	case a.FromEnv:
		return "GOMEMLIMIT=" + os.Getenv("GOMEMLIMIT")
	case a.Mode == Off:
		return "off"
	case a.Mode == Fixed:
		return formatBytes(a.Bytes)
	case a.Bytes > 0:
		return fmt.Sprintf("auto (live heap + 25%%, at least %s, at most %s: 90%% of the cgroup's)", formatBytes(Floor), formatBytes(a.Bytes))
	}
	return fmt.Sprintf("auto (live heap + 25%%, at least %s)", formatBytes(Floor))
}

// Apply sets the runtime's memory limit as l says, for the whole process:
// call it from main, never from a library or a test that shares its
// process. The returned stop ends "auto"'s tuning (the limit it last set
// stays).
func Apply(l Limit) (Applied, func()) {
	switch l.Mode {
	case Off:
		debug.SetMemoryLimit(math.MaxInt64)
		return Applied{Mode: Off}, func() {}
	case Fixed:
		debug.SetMemoryLimit(l.Bytes)
		return Applied{Mode: Fixed, Bytes: l.Bytes}, func() {}
	}
	if _, ok := os.LookupEnv("GOMEMLIMIT"); ok {
		return Applied{Mode: Auto, FromEnv: true}, func() {}
	}
	ceiling := int64(0)
	if c, ok := cgroupLimit("/proc/self/cgroup", "/sys/fs/cgroup"); ok {
		ceiling = int64(float64(c) * cgroupShare)
	}
	t := &tuner{ceiling: ceiling}
	t.tune()
	t.arm()
	return Applied{Mode: Auto, Bytes: ceiling}, func() { t.stopped.Store(true) }
}

// tuner sets the limit after every collection, from a finalizer: a
// sentinel object made unreachable at once is finalized after the next
// collection, and its finalizer makes the next one. No goroutine polls.
type tuner struct {
	ceiling int64
	stopped atomic.Bool
	sample  [1]metrics.Sample
}

// sentinel holds a pointer so that it is not batched by the tiny
// allocator, whose objects may never be finalized.
type sentinel struct{ _ *byte }

func (t *tuner) arm() {
	runtime.SetFinalizer(new(sentinel), func(*sentinel) {
		if t.stopped.Load() {
			return
		}
		t.tune()
		t.arm()
	})
}

func (t *tuner) tune() {
	t.sample[0].Name = "/gc/heap/live:bytes"
	metrics.Read(t.sample[:])
	if t.sample[0].Value.Kind() != metrics.KindUint64 {
		return // a runtime without the metric: leave GOGC alone
	}
	debug.SetMemoryLimit(Target(int64(t.sample[0].Value.Uint64()), t.ceiling))
}

// cgroupLimit reads the memory limit of the process's cgroup: v2's
// memory.max, or v1's memory.limit_in_bytes, under root. It reports false
// when there is none ("max", or v1's near-2^63 "unlimited") or it cannot
// be read.
func cgroupLimit(procCgroup, root string) (int64, bool) {
	f, err := os.Open(procCgroup)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// hierarchy-ID:controller-list:path
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		var file string
		switch {
		case parts[0] == "0" && parts[1] == "": // v2
			file = root + parts[2] + "/memory.max"
			if _, err := os.Stat(file); err != nil {
				// Inside a cgroup namespace the path may not exist as
				// such: the root is the process's own cgroup.
				file = root + "/memory.max"
			}
		case hasController(parts[1], "memory"): // v1
			file = root + "/memory" + parts[2] + "/memory.limit_in_bytes"
			if _, err := os.Stat(file); err != nil {
				file = root + "/memory/memory.limit_in_bytes"
			}
		default:
			continue
		}
		b, err := os.ReadFile(file)
		if err != nil {
			return 0, false
		}
		v := strings.TrimSpace(string(b))
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 || n >= 1<<62 {
			return 0, false // "max", or v1's page-rounded 2^63
		}
		return n, true
	}
	return 0, false
}

func hasController(list, name string) bool {
	for _, c := range strings.Split(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}
