package pace

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"
)

// knownClock returns a pacer that knows the server's clock to within
// ±spread of ours, with the given round trip.
func knownClock(window, spread, latency time.Duration) *Pacer {
	p := New(100, window, io.Discard)
	p.skewLo, p.skewHi, p.hasSkew, p.latency = -spread, spread, true, latency
	return p
}

// TestLateGuard: the probes of §8 go at 55 s of a minute, never closer to
// the window's end than the pacer's margin.
func TestLateGuard(t *testing.T) {
	tests := []struct {
		name   string
		window time.Duration
		want   time.Duration
	}{
		{"a minute: a twelfth, 5 s", time.Minute, 5 * time.Second},
		{"6 s: a twelfth, half a second", 6 * time.Second, 500 * time.Millisecond},
		{"2 s: the margin, a quarter of a second", 2 * time.Second, 250 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := New(100, tt.window, io.Discard).LateGuard(); got != tt.want {
				t.Fatalf("LateGuard()=%v, want %v", got, tt.want)
			}
		})
	}
}

// TestWindowDeadline: the late probes are sent before the end of the
// clock-aligned window that held the burst's first request, less the
// clock's spread, two round trips and the guard; a Date header that shows
// the server already in the next window moves the end with it.
func TestWindowDeadline(t *testing.T) {
	const w = time.Minute
	boundary := time.Date(2026, 11, 27, 18, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		first time.Time
		date  string
		want  time.Time
	}{
		{"a burst just after a boundary: its window ends a minute later",
			boundary.Add(300 * time.Millisecond), "", boundary.Add(w - 100*time.Millisecond - 2*10*time.Millisecond - 5*time.Second)},
		{"a burst late in a window ends with that window",
			boundary.Add(40 * time.Second), "", boundary.Add(w - 120*time.Millisecond - 5*time.Second)},
		{"a burst closer to the boundary than the clock is known may be in the window before",
			boundary.Add(50 * time.Millisecond), "", boundary.Add(-120*time.Millisecond - 5*time.Second)},
		{"a Date of the next minute: the server was already in the next window",
			boundary.Add(-50 * time.Millisecond), boundary.Format(http.TimeFormat), boundary.Add(w - 120*time.Millisecond - 5*time.Second)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := knownClock(w, 100*time.Millisecond, 10*time.Millisecond)
			got, ok := p.WindowDeadline(tt.first, tt.date, p.LateGuard())
			if !ok {
				t.Fatal("WindowDeadline: no clock, want one")
			}
			if !got.Equal(tt.want) {
				t.Fatalf("WindowDeadline=%v, want %v", got.UTC(), tt.want)
			}
		})
	}
	if _, ok := New(100, w, io.Discard).WindowDeadline(boundary, "", time.Second); ok {
		t.Fatal("WindowDeadline without a Date header seen: ok, want not")
	}
}

// TestWaitBoundary: after WaitBoundary the server's clock is, by all the
// pacer knows, less than lead past a boundary of a window aligned to it;
// with no Date header seen there is nothing to wait for.
func TestWaitBoundary(t *testing.T) {
	const w, lead = 2 * time.Second, 500 * time.Millisecond
	p := knownClock(w, 20*time.Millisecond, time.Millisecond)
	if err := p.WaitBoundary(context.Background(), lead); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	early, late := now.Add(p.skewLo), now.Add(p.skewHi)
	start := WindowStart(early, w)
	if !WindowStart(late, w).Equal(start) || late.Sub(start) > lead+50*time.Millisecond {
		t.Fatalf("after WaitBoundary the server's clock is %v to %v past a boundary, want within %v", early.Sub(start), late.Sub(start), lead)
	}
	blind := New(100, time.Hour, io.Discard)
	done := make(chan error, 1)
	go func() { done <- blind.WaitBoundary(context.Background(), time.Second) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("WaitBoundary without a Date header seen waited for an hour's window")
	}
}
