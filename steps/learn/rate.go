package learn

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// rateAttempts is how often the rate-limit probe is tried when its burst
// did not fit in one window.
const rateAttempts = 3

// serverClock estimates the time the target judges windows by: the
// simulator's account clock through its control API (moved forward
// instead of waited for), else ours.
type serverClock struct {
	l      *learner
	offset time.Duration
}

func (c *serverClock) at(t time.Time) time.Time { return t.Add(c.offset) }
func (c *serverClock) now() time.Time           { return c.at(time.Now()) }

// until lets the server's clock reach t: the simulator's is advanced, any
// other target's is waited for.
func (c *serverClock) until(ctx context.Context, t time.Time) error {
	d := t.Sub(c.now())
	if d <= 0 {
		return nil
	}
	if ctl := c.l.env.Control; ctl != nil {
		ck, err := ctl.AdvanceAccountClock(ctx, c.l.env.Primary.AccountID, d)
		if err != nil {
			return fmt.Errorf("advance the simulator's clock: %w", err)
		}
		c.offset = time.Until(ck.Now)
		return nil
	}
	return c.l.env.Pacer.Sleep(ctx, d)
}

// rtt is the median round trip of the probes so far.
func (l *learner) rtt() time.Duration {
	var ds []time.Duration
	for _, x := range l.exchanges() {
		ds = append(ds, x.recv.Sub(x.sent))
	}
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// rateRun is what one try of the rate-limit probe saw.
type rateRun struct {
	first       *exch   // the first request of a fresh window (t1)
	unauth, bad []*exch // wrong secret; {} Campaign Stats
	valid       int     // valid requests served after them
	refused     *exch   // the first 429
	limitFirst  *exch   // {} Campaign Stats while spent
	mid         *exch   // late in the window, before any window ends
	afterClock  *exch   // at the clock's next window boundary + margin
	after1      *exch   // at t1 + W + margin
	after2      *exch
}

// rate learns what §8 leaves open. Plan (W the window, L the limit, m a
// margin of min(1 s, W/10) plus the round trip): from a fresh budget, at
// a clock boundary B plus 2m send one request (t1); 2m later two with a
// wrong secret and five {} Campaign Stats, then valid requests until the
// first 429: L-1-2a-5b were served, a and b telling whether 401s and 400s
// count; one {} Stats then tells whether the limit is checked first. At
// B+W-2m one request must still be refused (no window has ended; served,
// the limit refills as it goes and fits no window). At B+W+m one request: served only under clock-aligned windows (a window
// that started at t1, or a sliding one, still holds every request). At
// t1+W+m two: a sliding window has dropped t1 alone (L-1 counted, served,
// then refused) unless it counts refused requests (refused at once); a
// window that started at t1 is over (both served).
func (l *learner) rate(ctx context.Context) error {
	var r *rateRun
	var why string
	for attempt := 1; attempt <= rateAttempts; attempt++ {
		var err error
		r, why, err = l.rateTry(ctx)
		if err != nil {
			return err
		}
		if why == "" {
			break
		}
		l.logf("learning the profile: the rate-limit probe could not decide (%s)", why)
	}
	if ctl := l.env.Control; ctl != nil {
		// The simulator's account clock ran ahead for the probe: put it
		// back, and the counter its requests filled with it.
		if _, err := ctl.ResetAccountClock(ctx, l.env.Primary.AccountID); err != nil {
			return fmt.Errorf("reset the simulator's account clock: %w", err)
		}
		if _, err := l.env.Pacer.ResetBudget(ctx, l.env.Primary.AccountID); err != nil {
			return err
		}
	}
	if why != "" {
		l.rateUnknown(why, r)
		return nil
	}
	l.rateRead(r)
	return nil
}

// rateTry is one try; why says why it cannot decide (empty: it can).
func (l *learner) rateTry(ctx context.Context) (*rateRun, string, error) {
	acct := l.env.Primary.AccountID
	w, limit := l.env.RateWindow, l.env.RateLimit
	reset, err := l.env.Pacer.ResetBudget(ctx, acct)
	if err != nil {
		return nil, "", err
	}
	if !reset {
		// No burst size: the probe finds its own clock-aligned window.
		if err := l.env.Pacer.WaitFresh(ctx, acct, 0); err != nil {
			return nil, "", err
		}
	}
	c := &serverClock{l: l}
	if ctl := l.env.Control; ctl != nil {
		ck, err := ctl.AccountClock(ctx, acct)
		if err != nil {
			return nil, "", fmt.Errorf("read the simulator's clock: %w", err)
		}
		c.offset = time.Until(ck.Now)
	}
	m := min(time.Second, w/10) + l.rtt()
	// The clock-aligned boundary the burst starts after: the one just
	// passed when t1 can still be sent 2m after it, else the next.
	now := c.now()
	b := now.Truncate(w)
	if !now.Before(b.Add(2 * m)) {
		b = b.Add(w)
	}
	if err := c.until(ctx, b.Add(2*m)); err != nil {
		return nil, "", err
	}
	valid := req{path: spec.PathCampaignList, body: listBody, deliberate: true}
	r := &rateRun{}
	if r.first, err = l.send(ctx, valid); err != nil {
		return nil, "", err
	}
	if r.first.status != http.StatusOK {
		return r, fmt.Sprintf("the first request of a fresh window was answered %d", r.first.status), nil
	}
	t1 := c.at(r.first.sent)
	if err := c.until(ctx, t1.Add(2*m)); err != nil {
		return nil, "", err
	}
	wrong := l.env.Primary
	wrong.APISecret += "-wrong"
	for range 2 {
		x, err := l.send(ctx, req{path: spec.PathCampaignList, body: listBody, acct: wrong, deliberate: true})
		if err != nil {
			return nil, "", err
		}
		r.unauth = append(r.unauth, x)
	}
	for range 5 {
		x, err := l.send(ctx, req{path: spec.PathCampaignStats, body: `{}`, deliberate: true})
		if err != nil {
			return nil, "", err
		}
		r.bad = append(r.bad, x)
	}
	for range 2*limit + 10 {
		x, err := l.send(ctx, valid)
		if err != nil {
			return nil, "", err
		}
		if x.status == http.StatusTooManyRequests {
			r.refused = x
			break
		}
		if x.status != http.StatusOK {
			return r, fmt.Sprintf("a valid request while spending the budget was answered %d", x.status), nil
		}
		r.valid++
	}
	if r.refused == nil {
		return r, fmt.Sprintf("%d requests in a row were served, no 429", r.valid+1), nil
	}
	if r.limitFirst, err = l.send(ctx, req{path: spec.PathCampaignStats, body: `{}`, deliberate: true}); err != nil {
		return nil, "", err
	}
	if end := c.at(r.limitFirst.recv); !end.Before(b.Add(w - m)) {
		return r, fmt.Sprintf("the burst ended %s after the window began, too late in a %s window", end.Sub(b).Round(time.Millisecond), w), nil
	}
	// Late in the window no window of the three has ended: a request
	// served there means a limit that refills as it goes (a token bucket).
	if err := c.until(ctx, b.Add(w-2*m)); err != nil {
		return nil, "", err
	}
	if r.mid, err = l.send(ctx, valid); err != nil {
		return nil, "", err
	}
	if end := c.at(r.mid.recv); !end.Before(b.Add(w - m)) {
		return r, fmt.Sprintf("the request late in the window was answered %s after it began, too late in a %s window", end.Sub(b).Round(time.Millisecond), w), nil
	}
	if err := c.until(ctx, b.Add(w+m)); err != nil {
		return nil, "", err
	}
	if r.afterClock, err = l.send(ctx, valid); err != nil {
		return nil, "", err
	}
	if r.afterClock.status != http.StatusTooManyRequests {
		return r, "", nil
	}
	if err := c.until(ctx, t1.Add(w+m)); err != nil {
		return nil, "", err
	}
	if r.after1, err = l.send(ctx, valid); err != nil {
		return nil, "", err
	}
	if r.after2, err = l.send(ctx, valid); err != nil {
		return nil, "", err
	}
	return r, "", nil
}

// rateUnknown marks every rate choice Unknown.
func (l *learner) rateUnknown(why string, r *rateRun) {
	var ev []profile.Exchange
	if r != nil {
		ev = l.evidences(r.first, r.refused, r.limitFirst)
	}
	l.p.Rate = profile.Rate{
		Window: unknown[string](why, ev...), CountsRefused: unknown[bool](why), CountsBadRequests: unknown[bool](why),
		CountsUnauthenticated: unknown[bool](why), LimitFirst: unknown[bool](why),
		RetryAfter: unknown[profile.RetryAfter](why), Headers: unknown[profile.RateHeaders](why),
		RefusalContentType: unknown[string](why),
	}
	if r != nil && r.refused != nil {
		l.p.Rate.RetryAfter = l.retryAfter(r.refused)
		l.p.Rate.Headers = l.rateHeaders(r.first, r.refused)
		l.p.Rate.RefusalContentType = l.refusalContentType(r.refused)
	}
}

// rateRead reads a try that decides.
func (l *learner) rateRead(r *rateRun) {
	limit := l.env.RateLimit
	p := &l.p.Rate
	countEv := l.evidences(append(append(append([]*exch{r.first}, r.unauth...), r.bad...), r.refused)...)
	a, b, fits := -1, -1, false
	for _, ab := range [][2]int{{0, 0}, {1, 0}, {0, 1}, {1, 1}} {
		if r.valid == limit-1-2*ab[0]-5*ab[1] {
			a, b, fits = ab[0], ab[1], true
		}
	}
	statuses := func(xs []*exch, want int) bool {
		return !slices.ContainsFunc(xs, func(x *exch) bool { return x.status != want })
	}
	switch {
	case !fits:
		why := fmt.Sprintf("after 1 request, 2 with a wrong secret and 5 invalid ones, %d valid requests were served before the first 429: no count of the %d per %s limit fits", r.valid, limit, l.env.RateWindow)
		p.CountsUnauthenticated, p.CountsBadRequests = unknown[bool](why, countEv...), unknown[bool](why, countEv...)
	default:
		p.CountsUnauthenticated = profile.Choice[bool]{Value: a == 1, Evidence: countEv}
		p.CountsBadRequests = profile.Choice[bool]{Value: b == 1, Evidence: countEv}
		if !statuses(r.unauth, http.StatusUnauthorized) {
			p.CountsUnauthenticated = unknown[bool](fmt.Sprintf("the wrong secret was answered %d, not 401", r.unauth[0].status), countEv...)
		}
		if !statuses(r.bad, http.StatusBadRequest) {
			p.CountsBadRequests = unknown[bool](fmt.Sprintf("the {} Campaign Stats was answered %d, not 400", r.bad[0].status), countEv...)
		}
	}
	switch r.limitFirst.status {
	case http.StatusTooManyRequests:
		p.LimitFirst = profile.Choice[bool]{Value: true, Evidence: l.evidences(r.limitFirst)}
	case http.StatusBadRequest:
		p.LimitFirst = profile.Choice[bool]{Value: false, Evidence: l.evidences(r.limitFirst)}
	default:
		p.LimitFirst = unknown[bool](fmt.Sprintf("an invalid body with the budget spent was answered %d", r.limitFirst.status), l.evidence(r.limitFirst))
	}
	p.RetryAfter = l.retryAfter(r.refused)
	p.Headers = l.rateHeaders(r.first, r.refused)
	p.RefusalContentType = l.refusalContentType(r.refused)
	winEv := l.evidences(r.first, r.refused, r.mid, r.afterClock, r.after1, r.after2)
	fixed := "a fixed window does not show it"
	ok, no := http.StatusOK, http.StatusTooManyRequests
	switch {
	case r.mid.status != no:
		why := fmt.Sprintf("a request late in the window, before any window could end, was answered %d, not 429", r.mid.status)
		if r.mid.status == ok {
			why += ": the limit refills as it goes (a token bucket?), none of the windows a profile can hold"
		}
		p.Window, p.CountsRefused = unknown[string](why, winEv...), unknown[bool](why, winEv...)
	case r.afterClock.status == ok:
		p.Window = profile.Choice[string]{Value: profile.WindowFixedClock, Evidence: winEv}
		p.CountsRefused = unknown[bool](fixed)
	case r.after1 == nil:
		p.Window = unknown[string](fmt.Sprintf("the request after the clock's window boundary was answered %d", r.afterClock.status), winEv...)
		p.CountsRefused = unknown[bool]("the window is not known")
	case r.after1.status == ok && r.after2.status == ok:
		p.Window = profile.Choice[string]{Value: profile.WindowFixedFirst, Evidence: winEv}
		p.CountsRefused = unknown[bool](fixed)
	case r.after1.status == ok && r.after2.status == no:
		p.Window = profile.Choice[string]{Value: profile.WindowSliding, Evidence: winEv}
		p.CountsRefused = profile.Choice[bool]{Value: false, Evidence: winEv}
	case r.after1.status == no:
		p.Window = profile.Choice[string]{Value: profile.WindowSliding, Evidence: winEv}
		p.CountsRefused = profile.Choice[bool]{Value: true, Evidence: winEv}
		if r.limitFirst.status == http.StatusBadRequest && (!p.CountsBadRequests.Known() || p.CountsBadRequests.Value) {
			// The 400 answered with the budget spent may have counted.
			p.CountsRefused = unknown[bool]("the invalid request answered 400 with the budget spent may have been counted instead", winEv...)
		}
	default:
		why := fmt.Sprintf("one window after the first request, two requests were answered %d and %d", r.after1.status, r.after2.status)
		p.Window, p.CountsRefused = unknown[string](why, winEv...), unknown[bool](why, winEv...)
	}
}

// retryAfter reads a 429's Retry-After (RFC 9110 §10.2.3).
// refusalContentType is a 429's Content-Type, exactly.
func (l *learner) refusalContentType(x *exch) profile.Choice[string] {
	if x.status != http.StatusTooManyRequests {
		return unknown[string](fmt.Sprintf("no 429 was met (the last refusal was %d)", x.status), l.evidence(x))
	}
	return profile.Choice[string]{Value: x.header.Get("Content-Type"), Evidence: l.evidences(x)}
}

func (l *learner) retryAfter(x *exch) profile.Choice[profile.RetryAfter] {
	v := x.header.Get("Retry-After")
	ev := l.evidences(x)
	if v == "" {
		return profile.Choice[profile.RetryAfter]{Value: profile.RetryAfter{Present: false}, Evidence: ev}
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return profile.Choice[profile.RetryAfter]{Value: profile.RetryAfter{Present: true, Format: profile.RetryDeltaSeconds}, Evidence: ev}
	}
	if _, err := http.ParseTime(v); err == nil {
		return profile.Choice[profile.RetryAfter]{Value: profile.RetryAfter{Present: true, Format: profile.RetryHTTPDate}, Evidence: ev}
	}
	return unknown[profile.RetryAfter](fmt.Sprintf("Retry-After %q is neither delta-seconds nor an HTTP-date", v), ev...)
}

// rateHeaderNames are the rate-limit headers of h, canonical and sorted.
func rateHeaderNames(h http.Header) []string {
	var out []string
	for k := range h {
		lk := strings.ToLower(k)
		if strings.Contains(lk, "ratelimit") || strings.Contains(lk, "rate-limit") || lk == "retry-after" {
			out = append(out, http.CanonicalHeaderKey(k))
		}
	}
	slices.Sort(out)
	return out
}

// rateHeaders reads the rate-limit headers of a 200 and a 429.
func (l *learner) rateHeaders(ok, refused *exch) profile.Choice[profile.RateHeaders] {
	rh := profile.RateHeaders{OnSuccess: rateHeaderNames(ok.header), OnRefusal: rateHeaderNames(refused.header)}
	var names []string
	for _, n := range append(slices.Clone(rh.OnSuccess), rh.OnRefusal...) {
		if n != "Retry-After" {
			names = append(names, n)
		}
	}
	has := func(pred func(string) bool) bool { return slices.ContainsFunc(names, pred) }
	switch {
	case len(names) == 0:
		rh.Scheme = profile.SchemeNone
	case has(func(n string) bool { return strings.HasPrefix(n, "X-Ratelimit-") }):
		rh.Scheme = profile.SchemeXRateLimit
	case has(func(n string) bool { return n == "Ratelimit" || n == "Ratelimit-Policy" }):
		rh.Scheme = profile.SchemeRateLimit
	default:
		rh.Scheme = profile.SchemeOther
	}
	for _, x := range []*exch{ok, refused} {
		if v := x.header.Get("X-Ratelimit-Reset"); v != "" && rh.Reset == "" {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				// Seconds since 1970 are above 10^9 since 2001; a delta is
				// at most a window.
				rh.Reset = profile.ResetDelta
				if n > 1e9 {
					rh.Reset = profile.ResetEpoch
				}
			}
		}
	}
	return profile.Choice[profile.RateHeaders]{Value: rh, Evidence: l.evidences(ok, refused)}
}
