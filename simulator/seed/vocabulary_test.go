package seed_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/seed"
)

// TestCampaignsWith_Vocabulary: a profile's vocabulary (issue 20) replaces
// the generator's own values, each list on its own; the same seed gives
// the same campaigns; the empty vocabulary changes nothing, byte for byte.
func TestCampaignsWith_Vocabulary(t *testing.T) {
	statuses := []seed.StatusColor{{"ACTIVE", "green"}, {"STOPPED", "red"}}
	tests := []struct {
		name  string
		v     seed.Vocabulary
		check func(t *testing.T, c *simulator.Campaign, own *simulator.Campaign)
	}{
		{"statuses and their colours", seed.Vocabulary{Statuses: statuses}, func(t *testing.T, c, own *simulator.Campaign) {
			if !slices.Contains(statuses, seed.StatusColor{Status: c.Status, Color: c.StatusColor}) {
				t.Fatalf("status %q %q is not one of %v", c.Status, c.StatusColor, statuses)
			}
			if c.ScheduledTimeZone != own.ScheduledTimeZone || c.AutoResend != own.AutoResend {
				t.Fatal("a statuses list changed the time zone or autoResend")
			}
		}},
		{"time zones, with their offsets when known", seed.Vocabulary{TimeZones: []string{"JST", "XYZ"}}, func(t *testing.T, c, _ *simulator.Campaign) {
			switch c.ScheduledTimeZone + " " + c.Offset {
			case "JST +09:00", "XYZ +00:00":
			default:
				t.Fatalf("zone %q offset %q", c.ScheduledTimeZone, c.Offset)
			}
		}},
		{"reasons, where the status has one", seed.Vocabulary{Reasons: []string{"Quota"}}, func(t *testing.T, c, own *simulator.Campaign) {
			if (c.Reason == nil) != (own.Reason == nil) {
				t.Fatal("a reasons list changed which campaigns have a reason")
			}
			if c.Reason != nil && *c.Reason != "Quota" {
				t.Fatalf("reason %q", *c.Reason)
			}
		}},
		{"autoResend values", seed.Vocabulary{AutoResend: []int{7}}, func(t *testing.T, c, _ *simulator.Campaign) {
			if c.AutoResend != 7 {
				t.Fatalf("autoResend %d, want 7", c.AutoResend)
			}
		}},
	}
	own := seed.Campaigns(42, accounts, 40)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := seed.CampaignsWith(42, accounts, 40, tt.v)
			again, _ := json.Marshal(seed.CampaignsWith(42, accounts, 40, tt.v))
			if b, _ := json.Marshal(got); !bytes.Equal(b, again) {
				t.Fatal("two runs with seed 42 and the same vocabulary differ")
			}
			for i, c := range got {
				tt.check(t, c, own[i])
				if c.ID != own[i].ID || c.CampaignName != own[i].CampaignName || c.Stats != own[i].Stats {
					t.Fatalf("campaign %d: the vocabulary changed what it does not name", i)
				}
			}
			if seed.VersionWith(42, accounts, 40, tt.v) == seed.Version(42, accounts, 40) {
				t.Fatal("VersionWith is Version's: a replica seeded without the vocabulary would not re-seed")
			}
		})
	}
	t.Run("the empty vocabulary is the generator's own", func(t *testing.T) {
		a, _ := json.Marshal(own)
		b, _ := json.Marshal(seed.CampaignsWith(42, accounts, 40, seed.Vocabulary{}))
		c, _ := json.Marshal(seed.ThrowawayCampaignsWith(42, "acc_tmp_x", 40, seed.Vocabulary{}))
		d, _ := json.Marshal(seed.ThrowawayCampaigns(42, "acc_tmp_x", 40))
		if !bytes.Equal(a, b) || !bytes.Equal(c, d) {
			t.Fatal("the empty vocabulary changed the campaigns")
		}
		if seed.VersionWith(42, accounts, 40, seed.Vocabulary{}) != seed.Version(42, accounts, 40) {
			t.Fatal("the empty vocabulary changed the version")
		}
	})
}
