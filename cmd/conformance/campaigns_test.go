package main

import (
	"fmt"
	"time"
)

// campaignStyle is how one test deployment's campaigns differ from
// another's where §2.2 and §3 give no values: its vocabulary, its Ids,
// names and times, and the order it lists them in. tinyService,
// frameworkService and gatewayService each have one (altService builds
// its own: its campaigns also vary in active, broadcast and extras).
type campaignStyle struct {
	vocab []struct{ status, colour, reason string }
	zones []struct{ name, offset string }
	start time.Time
	// every is the time between two campaigns' creation; broadcast and
	// updated how long after creation each is broadcast and updated (it
	// is scheduled an hour after).
	every, broadcast, updated time.Duration
	count                     func(acct int) int
	id                        func(acct, i int) int
	name                      func(i int) string
	campaignType, autoResend  func(i int) int
	channels                  [2]string
	// list puts the campaigns in the order they are listed, in place.
	list func([]map[string]any)
}

// campaigns are account acct's campaigns, as listed.
func (st campaignStyle) campaigns(acct int) []map[string]any {
	const ts = "2006-01-02T15:04:05.000Z"
	out := make([]map[string]any, st.count(acct))
	for i := range out {
		v, z, at := st.vocab[i%len(st.vocab)], st.zones[i%len(st.zones)], st.start.Add(time.Duration(i)*st.every)
		var reason any
		if v.reason != "" {
			reason = v.reason
		}
		out[i] = map[string]any{
			"Id": st.id(acct, i), "campaignName": st.name(i), "campaignType": st.campaignType(i),
			"campaignChannel": st.channels[i%2], "status": v.status, "statusColor": v.colour,
			"active": 1, "scheduledOn": at.Add(time.Hour).Format(ts), "scheduledTimeZone": z.name, "offset": z.offset,
			"autoResend": st.autoResend(i), "broadcastOn": at.Add(st.broadcast).Format(ts), "broadcast": 1,
			"createdAt": at.Format(ts), "updatedAt": at.Add(st.updated).Format(ts), "reason": reason,
		}
	}
	st.list(out)
	return out
}

// named is a campaign name function: format with the campaign's index.
func named(format string) func(int) string {
	return func(i int) string { return fmt.Sprintf(format, i) }
}
