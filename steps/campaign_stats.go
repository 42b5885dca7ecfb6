package steps

// Spec §4.3 (Campaign Stats: campaignId required, 400 "CampaignId is
// required"), §2.3 (emailStat and smsStat, integer counts) and §2.2 (a
// listed campaign's Id is the campaignId).

import (
	"context"
	"fmt"

	"github.com/cucumber/godog"
)

func (s *scenario) registerCampaignStats(sc *godog.ScenarioContext) {
	sc.Step(`^the client calls Campaign Stats for the (first|last) campaign of its list$`, s.clientCallsStatsFor)
	sc.Step(`^the client calls Campaign Stats for the first (email|sms) campaign of its list$`, s.clientCallsStatsForChannel)
	sc.Step(`^the client calls Campaign Stats for the first campaign of the second account's list$`, s.clientCallsStatsOfSecond)
	sc.Step(`^the client calls Campaign Stats for a campaign Id that no listed campaign has$`, s.clientCallsStatsUnknown)
	sc.Step(`^every statistic should be a count, an integer of 0 or more$`, s.statisticsAreCounts)
	sc.Step(`^no emailStat or smsStat count should exceed the count it derives from$`, s.statisticsFunnel)
}

func (s *scenario) callStats(ctx context.Context, id int64) error {
	return s.call(ctx, "Campaign Stats", fmt.Appendf(nil, `{"campaignId": %d}`, id))
}

func (s *scenario) clientCallsStatsFor(ctx context.Context, which string) error {
	id, err := s.firstCampaignID(ctx, s.env.Primary)
	if err != nil {
		return err
	}
	if which == "last" {
		info, err := s.campaigns(ctx, s.env.Primary)
		if err != nil {
			return err
		}
		id = info.lastID
	}
	return s.callStats(ctx, id)
}

// clientCallsStatsForChannel asks for the statistics of the first campaign
// of a channel on the account's first page: the keys of §2.3 are due for
// every campaign, whatever its channel.
func (s *scenario) clientCallsStatsForChannel(ctx context.Context, channel string) error {
	info, err := s.campaigns(ctx, s.env.Primary)
	if err != nil {
		return err
	}
	for _, c := range info.firstPage {
		if c["campaignChannel"] == channel {
			id, ok := intOf(c["Id"])
			if !ok {
				return s.failf("the first %s campaign has no integer Id (spec §2.2)", channel)
			}
			return s.callStats(ctx, id)
		}
	}
	return skipf("no %s campaign among the account's first %d", channel, len(info.firstPage))
}

func (s *scenario) clientCallsStatsOfSecond(ctx context.Context) error {
	if !s.env.Second.Complete() {
		return skipf("no second account is configured")
	}
	id, err := s.firstCampaignID(ctx, s.env.Second)
	if err != nil {
		return err
	}
	return s.callStats(ctx, id)
}

func (s *scenario) clientCallsStatsUnknown(ctx context.Context) error {
	info, err := s.campaigns(ctx, s.env.Primary)
	if err != nil {
		return err
	}
	// Far beyond any listed Id, yet a valid int64 and a float64-exact
	// integer for targets written in JavaScript.
	id := max(info.lastID, 0) + 1_000_000_007
	for _, c := range info.firstPage {
		if v, _ := intOf(c["Id"]); v >= id {
			id = v + 1_000_000_007
		}
	}
	return s.callStats(ctx, id)
}

func (s *scenario) statObjects() (map[string]map[string]any, error) {
	m, err := s.last.object()
	if err != nil {
		return nil, s.failf("%v", err)
	}
	out := make(map[string]map[string]any)
	for _, k := range []string{"emailStat", "smsStat"} {
		o, ok := m[k].(map[string]any)
		if !ok {
			return nil, s.failf("%q is %s, want an object (spec §2.3)", k, kindOf(m[k]))
		}
		out[k] = o
	}
	return out, nil
}

func (s *scenario) statisticsAreCounts() error {
	objs, err := s.statObjects()
	if err != nil {
		return err
	}
	for name, o := range objs {
		for k, v := range o {
			if i, ok := intOf(v); !ok || i < 0 {
				return s.failf("%s.%s is %s; counts are integers of 0 or more (spec §2.3)", name, k, jsonText(v))
			}
		}
	}
	return nil
}

func (s *scenario) statisticsFunnel() error {
	objs, err := s.statObjects()
	if err != nil {
		return err
	}
	n := func(o map[string]any, k string) int64 { v, _ := intOf(o[k]); return v }
	e, m := objs["emailStat"], objs["smsStat"]
	checks := []struct {
		ok   bool
		what string
	}{
		{n(e, "Delivered")+n(e, "Hardbounce")+n(e, "Softbounce")+n(e, "Failed") <= n(e, "Sent"), "emailStat Delivered+Hardbounce+Softbounce+Failed <= Sent"},
		{n(e, "Opened") <= n(e, "Delivered"), "emailStat Opened <= Delivered"},
		{n(e, "Clicked") <= n(e, "Opened"), "emailStat Clicked <= Opened"},
		{n(e, "Unsubscribe") <= n(e, "Delivered") && n(e, "Complained") <= n(e, "Delivered"), "emailStat Unsubscribe, Complained <= Delivered"},
		{n(m, "Delivered")+n(m, "Failed") <= n(m, "Sent"), "smsStat Delivered+Failed <= Sent"},
	}
	for _, c := range checks {
		if !c.ok {
			return s.failf("incoherent statistics: want %s", c.what)
		}
	}
	return nil
}
