package server

import (
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/partner-v3/conformance-kit/simulator/profile"
)

// TestPlayOf_Cache: one play per profile, resolved once, and an entry
// gone once its profile is collected.
func TestPlayOf_Cache(t *testing.T) {
	if (&Server{}).serverPlay() != ownPlay {
		t.Fatal("a server without a profile does not play default.json's resolved choices")
	}
	p := profile.Default()
	if a, b := playOf(p), playOf(p); a != b || a == ownPlay {
		t.Fatalf("playOf twice: %p, %p (no profile's %p)", a, b, ownPlay)
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
