package steps

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// deliberateKey marks a request context whose request spends the rate-limit
// budget on purpose (the @rate-limit scenarios): it is logged but never held
// back.
type deliberateKey struct{}

func withDeliberate(ctx context.Context) context.Context {
	return context.WithValue(ctx, deliberateKey{}, true)
}

func isDeliberate(ctx context.Context) bool {
	v, _ := ctx.Value(deliberateKey{}).(bool)
	return v
}

// pacer keeps every request of the run below the target's rate limit (spec
// §8), so that no scenario meets an accidental 429. It keeps a log of send
// times per account and holds a request back while the account already sent
// budget requests within the last window plus a margin. The margin covers
// the latency between our send time and the server's arrival time; holding
// the last window (sliding reading) also holds every clock-aligned window,
// which is never longer.
//
// With the simulator's control API, a full budget is reset through it
// instead of waited for.
type pacer struct {
	limit  int
	window time.Duration
	margin time.Duration
	// resetFn, when set, clears an account's counter on the target (the
	// simulator's control API).
	resetFn func(ctx context.Context, accountID string) error
	log     io.Writer

	requests atomic.Int64

	mu     sync.Mutex
	sent   map[string][]time.Time
	waited time.Duration
	resets int
	// skewLo and skewHi bound the server's clock minus ours, narrowed by
	// every Date header (one-second resolution): a response dated D, sent
	// at s and received at r, was stamped at a server time in [D, D+1s)
	// and a local time in [s, r].
	skewLo, skewHi time.Duration
	hasSkew        bool
	latency        time.Duration // moving average of round trips
}

func newPacer(limit int, window time.Duration, log io.Writer) *pacer {
	margin := window / 20
	margin = max(margin, 250*time.Millisecond)
	margin = min(margin, 2*time.Second)
	return &pacer{limit: limit, window: window, margin: margin, log: log, sent: make(map[string][]time.Time)}
}

// budget is how many requests per window the pacer lets through outside the
// @rate-limit scenarios: one below the limit, as a safety slot.
func (p *pacer) budget() int { return max(1, p.limit-1) }

// prune drops send times older than the window plus margin. p.mu is held.
func (p *pacer) prune(account string, now time.Time) []time.Time {
	log := p.sent[account]
	cut := now.Add(-p.window - p.margin)
	i := 0
	for i < len(log) && log[i].Before(cut) {
		i++
	}
	log = log[i:]
	p.sent[account] = log
	return log
}

// acquire blocks until every account in accounts may send one more request,
// then logs it. Deliberate requests are logged without waiting.
func (p *pacer) acquire(ctx context.Context, accounts []string) error {
	deliberate := isDeliberate(ctx)
	for {
		p.mu.Lock()
		now := time.Now()
		var full string
		var wait time.Duration
		for _, a := range accounts {
			log := p.prune(a, now)
			if !deliberate && len(log) >= p.budget() {
				full = a
				// The oldest logged request leaves the window at this time.
				wait = max(wait, log[len(log)-p.budget()].Add(p.window+p.margin).Sub(now))
			}
		}
		if full == "" {
			for _, a := range accounts {
				p.sent[a] = append(p.sent[a], now)
			}
			p.requests.Add(1)
			p.mu.Unlock()
			return nil
		}
		p.mu.Unlock()
		if p.resetFn != nil {
			if err := p.resetFn(ctx, full); err != nil {
				return fmt.Errorf("reset the rate counter through the control API: %w", err)
			}
			p.forget(full)
			p.mu.Lock()
			p.resets++
			p.mu.Unlock()
			fmt.Fprintf(p.log, "conformance: budget of account %s spent; counter reset through the control API\n", mask(full))
			continue
		}
		if wait >= time.Second {
			fmt.Fprintf(p.log, "conformance: pacing: waiting %s for the rate-limit window of account %s (spec §8: %d per %s; %d requests so far)\n",
				wait.Round(100*time.Millisecond), mask(full), p.limit, p.window, p.requests.Load())
		}
		if err := p.sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// sleep waits d or until ctx ends, and adds d to the waited total. A long
// wait says every 15 s how much is left, so a CI log is never silent for a
// whole window.
func (p *pacer) sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	const every = 15 * time.Second
	end := time.Now().Add(d)
	t := time.NewTimer(d)
	defer t.Stop()
	tick := time.NewTicker(every)
	defer tick.Stop()
	for done := false; !done; {
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for the rate-limit window: %w", ctx.Err())
		case <-tick.C:
			fmt.Fprintf(p.log, "conformance: … %s left\n", time.Until(end).Round(time.Second))
		case <-t.C:
			done = true
		}
	}
	p.mu.Lock()
	p.waited += d
	p.mu.Unlock()
	return nil
}

// forget clears the log of an account whose counter was reset on the target.
func (p *pacer) forget(account string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.sent, account)
}

// observe records what a response tells about the server's clock (Date,
// one-second resolution, so half a second is added) and the round trip.
func (p *pacer) observe(sent, received time.Time, resp *http.Response) {
	p.mu.Lock()
	defer p.mu.Unlock()
	rtt := received.Sub(sent)
	if p.latency == 0 {
		p.latency = rtt
	} else {
		p.latency = (p.latency*7 + rtt) / 8
	}
	if resp == nil {
		return
	}
	d, err := http.ParseTime(resp.Header.Get("Date"))
	if err != nil {
		return
	}
	lo, hi := d.Sub(received), d.Add(time.Second).Sub(sent)
	if p.hasSkew && max(lo, p.skewLo) <= min(hi, p.skewHi) {
		p.skewLo, p.skewHi = max(lo, p.skewLo), min(hi, p.skewHi)
		return
	}
	// First Date, or one that contradicts the earlier ones (the server's
	// clock was set): start over from this one.
	p.skewLo, p.skewHi, p.hasSkew = lo, hi, true
}

// sameServerWindow reports whether a run of requests, from the first one's
// send time to the last one's receive time, fell in one window aligned to
// the server's clock. first and last are the Date headers of the first and
// last answers; with the skew learnt from all earlier answers they bound the
// server's time. known is false when no Date header was seen.
func (p *pacer) sameServerWindow(from, to time.Time, first, last string) (same, known bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	d1, err1 := http.ParseTime(first)
	d2, err2 := http.ParseTime(last)
	if !p.hasSkew && (err1 != nil || err2 != nil) {
		return false, false
	}
	start, end := from.Add(p.skewLo), to.Add(p.skewHi)
	if !p.hasSkew {
		start, end = d1, d2.Add(time.Second)
	}
	if err1 == nil && d1.After(start) {
		start = d1
	}
	if err2 == nil && d2.Add(time.Second).Before(end) {
		end = d2.Add(time.Second)
	}
	// end is exclusive: the last request was served before it.
	return start.UnixNano()/int64(p.window) == (end.UnixNano()-1)/int64(p.window), true
}

// waitFresh blocks until no request of account was sent within the last
// window plus margin, then, when the server's clock is known, until the
// current clock-aligned window has room for a burst of n requests, so that
// the burst and the request after it fall in one window under both readings
// of spec §8.
func (p *pacer) waitFresh(ctx context.Context, account string, n int) error {
	p.mu.Lock()
	now := time.Now()
	log := p.prune(account, now)
	var wait time.Duration
	if len(log) > 0 {
		wait = log[len(log)-1].Add(p.window + p.margin).Sub(now)
	}
	p.mu.Unlock()
	if wait > 0 {
		fmt.Fprintf(p.log, "conformance: waiting %s for a fresh rate-limit window of account %s (spec §8)\n", wait.Round(100*time.Millisecond), mask(account))
		if err := p.sleep(ctx, wait); err != nil {
			return err
		}
	}
	p.mu.Lock()
	hasSkew, lo, hi, latency := p.hasSkew, p.skewLo, p.skewHi, p.latency
	p.mu.Unlock()
	if !hasSkew {
		return nil
	}
	// Time the burst needs, with room for what the server's clock is not
	// known to better than.
	need := latency*time.Duration(n+3) + 2*p.margin + (hi - lo)
	if need >= p.window {
		return nil // no aligned window can hold it; the check reports an inconclusive run
	}
	// The window the server may already be in, at its latest estimate.
	server := time.Now().Add(hi)
	left := p.window - time.Duration(server.UnixNano()%int64(p.window))
	if left >= need {
		return nil
	}
	wait = left + (hi - lo) + p.margin
	fmt.Fprintf(p.log, "conformance: waiting %s for the server's next clock-aligned window (spec §8)\n", wait.Round(100*time.Millisecond))
	return p.sleep(ctx, wait)
}

// stats returns the totals the report shows.
func (p *pacer) stats() (requests int64, waited time.Duration, resets int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.requests.Load(), p.waited, p.resets
}

// pacedTransport spends one pacer slot per partner request and feeds the
// pacer the server's clock.
type pacedTransport struct {
	base    http.RoundTripper
	pacer   *pacer
	primary Account
	second  Account
}

// CloseIdleConnections passes the call on to the wrapped transport, so that
// http.Client.CloseIdleConnections reaches it.
func (t *pacedTransport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// accounts names whose budget a request spends. Anything not clearly the
// second account's counts as the primary's, and a request mixing both
// accounts' credentials counts for both: the suite cannot know how the
// target attributes it.
func (t *pacedTransport) accounts(r *http.Request) []string {
	key, id := r.Header.Get("x-api-key"), r.Header.Get("x-account-id")
	var out []string
	if t.second.complete() && (key == t.second.APIKey || id == t.second.AccountID) {
		out = append(out, t.second.AccountID)
		if key == t.primary.APIKey || id == t.primary.AccountID {
			out = append(out, t.primary.AccountID)
		}
		return out
	}
	return []string{t.primary.AccountID}
}

// RoundTrip implements http.RoundTripper.
func (t *pacedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if err := t.pacer.acquire(r.Context(), t.accounts(r)); err != nil {
		return nil, err
	}
	sent := time.Now()
	resp, err := t.base.RoundTrip(r)
	t.pacer.observe(sent, time.Now(), resp)
	return resp, err
}
