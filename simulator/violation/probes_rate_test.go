package violation_test

import (
	"net/http"
	"strconv"
	"time"

	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/simulator/violation"
)

// limit is the rate limit the rate probes configure both simulators with.
const limit = 6

// exhaust spends the primary account's whole budget on both simulators.
func (p *pair) exhaust() {
	p.t.Helper()
	spend(p.t, p.f, page(), limit)
	spend(p.t, p.b, page(), limit)
}

// at429 exhausts the budget, then expects the next request of c to be the
// faithful 429 as edit changes it.
func (p *pair) at429(c call, edit func(a *answer)) {
	p.t.Helper()
	p.exhaust()
	p.expect(c, func(a *answer) {
		if a.Status != http.StatusTooManyRequests {
			p.t.Fatalf("faithful simulator: %s, want a 429", a)
		}
		edit(a)
	})
}

// Spec §8 and its §7 answer.
func init() {
	register(map[violation.Name]probe{
		"rate-off-by-one": {rateLimit: limit, run: func(p *pair) {
			p.exhaust()
			p.status(page(), http.StatusTooManyRequests, http.StatusOK)
			p.refused(page(), http.StatusTooManyRequests)
		}},
		"rate-limit-too-low": {rateLimit: limit, run: func(p *pair) {
			spend(p.t, p.f, page(), limit/2)
			spend(p.t, p.b, page(), limit/2)
			p.status(page(), http.StatusOK, http.StatusTooManyRequests)
		}},
		"rate-limit-99": {rateLimit: limit, run: func(p *pair) {
			spend(p.t, p.f, page(), limit-1)
			spend(p.t, p.b, page(), limit-1)
			p.status(page(), http.StatusOK, http.StatusTooManyRequests)
		}},
		"rate-never-frees": {rateLimit: limit, run: func(p *pair) {
			p.exhaust()
			p.refused(page(), http.StatusTooManyRequests)
			p.f.clock.Advance(spec.RateWindow + time.Second)
			p.b.clock.Advance(spec.RateWindow + time.Second)
			p.status(page(), http.StatusOK, http.StatusTooManyRequests)
			p.f.clock.Advance(24 * time.Hour)
			p.b.clock.Advance(24 * time.Hour)
			p.status(page(), http.StatusOK, http.StatusTooManyRequests)
		}},
		"rate-window-double": {rateLimit: limit, run: func(p *pair) {
			p.exhaust()
			p.f.clock.Advance(spec.RateWindow + time.Second)
			p.b.clock.Advance(spec.RateWindow + time.Second)
			p.status(page(), http.StatusOK, http.StatusTooManyRequests)
			p.b.clock.Advance(spec.RateWindow)
			if a := p.b.do(page()); a.Status != http.StatusOK {
				p.t.Fatalf("after two windows: %s", a)
			}
		}},
		"rate-per-operation": {rateLimit: limit, run: func(p *pair) {
			p.exhaust()
			p.refused(page(), http.StatusTooManyRequests)
			p.status(stats(p.smsCampaign().ID), http.StatusTooManyRequests, http.StatusOK)
			p.status(contact(validContact), http.StatusTooManyRequests, http.StatusOK)
		}},
		"rate-global": {rateLimit: limit, run: func(p *pair) {
			p.exhaust()
			p.status(page().asAccount(1), http.StatusOK, http.StatusTooManyRequests)
		}},
		"rate-contact-uncounted": {rateLimit: limit, run: func(p *pair) {
			spend(p.t, p.f, contact(validContact), limit)
			spend(p.t, p.b, contact(validContact), limit)
			p.status(contact(validContact), http.StatusTooManyRequests, http.StatusOK)
			p.status(page(), http.StatusTooManyRequests, http.StatusOK)
			spend(p.t, p.b, page(), limit-1)
			p.refused(page(), http.StatusTooManyRequests)
		}},
		"rate-stats-uncounted": {rateLimit: limit, run: func(p *pair) {
			c := stats(p.smsCampaign().ID)
			spend(p.t, p.f, c, limit)
			spend(p.t, p.b, c, limit)
			p.status(c, http.StatusTooManyRequests, http.StatusOK)
			p.status(page(), http.StatusTooManyRequests, http.StatusOK)
			spend(p.t, p.b, page(), limit-1)
			p.refused(page(), http.StatusTooManyRequests)
		}},
		"rate-status-503": {rateLimit: limit, run: func(p *pair) {
			p.at429(page(), func(a *answer) { a.Status = http.StatusServiceUnavailable })
		}},
		"rate-body-shape": {rateLimit: limit, run: func(p *pair) {
			p.at429(page(), func(a *answer) { a.Doc = map[string]any{"message": spec.MsgRateLimit} })
		}},
		"rate-message": {rateLimit: limit, run: func(p *pair) {
			p.at429(page(), func(a *answer) { a.obj()["error"] = "Too many requests" })
		}},
		"rate-429-extra-field": {rateLimit: limit, run: func(p *pair) {
			p.at429(page(), func(a *answer) {
				secs, err := strconv.Atoi(a.Header.Get("Retry-After"))
				if err != nil {
					p.t.Fatalf("Retry-After %q", a.Header.Get("Retry-After"))
				}
				a.obj()["retryAfter"] = num(int64(secs))
			})
		}},
		"rate-429-label": {rateLimit: limit, run: func(p *pair) {
			p.at429(page(), func(a *answer) { a.Type = textPlain })
		}},
		"rate-429-message-contact": {rateLimit: limit, run: func(p *pair) {
			p.at429(contact(validContact), func(a *answer) { a.obj()["error"] = "Too many requests, slow down" })
			p.refused(page(), http.StatusTooManyRequests)
			p.refused(stats(1), http.StatusTooManyRequests)
		}},
	})
}
