package partnerapi_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/partner-v3/conformance-kit/fixtures"
	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/inmem"
	"github.com/partner-v3/conformance-kit/simulator/internal/apitest"
	"github.com/partner-v3/conformance-kit/simulator/partnerapi"
	"github.com/partner-v3/conformance-kit/simulator/redisstore"
	"github.com/partner-v3/conformance-kit/simulator/seed"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// TestRedisRoundTrips: in Redis mode the clock, the rate decision (spec §8)
// and the pending-fault check cost one round trip together. With the
// campaigns in memory (they never change after seeding), a served Campaign
// List or Stats makes exactly one; Add Contact one more, for the write.
func TestRedisRoundTrips(t *testing.T) {
	urls := map[string]func(t *testing.T) string{
		"miniredis": func(t *testing.T) string { return "redis://" + miniredis.RunT(t).Addr() + "/0" },
		"redis-server": func(t *testing.T) string {
			addr := os.Getenv("SIM_REDIS_ADDR")
			if addr == "" {
				t.Skip("set SIM_REDIS_ADDR=127.0.0.1:PORT to run against a real redis-server")
			}
			return "redis://" + addr + "/0"
		},
	}
	for name, url := range urls {
		t.Run(name, func(t *testing.T) {
			db := redisstore.NewDB(url(t))
			db.Prefix = "simtest:roundtrips:" + time.Now().Format("150405.000000000") + ":"
			if err := db.Open(); err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			defer redisstore.NewControlStore(db).ResetControl(context.Background())
			accounts, err := simulator.ReadAccounts(strings.NewReader(string(fixtures.Accounts)))
			if err != nil {
				t.Fatal(err)
			}
			campaigns := inmem.NewCampaignStore()
			ids := []string{accounts[0].AccountID}
			if _, err := campaigns.SeedCampaigns(context.Background(), "v", seed.Campaigns(1, ids, 10)); err != nil {
				t.Fatal(err)
			}
			first, _, err := campaigns.FindCampaigns(context.Background(), simulator.CampaignFilter{AccountID: ids[0], Limit: 1})
			if err != nil || len(first) != 1 {
				t.Fatalf("FindCampaigns: %v", err)
			}
			counter := redisstore.NewRateCounter(db, 1000, time.Minute)
			defer counter.ResetAll(context.Background())
			s := &partnerapi.API{Stores: partnerapi.Stores{
				Accounts: inmem.NewAccountStore(accounts), Campaigns: campaigns,
				Contacts: redisstore.NewContactStore(db), Control: redisstore.NewControlStore(db),
				Counter: counter, Gate: redisstore.NewGate(db, 1000, time.Minute),
			}}
			defer s.Contacts.DeleteContacts(context.Background(), "")
			h := s.Handler()
			var trips redisstore.RoundTrips
			db.AddHook(&trips)
			a := accounts[0]
			do := func(op, body string) int { return apitest.Serve(h, a, op, body).Code }
			requests := []struct {
				op, body string
				trips    int64
			}{
				{spec.PathCampaignList, `{"limit":5,"page":1}`, 1},
				{spec.PathCampaignStats, fmt.Sprintf(`{"campaignId":%d}`, first[0].ID), 1},
				{spec.PathContactAdd, `{"email":"trip-%d@example.com"}`, 2},
			}
			// The first run loads the scripts into Redis (EVALSHA answers
			// NOSCRIPT once, then EVAL): not counted.
			for run := range 2 {
				for _, r := range requests {
					before := trips.Count()
					body := strings.Replace(r.body, "%d", string(rune('a'+run)), 1)
					if code := do(r.op, body); code != http.StatusOK {
						t.Fatalf("%s: status %d", r.op, code)
					}
					if got := trips.Count() - before; run == 1 && got != r.trips {
						t.Errorf("%s made %d round trips to Redis, want %d", r.op, got, r.trips)
					}
				}
			}
		})
	}
}
