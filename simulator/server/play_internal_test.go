package server

import (
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/partner-v3/conformance-kit/simulator/profile"
)

// TestPlayOf_Cache: one play per profile, the default's for nil and for
// the default profile, and an entry gone once its profile is collected.
func TestPlayOf_Cache(t *testing.T) {
	if playOf(nil) != defaultPlay || playOf(defaultProfile) != defaultPlay {
		t.Fatal("the default profile does not play defaultPlay")
	}
	p := profile.Default()
	if a, b := playOf(p), playOf(p); a != b || a == defaultPlay {
		t.Fatalf("playOf twice: %p, %p (default %p)", a, b, defaultPlay)
	}
	key := weak.Make(p)
	if _, ok := plays.Load(key); !ok {
		t.Fatal("no cache entry")
	}
	p = nil
	for range 20 {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
		if _, ok := plays.Load(key); !ok {
			return
		}
	}
	t.Error("the entry outlived its profile")
}
