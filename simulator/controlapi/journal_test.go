package controlapi_test

import (
	"testing"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/controlapi"
)

// TestJournalSubscribeDropsForASlowViewer: a subscriber gets each entry
// added after it subscribed; one that takes none has the entries beyond
// its buffer dropped, counted, while Add goes on without waiting (issue 30).
func TestJournalSubscribeDropsForASlowViewer(t *testing.T) {
	j := controlapi.NewJournal(10)
	j.Add(simulator.JournalEntry{RequestID: "before"})
	fast, slow := j.Subscribe(100), j.Subscribe(2)
	for _, id := range []string{"a", "b", "c", "d"} {
		j.Add(simulator.JournalEntry{RequestID: id})
	}
	for _, want := range []string{"a", "b", "c", "d"} {
		if got := (<-fast.C).RequestID; got != want {
			t.Fatalf("fast subscriber got %q, want %q", got, want)
		}
	}
	if got, want := slow.Dropped(), int64(2); got != want {
		t.Fatalf("slow subscriber Dropped=%d, want %d", got, want)
	}
	if got := (<-slow.C).RequestID; got != "a" {
		t.Fatalf("slow subscriber's first entry %q, want a", got)
	}
	slow.Close()
	slow.Close() // a second Close does nothing
	j.Add(simulator.JournalEntry{RequestID: "e"})
	if got := (<-fast.C).RequestID; got != "e" {
		t.Fatalf("fast subscriber got %q after the slow one left, want e", got)
	}
	if _, open := <-slow.C; open {
		// the buffered "b" is still there: drain it, then C must be closed
		if _, open := <-slow.C; open {
			t.Fatal("a closed subscription's channel is still open")
		}
	}
	fast.Close()
}
