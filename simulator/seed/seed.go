// Package seed generates realistic, deterministic campaigns and statistics
// with gofakeit: the same seed, accounts and count always give the same
// campaigns, byte for byte, whatever the day or the machine.
package seed

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/brianvoe/gofakeit/v7"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// DefaultSeed is the --seed default. Not zero: gofakeit takes seed 0 to
// mean "random", which would break determinism.
const DefaultSeed int64 = 20260301

// generatorVersion changes whenever the generator's output changes, so that
// a Redis seeded by an older simulator is re-seeded.
const generatorVersion = "campaigns/v1"

// epoch is the dataset's "today": fixed, so output never depends on the
// real date.
var epoch = time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)

// statusInfo is one campaign status with what goes with it. The spec shows
// no status names (§2.2, §3); these are the simulator's.
type statusInfo struct {
	name      string
	color     string
	broadcast int
	reasons   []string // nil: reason is null
	progress  float64  // share of the audience sent so far
	weight    float32
}

var statuses = []statusInfo{
	{name: "Draft", color: "#9E9E9E", weight: 2},
	{name: "Scheduled", color: "#2196F3", broadcast: 1, weight: 2},
	{name: "Sending", color: "#FF9800", broadcast: 1, progress: 0.4, weight: 1},
	{name: "Sent", color: "#4CAF50", broadcast: 1, progress: 1, weight: 6},
	{name: "Paused", color: "#FFC107", progress: 0.25, weight: 1,
		reasons: []string{"Paused by user", "Paused: daily sending quota reached"}},
	{name: "Failed", color: "#F44336", progress: 0.05, weight: 1,
		reasons: []string{"Sender domain not verified", "Audience list is empty", "Message template rejected by provider"}},
	{name: "Cancelled", color: "#607D8B", weight: 1,
		reasons: []string{"Cancelled by user", "Cancelled: audience list deleted"}},
}

// Statuses returns the status names the generator uses, with their colours.
func Statuses() map[string]string {
	m := make(map[string]string, len(statuses))
	for _, s := range statuses {
		m[s.name] = s.color
	}
	return m
}

// zones pairs each abbreviation with its one UTC offset, so scheduledTimeZone
// and offset never disagree (spec §2.2).
var zones = []struct{ abbr, offset string }{
	{"UTC", "+00:00"}, {"GMT", "+00:00"}, {"BST", "+01:00"}, {"CET", "+01:00"},
	{"EET", "+02:00"}, {"IST", "+05:30"}, {"SGT", "+08:00"}, {"JST", "+09:00"},
	{"AEST", "+10:00"}, {"NZST", "+12:00"}, {"NST", "-03:30"}, {"AST", "-04:00"},
	{"EST", "-05:00"}, {"CST", "-06:00"}, {"MST", "-07:00"}, {"PST", "-08:00"},
}

var (
	themes    = []string{"Spring", "Summer", "Autumn", "Winter", "Weekend", "Midweek", "Holiday", "New Year", "Loyalty", "Welcome", "Win-back", "VIP", "Birthday", "Jackpot"}
	kinds     = []string{"Newsletter", "Promo", "Bonus Drop", "Reactivation", "Free Spins Offer", "Cashback", "Tournament Invite", "Survey", "Product Update", "Reminder"}
	audiences = []string{"Players", "Members", "Subscribers", "Newcomers", "Regulars", "High Rollers"}
)

// Version identifies the output of Campaigns for these inputs, for
// simulator.CampaignStore.SeedCampaigns.
func Version(seed int64, accountIDs []string, perAccount int) string {
	return VersionWith(seed, accountIDs, perAccount, Vocabulary{})
}

// VersionWith is Version for CampaignsWith: the vocabulary is part of the
// output, so a replica started with another one re-seeds. The empty
// vocabulary's is Version's.
func VersionWith(seed int64, accountIDs []string, perAccount int, v Vocabulary) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%d\x00%d\x00%s", generatorVersion, seed, perAccount, strings.Join(accountIDs, "\x00"))
	if !v.empty() {
		fmt.Fprintf(h, "\x00vocabulary\x00%v", v)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Vocabulary is the campaign data a deployment profile showed where §2.2
// and §3 give no values (issue 20: the profile's vocabulary choices).
// Each non-empty list replaces the generator's own values: the campaigns
// draw from it, deterministically (same seed, same campaigns). The zero
// Vocabulary is the generator's own, its output unchanged byte for byte.
type Vocabulary struct {
	// Statuses are status names, each with its statusColor.
	Statuses []StatusColor
	// TimeZones are scheduledTimeZone abbreviations; offset is the zone's
	// when the generator knows it, else +00:00.
	TimeZones []string
	// Reasons replace the texts of the statuses that carry a reason (a
	// campaign whose status has none keeps reason null).
	Reasons []string
	// AutoResend are the autoResend values.
	AutoResend []int
}

// StatusColor is a status name and its colour.
type StatusColor struct{ Status, Color string }

func (v Vocabulary) empty() bool {
	return len(v.Statuses) == 0 && len(v.TimeZones) == 0 && len(v.Reasons) == 0 && len(v.AutoResend) == 0
}

// Campaigns generates perAccount campaigns for each account, in the given
// order. Each account's campaigns come from a generator seeded by seed and
// the account identifier, so adding an account leaves the others' content
// alone; Ids are unique across accounts (blocks of 100000 by position).
func Campaigns(seed int64, accountIDs []string, perAccount int) []*simulator.Campaign {
	return CampaignsWith(seed, accountIDs, perAccount, Vocabulary{})
}

// CampaignsWith is Campaigns drawing from v where it has values.
func CampaignsWith(seed int64, accountIDs []string, perAccount int, v Vocabulary) []*simulator.Campaign {
	var out []*simulator.Campaign
	for i, acc := range accountIDs {
		out = appendCampaigns(out, seed, acc, int64(i+1), perAccount, v)
	}
	return out
}

// ThrowawayCampaigns generates a throwaway account's perAccount campaigns,
// as Campaigns does, in a block of Ids of its own: one of 2^30 blocks
// picked by the account identifier, all past the blocks of a million
// configured accounts. Two throwaway accounts made side by side (each
// alone, at position 0, they would start in the same block) share an Id
// with odds of about one in a billion, and none shares one with a
// configured account. The largest Id stays below 2^53, exact in any JSON
// parser.
func ThrowawayCampaigns(seed int64, accountID string, perAccount int) []*simulator.Campaign {
	return ThrowawayCampaignsWith(seed, accountID, perAccount, Vocabulary{})
}

// ThrowawayCampaignsWith is ThrowawayCampaigns drawing from v where it has
// values: a throwaway account that plays a profile shows its vocabulary.
func ThrowawayCampaignsWith(seed int64, accountID string, perAccount int, v Vocabulary) []*simulator.Campaign {
	sum := sha256.Sum256([]byte(accountID))
	block := int64(1<<20) + int64(binary.BigEndian.Uint32(sum[8:12])>>2)
	return appendCampaigns(nil, seed, accountID, block, perAccount, v)
}

// appendCampaigns appends one account's campaigns, Ids in the block of
// 100000 numbered block.
func appendCampaigns(out []*simulator.Campaign, seed int64, accountID string, block int64, perAccount int, v Vocabulary) []*simulator.Campaign {
	f := gofakeit.New(accountSeed(seed, accountID))
	// The vocabulary draws from a generator of its own, so the generator's
	// own draws (names, times, counts) stay what they are without one.
	var fv *gofakeit.Faker
	if !v.empty() {
		fv = gofakeit.New(accountSeed(seed, "vocabulary\x00"+accountID))
	}
	id := block*100000 + int64(f.IntRange(1000, 9000))
	for n := 0; n < perAccount; n++ {
		id += int64(f.IntRange(1, 7))
		c := campaign(f, accountID, id)
		if fv != nil {
			v.apply(fv, c)
		}
		out = append(out, c)
	}
	return out
}

// apply replaces c's vocabulary values with draws from v's lists.
func (v Vocabulary) apply(f *gofakeit.Faker, c *simulator.Campaign) {
	if n := len(v.Statuses); n > 0 {
		st := v.Statuses[f.IntRange(0, n-1)]
		c.Status, c.StatusColor = st.Status, st.Color
	}
	if n := len(v.TimeZones); n > 0 {
		c.ScheduledTimeZone, c.Offset = v.TimeZones[f.IntRange(0, n-1)], "+00:00"
		for _, z := range zones {
			if z.abbr == c.ScheduledTimeZone {
				c.Offset = z.offset
				break
			}
		}
	}
	if n := len(v.Reasons); n > 0 && c.Reason != nil {
		r := v.Reasons[f.IntRange(0, n-1)]
		c.Reason = &r
	}
	if n := len(v.AutoResend); n > 0 {
		c.AutoResend = v.AutoResend[f.IntRange(0, n-1)]
	}
}

func accountSeed(seed int64, accountID string) uint64 {
	sum := sha256.Sum256([]byte(accountID))
	s := uint64(seed) ^ binary.BigEndian.Uint64(sum[:8])
	if s == 0 { // gofakeit would read seed 0 as "random"
		s = 1
	}
	return s
}

func campaign(f *gofakeit.Faker, accountID string, id int64) *simulator.Campaign {
	st := pickStatus(f)
	zone := zones[f.IntRange(0, len(zones)-1)]
	channel := spec.ChannelEmail
	if f.IntRange(1, 10) <= 3 {
		channel = spec.ChannelSMS
	}
	// Times in whole milliseconds, ordered: created <= updated, and the
	// schedule after creation; upcoming ones lie after the epoch.
	created := epoch.Add(-time.Duration(f.IntRange(2*24*3600, 400*24*3600)) * time.Second).
		Add(time.Duration(f.IntRange(0, 999)) * time.Millisecond)
	scheduled := created.Add(time.Duration(f.IntRange(3600, 20*24*3600)) * time.Second)
	if st.name == "Scheduled" || st.name == "Draft" {
		scheduled = epoch.Add(time.Duration(f.IntRange(3600, 60*24*3600)) * time.Second)
	}
	updated := created.Add(time.Duration(f.IntRange(0, int(scheduled.Sub(created)/time.Millisecond))) * time.Millisecond)
	if st.progress > 0 && updated.Before(scheduled) {
		updated = scheduled.Add(time.Duration(f.IntRange(60, 6*3600)) * time.Second)
	}
	active := 1
	if f.IntRange(1, 100) <= 12 {
		active = 0
	}
	c := &simulator.Campaign{AccountID: accountID, CampaignRecord: simulator.CampaignRecord{
		ID: id,
		CampaignName: fmt.Sprintf("%s %s for %s %s", f.RandomString(themes), f.RandomString(kinds),
			title(f.Adjective()), f.RandomString(audiences)),
		CampaignType:      f.IntRange(0, 1),
		CampaignChannel:   channel,
		Status:            st.name,
		StatusColor:       st.color,
		Active:            active,
		ScheduledOn:       simulator.Timestamp{Time: scheduled},
		ScheduledTimeZone: zone.abbr,
		Offset:            zone.offset,
		AutoResend:        f.IntRange(0, 1),
		BroadcastOn:       simulator.Timestamp{Time: scheduled},
		Broadcast:         st.broadcast,
		CreatedAt:         simulator.Timestamp{Time: created},
		UpdatedAt:         simulator.Timestamp{Time: updated},
	}}
	if st.reasons != nil {
		r := f.RandomString(st.reasons)
		c.Reason = &r
	}
	c.Stats = stats(f, channel, st.progress)
	return c
}

func pickStatus(f *gofakeit.Faker) statusInfo {
	options := make([]any, len(statuses))
	weights := make([]float32, len(statuses))
	for i, s := range statuses {
		options[i], weights[i] = i, s.weight
	}
	i, err := f.Weighted(options, weights)
	if err != nil {
		panic(fmt.Sprintf("seed: status weights: %v", err)) // fixed table above: programmer error
	}
	return statuses[i.(int)]
}

// stats builds coherent counts: every stage of the funnel is drawn as a
// share of the stage before it, so none exceeds what precedes it.
func stats(f *gofakeit.Faker, channel string, progress float64) simulator.CampaignStats {
	var s simulator.CampaignStats
	if progress == 0 {
		return s
	}
	sent := int64(float64(f.IntRange(200, 60000)) * progress)
	share := func(n int64, lo, hi float64) int64 { return int64(float64(n) * f.Float64Range(lo, hi)) }
	if channel == spec.ChannelSMS {
		s.SMSStat.Sent = sent
		s.SMSStat.Delivered = share(sent, 0.88, 0.99)
		s.SMSStat.Failed = sent - s.SMSStat.Delivered
		return s
	}
	e := &s.EmailStat
	e.Sent = sent
	e.Delivered = share(sent, 0.85, 0.98)
	lost := sent - e.Delivered
	e.Hardbounce = share(lost, 0.2, 0.5)
	e.Softbounce = share(lost-e.Hardbounce, 0.3, 0.8)
	e.Failed = lost - e.Hardbounce - e.Softbounce
	e.Opened = share(e.Delivered, 0.12, 0.48)
	e.Clicked = share(e.Opened, 0.04, 0.3)
	e.Unsubscribe = share(e.Delivered, 0, 0.01)
	e.Complained = share(e.Delivered, 0, 0.002)
	return s
}

func title(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// Digest names a campaigns file's content, as its seeding version.
func Digest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}
