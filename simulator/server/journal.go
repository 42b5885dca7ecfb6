package server

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
)

// journal is a ring of the latest requests.
type journal struct {
	mu      sync.Mutex
	entries []simulator.JournalEntry
	next    int
	full    bool
}

func newJournal(size int) *journal { return &journal{entries: make([]simulator.JournalEntry, size)} }

func (j *journal) add(e simulator.JournalEntry) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.entries[j.next] = e
	j.next = (j.next + 1) % len(j.entries)
	j.full = j.full || j.next == 0
}

// latest returns up to n entries, newest first.
func (j *journal) latest(n int) []simulator.JournalEntry {
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

func (j *journal) clear() {
	j.mu.Lock()
	defer j.mu.Unlock()
	clear(j.entries)
	j.next, j.full = 0, false
}

type entryKey struct{}

// entryFrom returns the request's journal entry, for middleware to fill.
func entryFrom(r *http.Request) *simulator.JournalEntry {
	if e, ok := r.Context().Value(entryKey{}).(*simulator.JournalEntry); ok {
		return e
	}
	return &simulator.JournalEntry{} // outside record: filled and dropped
}

func setOperation(r *http.Request, op string) { entryFrom(r).Operation = op }

// record journals and logs every partner request once it is answered.
func (s *Server) record(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := s.now()()
		e := &simulator.JournalEntry{
			Time:      start.UTC(),
			RequestID: w.Header().Get(requestIDHeader),
			Method:    r.Method,
			Path:      r.URL.Path,
			APIKey:    maskKey(r.Header.Get(headerAPIKey)),
		}
		rec := &statusRecorder{ResponseWriter: w}
		defer func() {
			e.LatencyMS = float64(time.Since(start).Microseconds()) / 1000
			e.Status = rec.status
			if v := recover(); v != nil {
				e.Status = 0 // the connection was cut on purpose
				defer panic(v)
			}
			s.journal.add(*e)
			level := levelFor(e.Status)
			if e.FaultID != "" {
				level = slog.LevelInfo // the failure was asked for
			}
			// Attributes are built only for a logger that will write them.
			if l := s.logger(); l.Enabled(context.Background(), level) {
				l.LogAttrs(context.Background(), level, "request", slogAttrs(e)...)
			}
		}()
		next.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), entryKey{}, e)))
	})
}

// maskKey keeps enough of an API key to tell keys apart in a journal.
func maskKey(k string) string {
	if k == "" {
		return ""
	}
	if len(k) <= 8 {
		return "****"
	}
	return k[:4] + "****" + k[len(k)-2:]
}
