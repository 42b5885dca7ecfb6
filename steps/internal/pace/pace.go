// Package pace keeps the suite's requests within the target's rate limit
// (spec §8) and never blames the target for the suite's own state.
//
// A Pacer logs the send time of every request per account and holds a
// request back while the account already sent its budget (one below the
// limit) within the last window plus a margin. Transport puts every partner
// request through the Pacer and, when a request that does not test §8 meets
// a 429 anyway (the budget was spent before the run by another client, a
// previous run or a developer's curl), waits and sends it again: first for
// the target's Retry-After when it sends a usable one, then for a full
// window in which the suite sends nothing. Only a 429 after such a quiet
// window is passed on as a finding of §8 (Note.Finding).
package pace

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// deliberateKey marks a request context whose request spends the budget on
// purpose (the @rate-limit scenarios): it is never held back, and a 429 it
// meets is the answer under test, never retried.
type deliberateKey struct{}

// Deliberate marks ctx's requests as spending the budget on purpose.
func Deliberate(ctx context.Context) context.Context {
	return context.WithValue(ctx, deliberateKey{}, true)
}

func isDeliberate(ctx context.Context) bool {
	v, _ := ctx.Value(deliberateKey{}).(bool)
	return v
}

// Wait is one wait for the target's budget that a request which does not
// test §8 had to make after an unexpected 429. It is also what the
// reports show of it (result.BudgetWait is this type), so its JSON names
// are the reports'.
type Wait struct {
	// Account is the masked account whose budget was spent.
	Account string `json:"account"`
	// Reason says what the wait was based on: the target's Retry-After, a
	// full quiet window, or a reset through the simulator's control API.
	Reason string `json:"reason"`
	// Duration is how long the suite waited (zero for a reset).
	Duration time.Duration `json:"durationNs"`
	// At is when the wait began.
	At time.Time `json:"at"`
}

// Pacer paces the requests of one run. Its zero value is not usable: use
// New.
type Pacer struct {
	limit  int
	window time.Duration
	margin time.Duration
	// Reset, when set, clears an account's counter on the target (the
	// simulator's control API) instead of waiting for the window.
	Reset func(ctx context.Context, accountID string) error
	// Mask hides an account id in log lines. May be nil.
	Mask func(string) string
	log  io.Writer

	mu       sync.Mutex
	requests int64
	sent     map[string][]time.Time
	// ended is, by account, when the last attempt of one of its requests
	// ended (answered or not): the latest instant the target may have
	// counted it. A request the target was slow to take in (a loaded
	// machine, a new TLS connection per request) is counted after it was
	// sent, by more than the margin; a fresh window is waited for from
	// here too, so that the suite never spends, unawares, a slot the
	// target still counts.
	ended  map[string]time.Time
	waited time.Duration
	waits  []Wait
	resets int
	// skewLo and skewHi bound the server's clock minus ours, narrowed by
	// every Date header (one-second resolution): a response dated D, sent
	// at s and received at r, was stamped at a server time in [D, D+1s)
	// and a local time in [s, r].
	skewLo, skewHi time.Duration
	hasSkew        bool
	latency        time.Duration // moving average of round trips
}

// New returns a pacer for a target that allows limit requests per window;
// log receives the lines that say why the run waits. It panics when limit or
// window is not positive (a programmer's error: the runner validates them).
func New(limit int, window time.Duration, log io.Writer) *Pacer {
	if limit <= 0 || window <= 0 {
		panic("pace.New: limit and window must be positive")
	}
	if log == nil {
		log = io.Discard
	}
	margin := window / 20
	margin = max(margin, 250*time.Millisecond)
	margin = min(margin, 2*time.Second)
	return &Pacer{limit: limit, window: window, margin: margin, log: log, sent: make(map[string][]time.Time), ended: make(map[string]time.Time)}
}

// Limit is the number of requests per window the run assumes.
func (p *Pacer) Limit() int { return p.limit }

// Window is the window the run assumes.
func (p *Pacer) Window() time.Duration { return p.window }

// Margin is added to every window the pacer waits for, for the latency
// between our clock and the server's.
func (p *Pacer) Margin() time.Duration { return p.margin }

// Logf writes one progress line.
func (p *Pacer) Logf(format string, args ...any) {
	fmt.Fprintf(p.log, "conformance: "+format+"\n", args...)
}

func (p *Pacer) masked(account string) string {
	if p.Mask == nil {
		return account
	}
	return p.Mask(account)
}

// budget is how many requests per window the pacer lets through outside the
// @rate-limit scenarios: one below the limit, as a safety slot.
func (p *Pacer) budget() int { return max(1, p.limit-1) }

// prune drops send times older than the window plus margin. p.mu is held.
func (p *Pacer) prune(account string, now time.Time) []time.Time {
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
func (p *Pacer) acquire(ctx context.Context, accounts []string) error {
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
			p.requests++
			p.mu.Unlock()
			return nil
		}
		p.mu.Unlock()
		if p.Reset != nil {
			if err := p.reset(ctx, full); err != nil {
				return err
			}
			p.Logf("budget of account %s spent; counter reset through the control API", p.masked(full))
			continue
		}
		if wait >= time.Second {
			p.Logf("pacing: waiting %s for the rate-limit window of account %s (spec §8: %d per %s; %d requests so far)",
				wait.Round(100*time.Millisecond), p.masked(full), p.limit, p.window, p.Requests())
		}
		if err := p.Sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// reset clears an account's counter through Reset and forgets its log.
func (p *Pacer) reset(ctx context.Context, account string) error {
	if err := p.Reset(ctx, account); err != nil {
		return fmt.Errorf("reset the rate counter through the control API: %w", err)
	}
	p.Forget(account)
	p.mu.Lock()
	p.resets++
	p.mu.Unlock()
	return nil
}

// ResetBudget empties an account's counter through the control API, when
// the run has one, and reports whether it did.
func (p *Pacer) ResetBudget(ctx context.Context, account string) (bool, error) {
	if p.Reset == nil {
		return false, nil
	}
	return true, p.reset(ctx, account)
}

// Sleep waits d or until ctx ends, and adds d to the waited total. A long
// wait says every 15 s how much is left, so a CI log is never silent for a
// whole window.
func (p *Pacer) Sleep(ctx context.Context, d time.Duration) error {
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
			p.Logf("… %s left", time.Until(end).Round(time.Second))
		case <-t.C:
			done = true
		}
	}
	p.mu.Lock()
	p.waited += d
	p.mu.Unlock()
	return nil
}

// Forget clears the log of an account whose counter was reset on the
// target.
func (p *Pacer) Forget(account string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.sent, account)
	delete(p.ended, account)
}

// end records that an attempt of a request of accounts ended at t.
func (p *Pacer) end(accounts []string, t time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, a := range accounts {
		if t.After(p.ended[a]) {
			p.ended[a] = t
		}
	}
}

// observe records what a response tells about the server's clock (Date,
// one-second resolution) and the round trip.
func (p *Pacer) observe(sent, received time.Time, resp *http.Response) {
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

// SameServerWindow reports whether a run of requests, from the first one's
// send time to the last one's receive time, fell in one window aligned to
// the server's clock. first and last are the Date headers of the first and
// last answers; with the skew learnt from all earlier answers they bound the
// server's time. known is false when no Date header was seen.
func (p *Pacer) SameServerWindow(from, to time.Time, first, last string) (same, known bool) {
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

// WaitFresh blocks until no request of account was sent, nor answered,
// within the last window plus margin (the target counted it somewhere
// between the two), then, when the server's clock is known, until the
// current clock-aligned window has room for a burst of n requests, so that
// the burst and the request after it fall in one window under both readings
// of spec §8.
func (p *Pacer) WaitFresh(ctx context.Context, account string, n int) error {
	p.mu.Lock()
	now := time.Now()
	log := p.prune(account, now)
	var last time.Time
	if len(log) > 0 {
		last = log[len(log)-1]
	}
	if e := p.ended[account]; e.After(last) {
		last = e
	}
	var wait time.Duration
	if !last.IsZero() {
		wait = last.Add(p.window + p.margin).Sub(now)
	}
	p.mu.Unlock()
	if wait > 0 {
		p.Logf("waiting %s for a fresh rate-limit window of account %s (spec §8)", wait.Round(100*time.Millisecond), p.masked(account))
		if err := p.Sleep(ctx, wait); err != nil {
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
	p.Logf("waiting %s for the server's next clock-aligned window (spec §8)", wait.Round(100*time.Millisecond))
	return p.Sleep(ctx, wait)
}

// Requests is the number of requests the pacer let through.
func (p *Pacer) Requests() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.requests
}

// Waited is the total time the run waited for rate-limit windows, pacing
// and unexpected 429s together.
func (p *Pacer) Waited() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.waited
}

// Waits lists the waits that unexpected 429s caused, in order.
func (p *Pacer) Waits() []Wait {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Wait(nil), p.waits...)
}

func (p *Pacer) addWait(w Wait) {
	p.mu.Lock()
	p.waits = append(p.waits, w)
	p.mu.Unlock()
}

// lastSent is the latest send time logged for any of accounts.
func (p *Pacer) lastSent(accounts []string) time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	var last time.Time
	for _, a := range accounts {
		if log := p.sent[a]; len(log) > 0 && log[len(log)-1].After(last) {
			last = log[len(log)-1]
		}
	}
	return last
}

// sentInWindow is the most requests the suite sent for any of accounts in
// the last window.
func (p *Pacer) sentInWindow(accounts []string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	n := 0
	for _, a := range accounts {
		c := 0
		for _, t := range p.sent[a] {
			if now.Sub(t) <= p.window {
				c++
			}
		}
		n = max(n, c)
	}
	return n
}
