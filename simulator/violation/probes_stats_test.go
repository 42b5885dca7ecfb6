package violation_test

import (
	"fmt"
	"net/http"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/violation"
)

// counts edits every count of one object of a Campaign Stats answer.
func counts(a *answer, object string, edit func(n any) any) {
	for k, v := range obj(a.Doc, object) {
		obj(a.Doc, object)[k] = edit(v)
	}
}

// onChannel edits the stats of a campaign of channel ch and leaves those
// of the other channel alone.
func onChannel(ch string, edit func(a *answer)) func(p *pair) {
	return func(p *pair) {
		in, out := p.smsCampaign(), p.emailCampaign()
		if ch == simulator.ChannelEmail {
			in, out = out, in
		}
		p.expect(stats(in.ID), edit)
		p.same(stats(out.ID))
	}
}

// onBoth edits the stats of an sms and an email campaign.
func onBoth(edit func(a *answer)) func(p *pair) {
	return func(p *pair) {
		p.expect(stats(p.smsCampaign().ID), edit)
		p.expect(stats(p.emailCampaign().ID), edit)
	}
}

// Spec §2.3 and §4.3: Campaign Stats.
func init() {
	register(map[violation.Name]probe{
		"stats-key-missing": {run: func(p *pair) {
			p.expect(stats(p.emailCampaign().ID), func(a *answer) { delete(obj(a.Doc, "emailStat"), "Complained") })
		}},
		"stats-count-string": {run: onBoth(func(a *answer) {
			for _, o := range []string{"emailStat", "smsStat"} {
				counts(a, o, func(n any) any { return fmt.Sprint(n) })
			}
		})},
		"stats-sms-missing": {run: onBoth(func(a *answer) { delete(a.obj(), "smsStat") })},
		"stats-no-requirement": {run: func(p *pair) {
			p.expect(post(simulator.OpCampaignStats, `{}`), func(a *answer) {
				errorAnswer(a, http.StatusNotFound, simulator.MsgCampaignNotFound)
			})
			p.expect(post(simulator.OpCampaignStats, `{"campaignId":null}`), func(a *answer) {
				errorAnswer(a, http.StatusNotFound, simulator.MsgCampaignNotFound)
			})
			p.same(stats(p.smsCampaign().ID))
		}},
		"stats-400-message": {run: func(p *pair) {
			p.expect(post(simulator.OpCampaignStats, `{}`), func(a *answer) { a.obj()["error"] = "campaignId missing" })
			p.same(post(simulator.OpCampaignStats, `{"campaignId":"x"}`))
		}},
	})
}
