package inmem_test

import (
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/inmem"
	"github.com/partner-v3/conformance-kit/simulator/storetest"
)

// The in-memory backend passes the same contract suite as redisstore.
func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Backend {
		control := inmem.NewControlStore()
		return storetest.Backend{
			Contacts:  inmem.NewContactStore(),
			Campaigns: inmem.NewCampaignStore(),
			Control:   control,
			NewRateCounter: func(limit int, window time.Duration) simulator.RateCounter {
				return inmem.NewRateCounter(limit, window)
			},
			NewAccounts: func(configured []*simulator.Account, d simulator.AccountDefaults) simulator.AccountRegistry {
				s := inmem.NewAccountStore(configured)
				s.Defaults = d
				return s
			},
			// In memory, the gate is the stores composed.
			NewGate: func(limit int, window time.Duration) (simulator.Gate, simulator.RateCounter) {
				c := inmem.NewRateCounter(limit, window)
				return simulator.StoreGate{Control: control, Counter: c}, c
			},
		}
	})
}
