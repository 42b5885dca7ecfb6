package steps

// Spec §4.3 (Campaign Stats: campaignId required, 400 "CampaignId is
// required"), §2.3 (emailStat and smsStat, integer counts) and §2.2 (a
// listed campaign's Id is the campaignId).

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"

	"github.com/cucumber/godog"

	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/answer"
	"github.com/partner-v3/conformance-kit/steps/matrix"
	"github.com/partner-v3/conformance-kit/steps/session"
)

func (s *scenario) registerCampaignStats(sc *godog.ScenarioContext) {
	sc.Step(`^the client calls Campaign Stats for the (first|last) campaign of its list$`, s.clientCallsStatsFor)
	sc.Step(`^the client calls Campaign Stats for the first (email|sms) campaign of its list$`, s.clientCallsStatsForChannel)
	sc.Step(`^the client calls Campaign Stats for the first campaign of the second account's list$`, s.clientCallsStatsOfSecond)
	sc.Step(`^the client calls Campaign Stats for a campaign Id that no listed campaign has$`, s.clientCallsStatsUnknown)
	sc.Step(`^every statistic should be a count, an integer of 0 or more$`, s.statisticsAreCounts)
	sc.Step(`^no emailStat or smsStat count should exceed the count it derives from$`, s.statisticsFunnel)
	sc.Step(`^each account calls Campaign Stats for a listed campaign of each channel and type, and for one whose counts are all zero$`, s.statsOfEveryKind)
	sc.Step(`^every answer should be 200 with emailStat and smsStat carrying every key of §2\.3, each a count$`, s.everyStatsComplete)
	sc.Step(`^each account calls Campaign Stats with an empty body$`, s.statsEmptyBody)
}

// statsKind names the kind of matrix.StatsKinds a listed campaign is of; "" for
// a deleted campaign (whose statistics are not shown) or one whose channel
// or type is not of §2.2.
func statsKind(c map[string]any) string {
	if a, _ := answer.IntOf(c["active"]); a != 1 {
		return ""
	}
	t, ok := answer.IntOf(c["campaignType"])
	if !ok || t != 0 && t != 1 {
		return ""
	}
	switch c["campaignChannel"] {
	case "email":
		return []string{matrix.StatsEmailStatic, matrix.StatsEmailDynamic}[t]
	case "sms":
		return []string{matrix.StatsSMSStatic, matrix.StatsSMSDynamic}[t]
	}
	return ""
}

// maxZeroProbes bounds the campaigns asked for while looking for one whose
// counts are all zero.
const maxZeroProbes = 6

// statsOfEveryKind asks, for each account, the statistics of its first
// listed active campaign of each channel and type, then looks for one
// whose counts are all zero among its campaigns not ready to send
// (broadcast not 1) first.
func (s *scenario) statsOfEveryKind(ctx context.Context) error {
	c := s.Cells("stats-keys")
	s.CellXs = s.CellXs[:0]
	for _, role := range matrix.BothAccounts {
		acct, ok := s.Account(role)
		if !ok {
			for _, k := range matrix.StatsKinds {
				c.Unreachable(session.CellOf("stats-keys", spec.OpCampaignStats, role, k), "no second account is configured")
			}
			continue
		}
		info, err := s.Campaigns(ctx, acct)
		if err != nil {
			return err
		}
		asked := map[int64]bool{}
		zero := false
		ask := func(kind string, cm map[string]any) error {
			id, _ := answer.IntOf(cm["Id"])
			asked[id] = true
			x, err := s.SendAs(ctx, role, spec.OpCampaignStats, fmt.Appendf(nil, `{"campaignId": %d}`, id))
			if err != nil {
				return err
			}
			s.Last = x
			if allZero(x) {
				zero = true
				s.CellXs = append(s.CellXs, session.CellExchange{Cell: session.CellOf("stats-keys", spec.OpCampaignStats, role, matrix.StatsZero), X: x})
			}
			if kind != "" {
				s.CellXs = append(s.CellXs, session.CellExchange{Cell: session.CellOf("stats-keys", spec.OpCampaignStats, role, kind), X: x})
			}
			return nil
		}
		for _, kind := range matrix.StatsKinds[:4] {
			i := slices.IndexFunc(info.Listed, func(cm map[string]any) bool { return statsKind(cm) == kind })
			if i < 0 {
				c.Missing(session.CellOf("stats-keys", spec.OpCampaignStats, role, kind), "the account lists no active campaign of that kind")
				continue
			}
			if err := ask(kind, info.Listed[i]); err != nil {
				return err
			}
		}
		candidates := slices.Clone(info.Listed)
		slices.SortStableFunc(candidates, func(a, b map[string]any) int {
			x, _ := answer.IntOf(a["broadcast"])
			y, _ := answer.IntOf(b["broadcast"])
			return cmp.Compare(min(x, 1), min(y, 1))
		})
		probes := 0
		for _, cm := range candidates {
			if zero || probes == maxZeroProbes {
				break
			}
			if id, _ := answer.IntOf(cm["Id"]); asked[id] || statsKind(cm) == "" {
				continue
			}
			probes++
			if err := ask("", cm); err != nil {
				return err
			}
		}
		if !zero {
			c.Missing(session.CellOf("stats-keys", spec.OpCampaignStats, role, matrix.StatsZero), fmt.Sprintf("no campaign with every count zero among the %d asked", len(asked)))
		}
	}
	s.Pending = c
	return nil
}

// allZero reports whether a Campaign Stats answer is a 200 whose counts
// are all zero.
func allZero(x *session.Exchange) bool {
	if x.Status != http.StatusOK {
		return false
	}
	m, err := x.Object()
	if err != nil {
		return false
	}
	for _, k := range []string{spec.EmailStat, spec.SMSStat} {
		o, ok := m[k].(map[string]any)
		if !ok {
			return false
		}
		for _, v := range o {
			if n, ok := answer.IntOf(v); !ok || n != 0 {
				return false
			}
		}
	}
	return true
}

// everyStatsComplete: every answer is a 200 whose body has both objects
// with every key of §2.3, each an integer of 0 or more.
func (s *scenario) everyStatsComplete() error {
	return s.EveryOK("a listed campaign's Id is the value used as campaignId (spec §2.2)")
}

func (s *scenario) statsEmptyBody(ctx context.Context) error {
	return s.SendCells(ctx, "stats-required", func(matrix.Cell) ([]byte, error) { return []byte(`{}`), nil })
}

func (s *scenario) callStats(ctx context.Context, id int64) error {
	return s.Call(ctx, spec.OpCampaignStats, fmt.Appendf(nil, `{"campaignId": %d}`, id))
}

func (s *scenario) clientCallsStatsFor(ctx context.Context, which string) error {
	id, err := s.FirstCampaignID(ctx, s.Target.Primary)
	if err != nil {
		return err
	}
	if which == "last" {
		info, err := s.Campaigns(ctx, s.Target.Primary)
		if err != nil {
			return err
		}
		id = info.LastID
	}
	return s.callStats(ctx, id)
}

// clientCallsStatsForChannel asks for the statistics of the first campaign
// of a channel on the account's first page: the keys of §2.3 are due for
// every campaign, whatever its channel.
func (s *scenario) clientCallsStatsForChannel(ctx context.Context, channel string) error {
	info, err := s.Campaigns(ctx, s.Target.Primary)
	if err != nil {
		return err
	}
	for _, c := range info.FirstPage {
		if c["campaignChannel"] == channel {
			id, ok := answer.IntOf(c["Id"])
			if !ok {
				return s.Failf("the first %s campaign has no integer Id (spec §2.2)", channel)
			}
			return s.callStats(ctx, id)
		}
	}
	return session.Skipf("no %s campaign among the account's first %d", channel, len(info.FirstPage))
}

func (s *scenario) clientCallsStatsOfSecond(ctx context.Context) error {
	if !s.Target.Second.Complete() {
		return session.Skipf("no second account is configured")
	}
	id, err := s.FirstCampaignID(ctx, s.Target.Second)
	if err != nil {
		return err
	}
	return s.callStats(ctx, id)
}

func (s *scenario) clientCallsStatsUnknown(ctx context.Context) error {
	info, err := s.Campaigns(ctx, s.Target.Primary)
	if err != nil {
		return err
	}
	// Far beyond any listed Id, yet a valid int64 and a float64-exact
	// integer for targets written in JavaScript.
	id := max(info.LastID, 0) + 1_000_000_007
	for _, c := range info.FirstPage {
		if v, _ := answer.IntOf(c["Id"]); v >= id {
			id = v + 1_000_000_007
		}
	}
	return s.callStats(ctx, id)
}

func (s *scenario) statObjects() (map[string]map[string]any, error) {
	m, err := s.Last.Object()
	if err != nil {
		return nil, s.Failf("%v", err)
	}
	out := make(map[string]map[string]any)
	for _, k := range []string{spec.EmailStat, spec.SMSStat} {
		o, ok := m[k].(map[string]any)
		if !ok {
			return nil, s.Failf("%q is %s, want an object (spec §2.3)", k, answer.KindOf(m[k]))
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
			if i, ok := answer.IntOf(v); !ok || i < 0 {
				return s.Failf("%s.%s is %s; counts are integers of 0 or more (spec §2.3)", name, k, answer.JSONText(v))
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
	n := func(o map[string]any, k string) int64 { v, _ := answer.IntOf(o[k]); return v }
	e, m := objs[spec.EmailStat], objs[spec.SMSStat]
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
			return s.Failf("incoherent statistics: want %s", c.what)
		}
	}
	return nil
}
