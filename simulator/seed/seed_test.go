package seed_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/seed"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

var accounts = []string{"acc_a", "acc_b", "acc_c"}

func TestCampaigns_SameSeedSameBytes(t *testing.T) {
	a, err := json.Marshal(seed.Campaigns(42, accounts, 60))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(seed.Campaigns(42, accounts, 60))
	if !bytes.Equal(a, b) {
		t.Fatal("two runs with seed 42 differ")
	}
	c, _ := json.Marshal(seed.Campaigns(43, accounts, 60))
	if bytes.Equal(a, c) {
		t.Fatal("seeds 42 and 43 give the same campaigns")
	}
}

func TestCampaigns_AccountContentIndependentOfOthers(t *testing.T) {
	alone := seed.Campaigns(7, []string{"acc_b"}, 5)
	among := seed.Campaigns(7, []string{"acc_a", "acc_b"}, 5)[5:]
	for i := range alone {
		// Ids depend on position; everything else depends on the account only.
		alone[i].ID, among[i].ID = 0, 0
		x, _ := json.Marshal(alone[i])
		y, _ := json.Marshal(among[i])
		if !bytes.Equal(x, y) {
			t.Fatalf("campaign %d of acc_b changed when acc_a was added:\n%s\n%s", i, x, y)
		}
	}
}

// TestCampaigns_Properties checks every generated campaign, over many seeds,
// against the formats of spec §2.2 and the coherence of §2.3.
func TestCampaigns_Properties(t *testing.T) {
	colors := seed.Statuses()
	for s := int64(1); s <= 200; s++ {
		cs := seed.Campaigns(s, accounts, 40)
		if got, want := len(cs), 3*40; got != want {
			t.Fatalf("seed %d: %d campaigns, want %d", s, got, want)
		}
		ids := map[int64]bool{}
		deleted := 0
		for _, c := range cs {
			if err := c.Validate(); err != nil {
				t.Fatalf("seed %d: %v", s, err)
			}
			if ids[c.ID] {
				t.Fatalf("seed %d: Id %d twice", s, c.ID)
			}
			ids[c.ID] = true
			if got, want := c.StatusColor, colors[c.Status]; got != want {
				t.Fatalf("seed %d: status %s has colour %s, want %s", s, c.Status, got, want)
			}
			if (c.Reason != nil) != (c.Status == "Paused" || c.Status == "Failed" || c.Status == "Cancelled") {
				t.Fatalf("seed %d: status %s with reason %v", s, c.Status, c.Reason)
			}
			if c.CampaignChannel == spec.ChannelEmail && c.Stats.SMSStat != (simulator.SMSStat{}) ||
				c.CampaignChannel == spec.ChannelSMS && c.Stats.EmailStat != (simulator.EmailStat{}) {
				t.Fatalf("seed %d: campaign %d has counts for the other channel", s, c.ID)
			}
			if c.ScheduledOn.Before(c.CreatedAt.Time) {
				t.Fatalf("seed %d: campaign %d scheduled before it was created", s, c.ID)
			}
			if c.Active == 0 {
				deleted++
			}
			b, _ := json.Marshal(c.CreatedAt)
			if len(b) != len(`"2026-03-04T05:06:07.123Z"`) {
				t.Fatalf("seed %d: createdAt %s is not ISO 8601 with milliseconds", s, b)
			}
		}
		if deleted == 0 {
			t.Fatalf("seed %d: no deleted campaign among %d", s, len(cs))
		}
	}
}

func TestVersion(t *testing.T) {
	v := seed.Version(1, accounts, 10)
	for _, other := range []string{
		seed.Version(2, accounts, 10),
		seed.Version(1, accounts[:2], 10),
		seed.Version(1, accounts, 11),
	} {
		if other == v {
			t.Fatalf("Version does not tell inputs apart: %s", v)
		}
	}
	if seed.Version(1, accounts, 10) != v {
		t.Fatal("Version is not stable")
	}
}

// TestThrowawayCampaigns_IdsApart makes many throwaway accounts' campaigns,
// as parallel CI jobs would, next to the configured accounts': no Id is
// any two accounts'. Generated alone, each throwaway account used to start
// in the first configured account's block, so pairs shared Ids.
func TestThrowawayCampaigns_IdsApart(t *testing.T) {
	owner := map[int64]string{}
	claim := func(cs []*simulator.Campaign) {
		t.Helper()
		for _, c := range cs {
			if prev, ok := owner[c.ID]; ok && prev != c.AccountID {
				t.Fatalf("Id %d is both %s's and %s's", c.ID, prev, c.AccountID)
			}
			owner[c.ID] = c.AccountID
		}
	}
	claim(seed.Campaigns(7, accounts, 120))
	for i := range 200 {
		cs := seed.ThrowawayCampaigns(7, fmt.Sprintf("acc_tmp_%03d", i), 120)
		if len(cs) != 120 {
			t.Fatalf("%d campaigns, want 120", len(cs))
		}
		if last := cs[len(cs)-1].ID; last >= 1<<53 {
			t.Fatalf("Id %d is not exact in a JSON parser's float64", last)
		}
		claim(cs)
	}
}
