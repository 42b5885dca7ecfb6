package controlapi

import (
	"sync"

	"github.com/partner-v3/conformance-kit/simulator"
)

// Journal is a ring of the latest partner requests: the partner API adds
// each as it answers it, the control API lists and clears them.
type Journal struct {
	mu      sync.Mutex
	entries []simulator.JournalEntry
	next    int
	full    bool
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

// Clear empties the journal.
func (j *Journal) Clear() {
	j.mu.Lock()
	defer j.mu.Unlock()
	clear(j.entries)
	j.next, j.full = 0, false
}
