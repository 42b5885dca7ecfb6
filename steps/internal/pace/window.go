package pace

// Time within a window (spec §8 over time, issue 27). "100 requests per
// minute" allows a sliding window, fixed windows aligned to the target's
// clock, and windows opened by the first request. A budget spent in a
// burst that starts just after a boundary of the target's clock stays
// spent, under all three, until that clock-aligned window ends: a request
// sent late in it and answered 200 is a §8 failure, whichever window the
// target chose. The pacer knows the target's clock from its Date headers
// (one-second resolution, narrowed by every answer: observe), so it can
// place both ends.

import (
	"context"
	"net/http"
	"time"
)

// clock returns what the pacer knows of the server's clock: the bounds of
// its skew and the round trip. ok is false before any Date header.
func (p *Pacer) clock() (lo, hi, latency time.Duration, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.skewLo, p.skewHi, p.latency, p.hasSkew
}

// Latency is the moving average of the round trips so far.
func (p *Pacer) Latency() time.Duration {
	_, _, l, _ := p.clock()
	return l
}

// WindowStart is the start of the window of length w aligned to the Unix
// epoch that holds t: a boundary of a clock-aligned window.
func WindowStart(t time.Time, w time.Duration) time.Time {
	ns := t.UnixNano()
	r := ns % int64(w)
	if r < 0 {
		r += int64(w)
	}
	return time.Unix(0, ns-r)
}

// LateGuard is how long before the end of a window the late probes of §8
// must have been answered: a twelfth of the window (5 s of a minute, so
// the probes go at about 55 s), and never less than the pacer's margin.
func (p *Pacer) LateGuard() time.Duration {
	return max(p.margin, p.window/12)
}

// WaitBoundary blocks until the server's clock is, for certain, less than
// lead past a boundary of a window aligned to it, waiting for the next
// boundary when it is not. A burst started then fills the window from its
// start, so that a request late in it tells a limiter that frees the
// budget early (a window shorter than the one the run assumes) from every
// limiter the spec allows. Without a Date header seen there is no clock to
// align to and it returns at once.
func (p *Pacer) WaitBoundary(ctx context.Context, lead time.Duration) error {
	for range 3 {
		lo, hi, _, ok := p.clock()
		if !ok {
			return nil
		}
		// The server's clock is in [now+lo, now+hi]: when that whole
		// range is in one window, at most lead after its start, go. A
		// clock known to less than lead allows no better than its spread.
		slack := max(lead, hi-lo+10*time.Millisecond)
		now := time.Now()
		early, late := now.Add(lo), now.Add(hi)
		start := WindowStart(early, p.window)
		if WindowStart(late, p.window).Equal(start) && late.Sub(start) <= slack {
			return nil
		}
		// Until the earliest estimate of the server's clock has passed
		// the next boundary.
		next := WindowStart(late, p.window).Add(p.window)
		wait := next.Sub(early) + 5*time.Millisecond
		if wait >= time.Second {
			p.Logf("waiting %s for the server's next clock-aligned window, to start the burst just after its boundary (spec §8)", wait.Round(100*time.Millisecond))
		}
		if err := p.Sleep(ctx, wait); err != nil {
			return err
		}
	}
	return nil
}

// WindowDeadline is the latest local time a request may be sent and still,
// for certain, be handled by the server before the end of the window that
// held a request sent at first and answered with the Date header date (may
// be empty): the clock-aligned window of the server's clock, which ends no
// later than a sliding window or one opened by that request. guard is kept
// to spare, and twice the round trip for the answer. ok is false when the
// server's clock is unknown (no Date header seen).
func (p *Pacer) WindowDeadline(first time.Time, date string, guard time.Duration) (time.Time, bool) {
	lo, hi, latency, ok := p.clock()
	if !ok {
		return time.Time{}, false
	}
	// The first request was handled at a server time of at least
	// first+lo, and of at least its Date (which cuts the time to the
	// second), so in a window that starts no earlier than theirs; a
	// request sent at t is handled by t+latency+hi.
	start := WindowStart(first.Add(lo), p.window)
	if d, err := http.ParseTime(date); err == nil {
		start = maxTime(start, WindowStart(d, p.window))
	}
	end := start.Add(p.window)
	return end.Add(-hi - 2*latency - guard), true
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
