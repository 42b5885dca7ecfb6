package main

// Spec §8 over time and under concurrency (issue 27), from outside: a
// limiter whose window is shorter than the one the run is told, or whose
// counter is read and written in two steps, fails §8 and nothing else; the
// windows §8 allows (sliding, fixed and aligned to the clock, opened by the
// first request; counting refused requests or not) pass. The runs know no
// control API: they wait for real windows, short ones, and select only the
// @rate-limit scenario to keep CI time low.

import (
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// rateTimeWindow is the window the runs of this file are told: short, so
// that CI waits seconds, and long enough that the probes late in it (less
// the Date header's one-second resolution) come well after a window half
// as long has freed the budget.
const rateTimeWindow = 6 * time.Second

// rateTimeTags selects the scenario of §8 that spends the budget.
const rateTimeTags = "@normative && @rate-limit"

// altRaceYield is how long the racy counter of the alternative
// implementation waits between reading an account's count and writing it
// back: time for the other requests in flight to be counted meanwhile.
const altRaceYield = 5 * time.Millisecond

// admitRacy is admit as a counter kept in a store without transactions:
// read the account's count, yield, write back what was read plus this
// request. One request at a time it is admit; a request counted while
// another waits is lost, so requests in flight at the same time are let
// through beyond the limit.
func (s *altService) admitRacy(op string, acct int, now time.Time) (bool, int, time.Time) {
	s.mu.Lock()
	stale := slices.Clone(s.hits[acct])
	s.mu.Unlock()
	time.Sleep(altRaceYield)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hits[acct] = stale
	return s.admitLocked(op, acct, now)
}

// rateTimeTarget starts a target over HTTPS on loopback and returns its
// base address and the file of its certificate.
type rateTimeTarget func(t *testing.T) (baseURL, caFile string)

// runRateTime runs the @rate-limit scenario against a target, told the
// spec's limit per rateTimeWindow, both accounts, no control API. A run
// that cannot decide (exit 3) is made again, up to altAttempts times,
// against a fresh target.
func runRateTime(t *testing.T, target rateTimeTarget) altRun {
	t.Helper()
	accounts := altAccounts(t)
	var r altRun
	for attempt := 1; attempt <= altAttempts; attempt++ {
		base, ca := target(t)
		r = runAltOnce(base, ca, t.TempDir(), accounts, spec.RateLimit, rateTimeWindow, "--tags", rateTimeTags)
		r.attempts = attempt
		if r.err != nil {
			t.Fatal(r.err)
		}
		if r.code != exitIncomplete {
			break
		}
	}
	if r.code == exitIncomplete {
		t.Skipf("the rate-limit proof could not decide in %d runs (a loaded machine): %s", r.attempts, r.out)
	}
	return r
}

// simTarget is a simulator with the given window, on loopback; its control
// API is never given to the run.
func simTarget(window time.Duration) rateTimeTarget {
	return func(t *testing.T) (string, string) {
		s := openLimitedSimulator(t, spec.RateLimit, window)
		return s.URL(), s.Cert.CertFile
	}
}

// altTimeTarget is the alternative implementation with the given window,
// choices and defect, HTTP/2 offered.
func altTimeTarget(window time.Duration, opts altOptions, d altDefect) rateTimeTarget {
	return func(t *testing.T) (string, string) {
		srv := httptest.NewUnstartedServer(newAltService(altAccounts(t), spec.RateLimit, window, opts, d))
		srv.EnableHTTP2 = true
		srv.StartTLS()
		t.Cleanup(srv.Close)
		return srv.URL + spec.BasePath, writeCert(t, srv)
	}
}

// TestRateLimitOverTimeAndConcurrency: the verdict of §8 is right both ways
// for limiters a suite that checks one request after another, early in the
// window, cannot tell apart.
func TestRateLimitOverTimeAndConcurrency(t *testing.T) {
	waitsForWindows(t)
	tests := []struct {
		name   string
		target rateTimeTarget
		pass   bool
	}{
		{"the simulator with the run's window passes", simTarget(rateTimeWindow), true},
		{"the simulator with half the run's window fails §8", simTarget(rateTimeWindow / 2), false},
		{"clock-aligned windows counting refused requests pass", altTimeTarget(rateTimeWindow, altOptions{}, altDefect{}), true},
		{"sliding windows counting refused requests pass", altTimeTarget(rateTimeWindow, altOptions{Sliding: true}, altDefect{}), true},
		{"windows opened by the first request pass", altTimeTarget(rateTimeWindow, altOptions{FirstWindow: true}, altDefect{}), true},
		{"clock-aligned windows sparing refused requests pass", altTimeTarget(rateTimeWindow, altOptions{FreeRefused: true}, altDefect{}), true},
		{"clock-aligned windows half the run's fail §8", altTimeTarget(rateTimeWindow/2, altOptions{}, altDefect{}), false},
		{"sliding windows a tenth of the run's fail §8", altTimeTarget(rateTimeWindow/10, altOptions{Sliding: true}, altDefect{}), false},
		{"a counter read and written in two steps fails §8", altTimeTarget(rateTimeWindow, altOptions{}, altDefect{racy: true}), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runRateTime(t, tt.target)
			if tt.pass {
				wantPass(t, r)
				return
			}
			if by := wantCaught(t, r, "a limiter that breaks §8", altCatch{rule: "rate-holds", sections: []string{"8"}}); by != nil && len(by) < len(r.res.FailedScenarios()) {
				t.Errorf("failed for other reasons too (above), want only the §8 scenario of rule rate-holds")
			}
		})
	}
}
