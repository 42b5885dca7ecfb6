package learn

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// Request is one request class the learner sends to learn a choice, as
// data: the learner builds its probes from Requests, and the client-eye
// comparison (steps/probe) sends the same classes to two sides, so that
// every class a profile was learned from is compared where a client sees
// it (issue 28).
type Request struct {
	// Choice is the profile choice the request shows, as its JSON path
	// ("campaignList.limitAboveMax", "contact.validation.gender.value");
	// "campaignStats.known" is the statistics of a listed campaign, which
	// the learner sends before the other Campaign Stats probes.
	Choice string
	// Method is POST when empty; Path is relative to the base URL.
	Method, Path string
	// Body may hold the placeholders of Vars ({email}, {phone}, {page},
	// {campaignId}, {unknownCampaignId}); With fills them in.
	Body string
	// ContentType is sent instead of application/json when set.
	ContentType string
	// Header holds further headers (Accept-Encoding).
	Header map[string]string
	// NoAccount leaves x-account-id out; WrongSecret sends the account's
	// secret made wrong (§5).
	NoAccount, WrongSecret bool
	// Times is how often the request is sent, the same body each time
	// (a duplicate contact); 0 means once.
	Times int
	// Field is the body field the request is about, "" for none: a
	// refusal naming it is learned with {field} in its place, so that the
	// simulator names the field a client really sent.
	Field string
}

// Vars are the values a Request's body takes from the run and the
// account: a new contact's address or phone number, a page number, an Id
// the account lists and one it does not. They are inserted as they are
// (no JSON escaping: the values are the run's own).
type Vars struct {
	Email, Phone      string
	Page              int
	CampaignID        int
	UnknownCampaignID int
}

// With is r with v's values in its body.
func (r Request) With(v Vars) Request {
	r.Body = strings.NewReplacer("{email}", v.Email, "{phone}", v.Phone, "{page}", strconv.Itoa(v.Page),
		"{campaignId}", strconv.Itoa(v.CampaignID), "{unknownCampaignId}", strconv.Itoa(v.UnknownCampaignID)).Replace(r.Body)
	return r
}

// UnknownCampaignID is the Id campaignStats.unknown's probe asks for: well
// past every Id the account lists.
func UnknownCampaignID(ids []int) int { return slices.Max(ids) + 1000003 }

// Requests are the request classes the learner sends outside the body
// limit's, the latency sample's and the rate limit's (those measure sizes,
// time and a spent budget, not one answer), in the order it sends them.
func Requests() []Request {
	list, stats, add := spec.PathCampaignList, spec.PathCampaignStats, spec.PathContactAdd
	rs := []Request{
		{Choice: "auth.missingAccount", Path: list, Body: listBody, NoAccount: true},
		{Choice: "auth.credentialsFirst", Path: stats, Body: `{}`, WrongSecret: true},
		// A framework's own words for a body that is no object (issue 28).
		{Choice: "requestBody.notObject", Path: list, Body: profile.ProbeNotObject},
		{Choice: "requestBody.endOfInput", Path: list, Body: profile.ProbeEndOfInput},
		{Choice: "campaignList.limitAboveMax", Path: list, Body: `{"limit": 80, "page": 1}`, Field: "limit"},
		{Choice: "campaignList.limitBelowOne", Path: list, Body: `{"limit": 0, "page": 1}`, Field: "limit"},
		{Choice: "campaignList.pageBelowOne", Path: list, Body: `{"limit": 5, "page": 0}`, Field: "page"},
		{Choice: "campaignList.limitMissing", Path: list, Body: `{"page": 1}`, Field: "limit"},
		{Choice: "campaignList.pageMissing", Path: list, Body: `{"limit": 5}`, Field: "page"},
		{Choice: "campaignList.wrongType", Path: list, Body: `{"limit": "5", "page": 1}`, Field: "limit"},
		{Choice: "campaignList.extraField", Path: list, Body: `{"limit": 5, "page": 1, "` + profile.ProbeExtraField + `": "x"}`, Field: profile.ProbeExtraField},
		// Other wrong types than a numeric string, and null (issue 28).
		{Choice: "campaignList.notInteger", Path: list, Body: profile.ProbeListFraction, Field: "limit"},
		{Choice: "campaignList.null", Path: list, Body: profile.ProbeListNull, Field: "limit"},
		// The walk at the spec's largest page, and the page after the last.
		{Choice: "campaignList.order", Path: list, Body: fmt.Sprintf(`{"limit": %d, "page": {page}}`, spec.MaxPageSize)},
		{Choice: "campaignList.pastLast", Path: list, Body: fmt.Sprintf(`{"limit": %d, "page": {page}}`, spec.MaxPageSize)},
		{Choice: "campaignStats.known", Path: stats, Body: `{"campaignId": {campaignId}}`},
		{Choice: "campaignStats.unknown", Path: stats, Body: `{"campaignId": {unknownCampaignId}}`, Field: "campaignId"},
		{Choice: "campaignStats.numericString", Path: stats, Body: `{"campaignId": "{campaignId}"}`, Field: "campaignId"},
		{Choice: "campaignStats.extraField", Path: stats, Body: `{"campaignId": {campaignId}, "` + profile.ProbeExtraField + `": 1}`, Field: profile.ProbeExtraField},
		{Choice: "campaignStats.notInteger", Path: stats, Body: profile.ProbeStatsFraction, Field: "campaignId"},
		{Choice: "campaignStats.null", Path: stats, Body: profile.ProbeStatsNull, Field: "campaignId"},
		{Choice: "contact.duplicateEmail", Path: add, Body: `{"email": "{email}"}`, Times: 2},
		{Choice: "contact.duplicatePhone", Path: add, Body: `{"phoneNo": "{phone}"}`, Times: 2},
	}
	for _, vc := range profile.ValidationCases() {
		b, _ := json.Marshal(map[string]json.RawMessage{"email": json.RawMessage(`"{email}"`), vc.Field: json.RawMessage(vc.Value)})
		rs = append(rs, Request{Choice: "contact.validation." + vc.Class, Path: add, Body: string(b), Field: vc.Field})
	}
	return append(rs,
		Request{Choice: "http.unknownPath", Path: profile.ProbeUnknownPath, Body: listBody},
		Request{Choice: "http.otherMethod", Method: profile.ProbeOtherMethod, Path: profile.ProbeOtherMethodPath},
		Request{Choice: "http.requestContentType", Path: list, Body: listBody, ContentType: profile.ProbeRequestContentType},
		Request{Choice: "http.gzip", Path: list, Body: listBody, Header: map[string]string{"Accept-Encoding": "gzip"}},
	)
}

// requestFor is the learner's request of choice; a name that is not in
// Requests is a bug of the learner.
func requestFor(choice string) Request {
	for _, r := range Requests() {
		if r.Choice == choice {
			return r
		}
	}
	panic("learn: no request for " + choice)
}

// req is r, filled in with v, as the learner sends it.
func (l *learner) req(r Request, v Vars) req {
	r = r.With(v)
	out := req{method: r.Method, path: r.Path, body: r.Body, noAccount: r.NoAccount, contentType: r.ContentType, header: r.Header, field: r.Field}
	if r.WrongSecret {
		out.acct = l.env.Primary
		out.acct.APISecret += "-wrong"
	}
	return out
}
