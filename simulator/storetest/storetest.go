// Package storetest is the behaviour-level contract suite of the simulator's
// state backends: every implementation of simulator.ContactStore,
// simulator.CampaignStore, simulator.RateCounter, simulator.ControlStore, simulator.Gate and
// simulator.AccountRegistry (inmem, redisstore) must pass Run. It follows the shape of
// testing/fstest.TestFS: a backend's own test calls Run with a function that
// opens fresh, isolated state, and the suite checks the documented
// behaviour of the interfaces' doc comments, nothing more.
//
// It uses the standard testing package only, and never sleeps: the rate
// counter takes the time as an argument, so the suite passes a fixed fake
// now.
package storetest

import (
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
)

// Backend bundles one backend's stores with fresh state. Nothing stored
// through one Backend may be visible through another.
type Backend struct {
	Contacts  simulator.ContactStore
	Campaigns simulator.CampaignStore
	Control   simulator.ControlStore

	// NewRateCounter returns a counter that allows limit requests per key in
	// any window (spec §8: 100 per minute). Counters returned by one call
	// need not share state with counters returned by another.
	NewRateCounter func(limit int, window time.Duration) simulator.RateCounter

	// NewGate returns a Gate over Control and a new rate counter of limit
	// and window, and that counter (the gate's rate state, as the control
	// API resets it).
	NewGate func(limit int, window time.Duration) (simulator.Gate, simulator.RateCounter)

	// NewAccounts returns an account registry (issue 12) of the given
	// configured accounts and defaults, with no throwaway account. May be
	// nil: then the registry tests skip.
	NewAccounts func(configured []*simulator.Account, d simulator.AccountDefaults) simulator.AccountRegistry

	// Outage takes the backend's shared state down for the rest of the
	// test (Redis stops answering), so that the suite can check what the
	// stores answer when they cannot look: an internal error, never an
	// answer about the credentials. May be nil, for a backend with no
	// state it could lose (inmem): then the outage tests skip.
	Outage func(t *testing.T)
}

// Run runs the contract suite. open is called once per test and must return
// a Backend whose state is empty and isolated from every other test's; it
// registers its own cleanup with t.Cleanup.
func Run(t *testing.T, open func(t *testing.T) Backend) {
	t.Run("Contacts", func(t *testing.T) { testContacts(t, open) })
	t.Run("Campaigns", func(t *testing.T) { testCampaigns(t, open) })
	t.Run("RateCounter", func(t *testing.T) {
		testRateCounter(t, func(t *testing.T, limit int, window time.Duration) simulator.RateCounter {
			return open(t).NewRateCounter(limit, window)
		})
	})
	t.Run("RatePolicy", func(t *testing.T) {
		testRatePolicies(t, func(t *testing.T, limit int, window time.Duration) policyTaker {
			return counterTaker(t, open(t).NewRateCounter(limit, window))
		})
	})
	t.Run("GatePolicy", func(t *testing.T) {
		testRatePolicies(t, func(t *testing.T, limit int, window time.Duration) policyTaker {
			g, c := open(t).NewGate(limit, window)
			return gateTaker(t, g, c)
		})
	})
	t.Run("Control", func(t *testing.T) { testControl(t, open) })
	t.Run("Gate", func(t *testing.T) { testGate(t, open) })
	t.Run("Accounts", func(t *testing.T) { testAccounts(t, open) })
}

// t0 is the fake now of the rate counter tests: a time with nanoseconds, so
// that a backend that rounds to milliseconds fails the boundary tests.
var t0 = time.Date(2026, 3, 4, 5, 6, 7, 123456789, time.UTC)
