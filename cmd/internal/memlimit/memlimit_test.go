package memlimit

import (
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestLimit_Set(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    Limit
		wantErr bool
	}{
		{in: "auto", want: Limit{Mode: Auto}},
		{in: "", want: Limit{Mode: Auto}},
		{in: "OFF", want: Limit{Mode: Off}},
		{in: "300MiB", want: Limit{Mode: Fixed, Bytes: 300 << 20}},
		{in: "1GiB", want: Limit{Mode: Fixed, Bytes: 1 << 30}},
		{in: "512MB", want: Limit{Mode: Fixed, Bytes: 512e6}},
		{in: " 2 GB ", want: Limit{Mode: Fixed, Bytes: 2e9}},
		{in: "268435456", want: Limit{Mode: Fixed, Bytes: 1 << 28}},
		{in: "268435456B", want: Limit{Mode: Fixed, Bytes: 1 << 28}},
		{in: "1MiB", wantErr: true}, // under 16 MiB
		{in: "-5MiB", wantErr: true},
		{in: "300M", wantErr: true},
		{in: "lots", wantErr: true},
		{in: "1.5GiB", wantErr: true},
		{in: "99999999999TiB", wantErr: true},
	} {
		var l Limit
		err := l.Set(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("Set(%q) error = %v, want error %v", tc.in, err, tc.wantErr)
			continue
		}
		if err == nil && l != tc.want {
			t.Errorf("Set(%q) = %+v, want %+v", tc.in, l, tc.want)
		}
	}
}

func TestLimit_StringRoundTrips(t *testing.T) {
	for _, in := range []string{"auto", "off", "300MiB", "1GiB", "512MB", "100000001B"} {
		var l, back Limit
		if err := l.Set(in); err != nil {
			t.Fatal(err)
		}
		if err := back.Set(l.String()); err != nil || back != l {
			t.Errorf("%q: String() = %q reads back as %+v (%v)", in, l.String(), back, err)
		}
	}
}

func TestTarget(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name          string
		live, ceiling int64
		want          int64
	}{
		{name: "small heap: the floor", live: 18 * mib, want: Floor},
		{name: "a million contacts: a quarter more", live: 200 * mib, want: 250 * mib},
		{name: "mid heap: the minimum headroom", live: 100 * mib, want: Floor + 4*mib}, // 100 + 32
		{name: "ceiling wins", live: 200 * mib, ceiling: 230 * mib, want: 230 * mib},
		{name: "ceiling under the floor", live: 10 * mib, ceiling: 100 * mib, want: 100 * mib},
	} {
		if got := Target(tc.live, tc.ceiling); got != tc.want {
			t.Errorf("%s: Target(%d MiB, %d MiB) = %.1f MiB, want %.1f MiB", tc.name,
				tc.live/mib, tc.ceiling/mib, float64(got)/mib, float64(tc.want)/mib)
		}
	}
}

func TestCgroupLimit(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cgroup string
		files  map[string]string
		want   int64
		wantOK bool
	}{
		{name: "v2 with a limit", cgroup: "0::/kubepods/pod1/c1\n",
			files: map[string]string{"kubepods/pod1/c1/memory.max": "536870912\n"}, want: 512 << 20, wantOK: true},
		{name: "v2 unlimited", cgroup: "0::/user.slice\n",
			files: map[string]string{"user.slice/memory.max": "max\n"}},
		{name: "v2 in a cgroup namespace", cgroup: "0::/\n",
			files: map[string]string{"memory.max": "1073741824\n"}, want: 1 << 30, wantOK: true},
		{name: "v2 at the host's root (no memory.max)", cgroup: "0::/\n"},
		{name: "v1 with a limit", cgroup: "12:cpu,cpuacct:/docker/x\n4:memory:/docker/x\n",
			files: map[string]string{"memory/docker/x/memory.limit_in_bytes": "268435456\n"}, want: 256 << 20, wantOK: true},
		{name: "v1 unlimited", cgroup: "4:memory:/\n",
			files: map[string]string{"memory/memory.limit_in_bytes": "9223372036854771712\n"}},
		{name: "garbage", cgroup: "0::/a\n", files: map[string]string{"a/memory.max": "lots\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			proc := filepath.Join(dir, "cgroup")
			if err := os.WriteFile(proc, []byte(tc.cgroup), 0o600); err != nil {
				t.Fatal(err)
			}
			root := filepath.Join(dir, "fs")
			for name, body := range tc.files {
				p := filepath.Join(root, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			got, ok := cgroupLimit(proc, root)
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("cgroupLimit = %d, %v; want %d, %v", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

// TestApply sets the process's own limit (this test binary's), then puts
// it back: "auto" must set a limit after start and follow the live heap
// after a collection; "off" and a size set theirs at once.
func TestApply(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	t.Setenv("GOMEMLIMIT", "")
	os.Unsetenv("GOMEMLIMIT") // restored by Setenv's cleanup

	applied, stop := Apply(Limit{Mode: Fixed, Bytes: 300 << 20})
	stop()
	if got := debug.SetMemoryLimit(-1); got != 300<<20 || applied.String() != "300MiB" {
		t.Errorf("fixed: limit %d, applied %q; want %d, 300MiB", got, applied, 300<<20)
	}
	_, stop = Apply(Limit{Mode: Off})
	stop()
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("off: limit %d, want none", got)
	}

	debug.SetMemoryLimit(math.MaxInt64)
	_, stop = Apply(Limit{Mode: Auto})
	defer stop()
	if got := debug.SetMemoryLimit(-1); got < Floor || got == math.MaxInt64 {
		t.Fatalf("auto: limit %d after Apply, want at least the floor %d", got, Floor)
	}
	// Hold a live set above the floor: after a collection the limit must
	// follow it (live + a quarter), set by the finalizer.
	ballast := make([]byte, Floor+64<<20)
	for i := range ballast {
		ballast[i] = 1
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		runtime.GC()
		got := debug.SetMemoryLimit(-1)
		if got >= int64(len(ballast))+int64(len(ballast))/4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("auto: limit %d MiB after collections with %d MiB live, want at least %d MiB",
				got>>20, len(ballast)>>20, (len(ballast)+len(ballast)/4)>>20)
		}
		time.Sleep(10 * time.Millisecond) // the finalizer runs on its own goroutine
	}
	runtime.KeepAlive(ballast)

	// With GOMEMLIMIT given, "auto" keeps the runtime's limit.
	stop()
	t.Setenv("GOMEMLIMIT", "400MiB")
	debug.SetMemoryLimit(400 << 20)
	applied, stop2 := Apply(Limit{Mode: Auto})
	stop2()
	if !applied.FromEnv || debug.SetMemoryLimit(-1) != 400<<20 {
		t.Errorf("GOMEMLIMIT: applied %+v, limit %d; want the environment's 400MiB kept", applied, debug.SetMemoryLimit(-1))
	}
}
