package violation_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/spec"
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
		if ch == spec.ChannelEmail {
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
		"stats-count-negative": {run: onBoth(func(a *answer) { obj(a.Doc, "emailStat")["Softbounce"] = num(-1) })},
		"stats-count-float-sms": {run: onChannel(spec.ChannelSMS, func(a *answer) {
			counts(a, "smsStat", func(n any) any { return json.Number(fmt.Sprint(n) + ".0") })
		})},
		"stats-count-null-sms": {run: onChannel(spec.ChannelSMS, func(a *answer) { obj(a.Doc, "smsStat")["Failed"] = nil })},
		"stats-key-lowercase": {run: onChannel(spec.ChannelEmail, func(a *answer) {
			e := obj(a.Doc, "emailStat")
			for k, v := range e {
				delete(e, k)
				e[strings.ToLower(k)] = v
			}
		})},
		"stats-sms-delivered-missing": {run: onBoth(func(a *answer) { delete(obj(a.Doc, "smsStat"), "Delivered") })},
		"stats-hardbounce-renamed": {run: onBoth(func(a *answer) {
			e := obj(a.Doc, "emailStat")
			e["HardBounce"] = e["Hardbounce"]
			delete(e, "Hardbounce")
		})},
		"stats-opened-string-email": {run: onChannel(spec.ChannelEmail, func(a *answer) {
			obj(a.Doc, "emailStat")["Opened"] = fmt.Sprint(obj(a.Doc, "emailStat")["Opened"])
		})},
		"stats-unsubscribe-missing-last": {run: func(p *pair) {
			all := p.account()
			p.expect(stats(all[len(all)-1].ID), func(a *answer) { delete(obj(a.Doc, "emailStat"), "Unsubscribe") })
			p.same(stats(p.emailCampaign().ID))
			p.same(stats(all[len(all)-2].ID))
		}},
		"stats-object-array": {run: onBoth(func(a *answer) {
			s := obj(a.Doc, "smsStat")
			a.obj()["smsStat"] = []any{s["Sent"], s["Delivered"], s["Failed"]}
		})},
		"stats-sms-missing":       {run: onBoth(func(a *answer) { delete(a.obj(), "smsStat") })},
		"stats-email-missing-sms": {run: onChannel(spec.ChannelSMS, func(a *answer) { delete(a.obj(), "emailStat") })},
		"stats-sms-null-email":    {run: onChannel(spec.ChannelEmail, func(a *answer) { a.obj()["smsStat"] = nil })},
		"stats-wrapped": {run: func(p *pair) {
			onBoth(func(a *answer) { a.Doc = map[string]any{"data": a.Doc} })(p)
			p.same(post(spec.PathCampaignStats, `{}`))
		}},
		"stats-no-requirement": {run: func(p *pair) {
			p.expect(post(spec.PathCampaignStats, `{}`), func(a *answer) {
				errorAnswer(a, http.StatusNotFound, simulator.MsgCampaignNotFound)
			})
			p.expect(post(spec.PathCampaignStats, `{"campaignId":null}`), func(a *answer) {
				errorAnswer(a, http.StatusNotFound, simulator.MsgCampaignNotFound)
			})
			p.same(stats(p.smsCampaign().ID))
		}},
		"stats-400-message": {run: func(p *pair) {
			p.expect(post(spec.PathCampaignStats, `{}`), func(a *answer) { a.obj()["error"] = "campaignId missing" })
			p.same(post(spec.PathCampaignStats, `{"campaignId":"x"}`))
		}},
		"stats-400-as-404": {run: func(p *pair) {
			for _, body := range []string{`{}`, `{"other":1}`} {
				p.expect(post(spec.PathCampaignStats, body), func(a *answer) {
					errorAnswer(a, http.StatusNotFound, simulator.MsgCampaignNotFound)
				})
			}
			p.same(post(spec.PathCampaignStats, `{"campaignId":"x"}`))
		}},
		"stats-id-string-only": {run: func(p *pair) {
			id := p.smsCampaign().ID
			p.expect(stats(id), func(a *answer) { errorAnswer(a, http.StatusBadRequest, "campaignId must be a string") })
			p.status(stats(1), http.StatusNotFound, http.StatusBadRequest)
			byString := post(spec.PathCampaignStats, fmt.Sprintf(`{"campaignId":"%d"}`, id))
			p.status(byString, http.StatusBadRequest, http.StatusOK)
			if got, want := p.b.do(byString), p.f.do(stats(id)); !got.equal(want) {
				p.t.Fatalf("by string: %s, want %s", got, want)
			}
		}},
		"stats-last-campaign-404": {run: func(p *pair) {
			all := p.account()
			p.expect(stats(all[len(all)-1].ID), func(a *answer) { errorAnswer(a, http.StatusNotFound, simulator.MsgCampaignNotFound) })
			p.same(stats(all[len(all)-2].ID))
			p.same(stats(all[0].ID))
		}},
		"stats-id-offset": {run: func(p *pair) {
			all := p.account()
			p.expect(stats(all[0].ID), func(a *answer) { errorAnswer(a, http.StatusNotFound, simulator.MsgCampaignNotFound) })
			for i := 1; i < len(all); i++ {
				if all[i].ID == all[i-1].ID+1 && all[i].Stats != all[i-1].Stats {
					p.expect(stats(all[i].ID), func(a *answer) { *a = p.f.do(stats(all[i-1].ID)) })
					return
				}
			}
			p.t.Fatal("no two campaigns with consecutive Ids")
		}},
	})
}
