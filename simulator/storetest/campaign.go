package storetest

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

func ts(t time.Time) simulator.Timestamp { return simulator.Timestamp{Time: t} }

// newCampaign returns a campaign with every field of spec §2.2 and §2.3 set
// to a value derived from id, timestamps with milliseconds, and a reason for
// even ids only (spec §2.2: reason is null or a string).
func newCampaign(account string, id int64) *simulator.Campaign {
	base := time.Date(2026, 2, 3, 4, 5, 6, int(id%1000)*int(time.Millisecond), time.UTC).Add(time.Duration(id) * time.Hour)
	c := &simulator.Campaign{AccountID: account, CampaignRecord: simulator.CampaignRecord{
		ID:                id,
		CampaignName:      "Spring sale " + account + string(rune('A'+id%26)),
		CampaignType:      int(id % 2),
		CampaignChannel:   spec.ChannelEmail,
		Status:            "Sent",
		StatusColor:       "#1A2B3C",
		Active:            int(id % 2),
		ScheduledOn:       ts(base.Add(48 * time.Hour)),
		ScheduledTimeZone: "IST",
		Offset:            "+05:30",
		AutoResend:        1,
		BroadcastOn:       ts(base.Add(49 * time.Hour)),
		Broadcast:         1,
		CreatedAt:         ts(base),
		UpdatedAt:         ts(base.Add(90*time.Minute + 7*time.Millisecond)),
	},
		Stats: simulator.CampaignStats{
			EmailStat: simulator.EmailStat{
				Sent: 1000 + id, Opened: 400, Delivered: 900, Hardbounce: 30, Softbounce: 20,
				Failed: 10, Clicked: 100, Unsubscribe: 5, Complained: 2,
			},
			SMSStat: simulator.SMSStat{Sent: 50 + id, Delivered: 40, Failed: 3},
		},
	}
	if id%2 == 0 {
		reason := "Paused by the partner"
		c.Reason = &reason
		c.CampaignChannel = spec.ChannelSMS
	}
	return c
}

func mustSeed(t *testing.T, s simulator.CampaignStore, version string, cs []*simulator.Campaign) bool {
	t.Helper()
	stored, err := s.SeedCampaigns(context.Background(), version, cs)
	if err != nil {
		t.Fatalf("SeedCampaigns(%q): %v", version, err)
	}
	return stored
}

func mustFindCampaigns(t *testing.T, s simulator.CampaignStore, f simulator.CampaignFilter) ([]*simulator.Campaign, int) {
	t.Helper()
	cs, n, err := s.FindCampaigns(context.Background(), f)
	if err != nil {
		t.Fatalf("FindCampaigns(%+v): %v", f, err)
	}
	return cs, n
}

func campaignIDs(cs []*simulator.Campaign) []int64 {
	ids := []int64{}
	for _, c := range cs {
		ids = append(ids, c.ID)
	}
	return ids
}

func equalCampaign(t *testing.T, got, want *simulator.Campaign) {
	t.Helper()
	// The exported fields: a store may keep the campaign's encoded form
	// beside them (simulator.Campaign.Encode).
	type fields struct {
		simulator.CampaignRecord
		AccountID string
		Stats     simulator.CampaignStats
	}
	if !reflect.DeepEqual(fields{got.CampaignRecord, got.AccountID, got.Stats}, fields{want.CampaignRecord, want.AccountID, want.Stats}) {
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(want)
		t.Errorf("campaign =\n%s\nwant\n%s", gj, wj)
	}
}

func testCampaigns(t *testing.T, open func(t *testing.T) Backend) {
	if open(t).Campaigns == nil {
		t.Skip("the backend keeps no campaigns (redisstore: each replica keeps its own in memory)")
	}
	ctx := context.Background()

	t.Run("a campaign round-trips every field", func(t *testing.T) {
		s := open(t).Campaigns
		mustSeed(t, s, "v1", []*simulator.Campaign{newCampaign(accountA, 7), newCampaign(accountA, 8)})
		for _, id := range []int64{7, 8} {
			got, err := s.FindCampaignByID(ctx, accountA, id)
			if err != nil {
				t.Fatalf("FindCampaignByID(%d): %v", id, err)
			}
			equalCampaign(t, got, newCampaign(accountA, id))
		}
		cs, _ := mustFindCampaigns(t, s, simulator.CampaignFilter{AccountID: accountA})
		if got, want := len(cs), 2; got != want {
			t.Fatalf("len = %d, want %d", got, want)
		}
		equalCampaign(t, cs[0], newCampaign(accountA, 7))
		equalCampaign(t, cs[1], newCampaign(accountA, 8))
		if cs[0].Reason != nil {
			t.Errorf("campaign 7: Reason = %q, want nil", *cs[0].Reason)
		}
		if cs[1].Reason == nil {
			t.Errorf("campaign 8: Reason = nil, want a string")
		}
	})

	t.Run("seeding again with the same version stores nothing", func(t *testing.T) {
		s := open(t).Campaigns
		if !mustSeed(t, s, "v1", []*simulator.Campaign{newCampaign(accountA, 1), newCampaign(accountA, 2)}) {
			t.Fatalf("first seed: stored = false, want true")
		}
		// Different campaigns under the same version: a replica must not
		// overwrite what the first one stored.
		if mustSeed(t, s, "v1", []*simulator.Campaign{newCampaign(accountA, 3)}) {
			t.Errorf("second seed: stored = true, want false")
		}
		cs, total := mustFindCampaigns(t, s, simulator.CampaignFilter{AccountID: accountA})
		if got, want := campaignIDs(cs), []int64{1, 2}; !reflect.DeepEqual(got, want) || total != 2 {
			t.Errorf("Ids, total = %v, %d, want %v, 2", got, total, want)
		}
	})

	t.Run("seeding with a new version replaces every campaign", func(t *testing.T) {
		s := open(t).Campaigns
		mustSeed(t, s, "v1", []*simulator.Campaign{newCampaign(accountA, 1), newCampaign(accountA, 2), newCampaign(accountB, 3)})
		replaced := newCampaign(accountA, 2)
		replaced.CampaignName = "Renamed"
		if !mustSeed(t, s, "v2", []*simulator.Campaign{replaced, newCampaign(accountA, 4)}) {
			t.Fatalf("seed v2: stored = false, want true")
		}
		cs, total := mustFindCampaigns(t, s, simulator.CampaignFilter{AccountID: accountA})
		if got, want := campaignIDs(cs), []int64{2, 4}; !reflect.DeepEqual(got, want) || total != 2 {
			t.Errorf("account A: Ids, total = %v, %d, want %v, 2", got, total, want)
		}
		if len(cs) > 0 {
			equalCampaign(t, cs[0], replaced)
		}
		if cs, total := mustFindCampaigns(t, s, simulator.CampaignFilter{AccountID: accountB}); len(cs) != 0 || total != 0 {
			t.Errorf("account B: len, total = %d, %d, want 0, 0", len(cs), total)
		}
		if _, err := s.FindCampaignByID(ctx, accountA, 1); simulator.ErrorCode(err) != simulator.ENOTFOUND {
			t.Errorf("FindCampaignByID(1) after replacement: err = %v, want ENOTFOUND", err)
		}
		// Going back to the first version is a change too.
		if !mustSeed(t, s, "v1", []*simulator.Campaign{newCampaign(accountA, 1)}) {
			t.Errorf("seed v1 again: stored = false, want true")
		}
	})

	t.Run("seeding no campaign stores an empty set", func(t *testing.T) {
		s := open(t).Campaigns
		mustSeed(t, s, "v1", []*simulator.Campaign{newCampaign(accountA, 1)})
		if !mustSeed(t, s, "v2", nil) {
			t.Fatalf("seed v2: stored = false, want true")
		}
		if cs, total := mustFindCampaigns(t, s, simulator.CampaignFilter{AccountID: accountA}); len(cs) != 0 || total != 0 {
			t.Errorf("len, total = %d, %d, want 0, 0", len(cs), total)
		}
	})

	t.Run("campaigns are listed per account in Id order, paged by offset and limit", func(t *testing.T) {
		s := open(t).Campaigns
		// Out of order, two accounts, ids that sort differently as text.
		var seed []*simulator.Campaign
		for _, id := range []int64{30, 4, 100, 21, 2, 1000, 9} {
			seed = append(seed, newCampaign(accountA, id))
		}
		seed = append(seed, newCampaign(accountB, 5), newCampaign(accountB, 3))
		mustSeed(t, s, "v1", seed)

		tests := []struct {
			name   string
			filter simulator.CampaignFilter
			want   []int64
			total  int
		}{
			{"all of one account", simulator.CampaignFilter{AccountID: accountA}, []int64{2, 4, 9, 21, 30, 100, 1000}, 7},
			{"the other account", simulator.CampaignFilter{AccountID: accountB}, []int64{3, 5}, 2},
			{"a first page", simulator.CampaignFilter{AccountID: accountA, Limit: 3}, []int64{2, 4, 9}, 7},
			{"a middle page", simulator.CampaignFilter{AccountID: accountA, Offset: 3, Limit: 3}, []int64{21, 30, 100}, 7},
			{"a short last page", simulator.CampaignFilter{AccountID: accountA, Offset: 6, Limit: 3}, []int64{1000}, 7},
			{"an offset without limit", simulator.CampaignFilter{AccountID: accountA, Offset: 5}, []int64{100, 1000}, 7},
			{"an offset at the end", simulator.CampaignFilter{AccountID: accountA, Offset: 7, Limit: 3}, []int64{}, 7},
			{"an offset past the end", simulator.CampaignFilter{AccountID: accountA, Offset: 50, Limit: 3}, []int64{}, 7},
			{"an account without campaigns", simulator.CampaignFilter{AccountID: "acc_enc_nobody", Limit: 3}, []int64{}, 0},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				cs, total := mustFindCampaigns(t, s, tt.filter)
				if got := campaignIDs(cs); !reflect.DeepEqual(got, tt.want) {
					t.Errorf("Ids = %v, want %v", got, tt.want)
				}
				if total != tt.total {
					t.Errorf("total = %d, want %d", total, tt.total)
				}
				for _, c := range cs {
					if c.AccountID != tt.filter.AccountID {
						t.Errorf("campaign %d: AccountID = %q, want %q", c.ID, c.AccountID, tt.filter.AccountID)
					}
				}
			})
		}
	})

	t.Run("deleted campaigns are listed", func(t *testing.T) {
		s := open(t).Campaigns
		deleted := newCampaign(accountA, 1)
		deleted.Active = 0
		mustSeed(t, s, "v1", []*simulator.Campaign{deleted})
		cs, total := mustFindCampaigns(t, s, simulator.CampaignFilter{AccountID: accountA})
		if len(cs) != 1 || total != 1 || cs[0].Active != 0 {
			t.Fatalf("len, total = %d, %d, want the deleted campaign", len(cs), total)
		}
	})

	t.Run("a campaign is not found by another account or by an unknown Id", func(t *testing.T) {
		s := open(t).Campaigns
		mustSeed(t, s, "v1", []*simulator.Campaign{newCampaign(accountA, 1), newCampaign(accountB, 2)})
		tests := []struct {
			name    string
			account string
			id      int64
		}{
			{"another account's Id", accountA, 2},
			{"the other way round", accountB, 1},
			{"an unknown Id", accountA, 3},
			{"an unknown account", "acc_enc_nobody", 1},
			{"Id zero", accountA, 0},
			{"a negative Id", accountA, -1},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				c, err := s.FindCampaignByID(ctx, tt.account, tt.id)
				if got, want := simulator.ErrorCode(err), simulator.ENOTFOUND; got != want {
					t.Errorf("ErrorCode = %q (err %v), want %q", got, err, want)
				}
				if c != nil {
					t.Errorf("campaign = %+v, want nil", c)
				}
			})
		}
	})
}
