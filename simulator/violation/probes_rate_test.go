package violation_test

import (
	"net/http"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
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
		"rate-never-frees": {rateLimit: limit, run: func(p *pair) {
			p.exhaust()
			p.refused(page(), http.StatusTooManyRequests)
			p.f.clock.advance(simulator.DefaultRateWindow + time.Second)
			p.b.clock.advance(simulator.DefaultRateWindow + time.Second)
			p.status(page(), http.StatusOK, http.StatusTooManyRequests)
			p.f.clock.advance(24 * time.Hour)
			p.b.clock.advance(24 * time.Hour)
			p.status(page(), http.StatusOK, http.StatusTooManyRequests)
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
		"rate-status-503": {rateLimit: limit, run: func(p *pair) {
			p.at429(page(), func(a *answer) { a.Status = http.StatusServiceUnavailable })
		}},
		"rate-body-shape": {rateLimit: limit, run: func(p *pair) {
			p.at429(page(), func(a *answer) { a.Doc = map[string]any{"message": simulator.MsgRateLimit} })
		}},
		"rate-message": {rateLimit: limit, run: func(p *pair) {
			p.at429(page(), func(a *answer) { a.obj()["error"] = "Too many requests" })
		}},
	})
}
