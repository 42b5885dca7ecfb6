package controlapi

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/partner-v3/conformance-kit/simulator"
)

// Journal is a ring of the latest partner requests: the partner API adds
// each as it answers it, the control API lists and clears them.
type Journal struct {
	mu      sync.Mutex
	entries []simulator.JournalEntry
	next    int
	full    bool
	// subs are the live viewers (Subscribe): the dashboard's journal
	// streams. Add never waits for one.
	subs []*Subscription
}

// Subscription is a live view of the journal (Journal.Subscribe): C
// receives each entry added after it was made, until Close.
type Subscription struct {
	// C receives the entries. It is closed by Close.
	C       <-chan simulator.JournalEntry
	c       chan simulator.JournalEntry
	dropped atomic.Int64
	j       *Journal
}

// Dropped returns how many entries the subscription missed because its
// viewer had not taken the earlier ones yet.
func (s *Subscription) Dropped() int64 { return s.dropped.Load() }

// Close ends the subscription and closes C. Calling it again does nothing.
func (s *Subscription) Close() {
	j := s.j
	j.mu.Lock()
	defer j.mu.Unlock()
	if i := slices.Index(j.subs, s); i >= 0 {
		j.subs = slices.Delete(j.subs, i, i+1)
		close(s.c) // under the lock: Add sends only while holding it
	}
}

// Subscribe returns a subscription to the entries added from now on, with
// room for buf of them. The journal is on the partner API's request path:
// when a subscriber has buf entries not yet taken, Add drops the next ones
// for it (counted by Dropped) rather than wait, so a slow viewer never
// slows a partner request (issue 30).
func (j *Journal) Subscribe(buf int) *Subscription {
	c := make(chan simulator.JournalEntry, max(buf, 1))
	s := &Subscription{C: c, c: c, j: j}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.subs = append(j.subs, s)
	return s
}

// NewJournal returns a journal that keeps the latest size requests.
func NewJournal(size int) *Journal { return &Journal{entries: make([]simulator.JournalEntry, size)} }

// Add keeps e, dropping the oldest entry when the journal is full.
func (j *Journal) Add(e simulator.JournalEntry) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.entries[j.next] = e
	j.next = (j.next + 1) % len(j.entries)
	j.full = j.full || j.next == 0
	for _, s := range j.subs {
		select {
		case s.c <- e:
		default:
			s.dropped.Add(1)
		}
	}
}

// Latest returns up to n entries, newest first.
func (j *Journal) Latest(n int) []simulator.JournalEntry {
	j.mu.Lock()
	defer j.mu.Unlock()
	size := j.next
	if j.full {
		size = len(j.entries)
	}
	n = min(max(n, 0), size)
	out := make([]simulator.JournalEntry, 0, n)
	for i := 1; i <= n; i++ {
		out = append(out, j.entries[(j.next-i+len(j.entries))%len(j.entries)])
	}
	return out
}

// LatestOf returns up to n entries of one account, newest first: those it
// authenticated as and those attributed to it (JournalEntry.AttributedTo).
func (j *Journal) LatestOf(accountID string, n int) []simulator.JournalEntry {
	j.mu.Lock()
	defer j.mu.Unlock()
	size := j.next
	if j.full {
		size = len(j.entries)
	}
	out := []simulator.JournalEntry{}
	for i := 1; i <= size && len(out) < n; i++ {
		if e := j.entries[(j.next-i+len(j.entries))%len(j.entries)]; e.AccountID == accountID || e.AttributedTo == accountID {
			out = append(out, e)
		}
	}
	return out
}

// Find answers the entry of requestID, if the journal still keeps it.
func (j *Journal) Find(requestID string) (simulator.JournalEntry, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for i := range j.entries {
		if e := j.entries[i]; requestID != "" && e.RequestID == requestID {
			return e, true
		}
	}
	return simulator.JournalEntry{}, false
}

// Clear empties the journal.
func (j *Journal) Clear() {
	j.mu.Lock()
	defer j.mu.Unlock()
	clear(j.entries)
	j.next, j.full = 0, false
}
