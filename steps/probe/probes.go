package probe

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/partner-v3/conformance-kit/simulator/profile"

	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/learn"
)

// Probe is one request class sent to both sides: a request of the
// learner's (learn.Requests) or one the profile did not learn from, with
// the ways of sending it that a learner's request cannot say.
type Probe struct {
	// Name says what the request is; a learner's is its choice.
	Name string `json:"name"`
	// Learned says the profile was learned from this request class.
	Learned bool `json:"learned"`
	learn.Request
	// NoContentType sends the body without a Content-Type.
	NoContentType bool `json:"noContentType,omitempty"`
	// WrongKey sends a wrong x-api-key; UnknownAccount an x-account-id no
	// account has (§5).
	WrongKey, UnknownAccount bool `json:"-"`
	// Pages, when set, walks Campaign List: the request is sent once per
	// page with {page} set to it, and the Ids of every page together give
	// the order of pages.
	Pages []int `json:"pages,omitempty"`
	// UpToPage, when set, asks for that page or, on a side whose own
	// listing (campaignList.order's first page) has fewer pages, its last:
	// each side asks a page its own data has, as {campaignId} and the
	// page past the last come from each side's own listing.
	UpToPage int `json:"upToPage,omitempty"`
}

// sends is how many requests the probe sends to each side.
func (p Probe) sends() int {
	return max(len(p.Pages), p.Times, 1)
}

// Probes are the request classes the comparison sends, in order: every
// class the profile learner uses (learn.Requests), then requests it did
// not learn from (other paths, methods, fields and wrong values, a
// missing Content-Type, two faults at once), so that a choice generalised
// wrongly from one request shows on the next.
func Probes() []Probe {
	var ps []Probe
	for _, r := range learn.Requests() {
		p := Probe{Name: r.Choice, Learned: true, Request: r}
		if r.Choice == "campaignList.order" {
			p.Body = fmt.Sprintf(`{"limit": %d, "page": {page}}`, spec.MaxPageSize)
			p.Pages = []int{1}
		}
		ps = append(ps, p)
	}
	list, stats, add := spec.PathCampaignList, spec.PathCampaignStats, spec.PathContactAdd
	const listBody = `{"limit": 1, "page": 1}`
	// A Campaign List body padded with spaces to n bytes, as the learner's
	// body-limit probe sends it.
	padded := func(n int) string {
		return listBody[:len(listBody)-1] + strings.Repeat(" ", max(n-len(listBody), 0)) + "}"
	}
	// The body limit's smallest size: the learner sends it first and
	// further sizes only while they are served.
	ps = append(ps, Probe{Name: "http.bodyLimit", Learned: true,
		Request: learn.Request{Choice: "http.bodyLimit", Path: list, Body: padded(profile.BodySizes[0])}})
	other := []Probe{
		// Valid requests: the success answers' shape.
		{Name: "a new contact", Request: learn.Request{Path: add, Body: `{"email": "new-{email}", "firstName": "Ada", "country": "UK", "tag": ["probe"]}`}},
		{Name: "pages 1 to 3 of 2 campaigns", Request: learn.Request{Path: list, Body: `{"limit": 2, "page": {page}}`}, Pages: []int{1, 2, 3}},
		{Name: "the largest page, page 2", Request: learn.Request{Path: list, Body: fmt.Sprintf(`{"limit": %d, "page": {page}}`, spec.MaxPageSize)}, UpToPage: 2},
		// Other paths and methods.
		{Name: "another unknown path", Request: learn.Request{Path: "contacts/search", Body: `{}`}},
		{Name: "an operation's path with a tail", Request: learn.Request{Path: list + "/all", Body: listBody}},
		{Name: "an operation's path with a trailing slash", Request: learn.Request{Path: list + "/", Body: listBody}},
		{Name: "PUT on an operation", Request: learn.Request{Method: http.MethodPut, Path: stats, Body: `{"campaignId": {campaignId}}`}},
		{Name: "DELETE on an operation", Request: learn.Request{Method: http.MethodDelete, Path: add}},
		{Name: "GET on an unknown path", Request: learn.Request{Method: http.MethodGet, Path: "nothing/there"}},
		// Other fields and other wrong values.
		{Name: "Campaign List with another extra field", Request: learn.Request{Path: list, Body: `{"limit": 5, "page": 1, "sort": "name"}`}},
		{Name: "Campaign Stats with another extra field", Request: learn.Request{Path: stats, Body: `{"campaignId": {campaignId}, "channel": "sms"}`}},
		{Name: "limit 51", Request: learn.Request{Path: list, Body: `{"limit": 51, "page": 1}`}},
		{Name: "limit -1", Request: learn.Request{Path: list, Body: `{"limit": -1, "page": 1}`}},
		{Name: "page -3", Request: learn.Request{Path: list, Body: `{"limit": 5, "page": -3}`}},
		{Name: "limit as an integral float", Request: learn.Request{Path: list, Body: `{"limit": 5.0, "page": 1}`}},
		{Name: "limit as a fraction", Request: learn.Request{Path: list, Body: `{"limit": 2.5, "page": 1}`}},
		{Name: "page as a string", Request: learn.Request{Path: list, Body: `{"limit": 5, "page": "1"}`}},
		{Name: "limit null", Request: learn.Request{Path: list, Body: `{"limit": null, "page": 1}`}},
		{Name: "both list fields missing", Request: learn.Request{Path: list, Body: `{}`}},
		{Name: "campaignId missing", Request: learn.Request{Path: stats, Body: `{}`}},
		{Name: "campaignId 0", Request: learn.Request{Path: stats, Body: `{"campaignId": 0}`}},
		{Name: "campaignId -1", Request: learn.Request{Path: stats, Body: `{"campaignId": -1}`}},
		{Name: "campaignId as a fraction", Request: learn.Request{Path: stats, Body: `{"campaignId": 1.5}`}},
		{Name: "campaignId true", Request: learn.Request{Path: stats, Body: `{"campaignId": true}`}},
		{Name: "campaignId a word", Request: learn.Request{Path: stats, Body: `{"campaignId": "abc"}`}},
		{Name: "a contact with neither email nor phoneNo", Request: learn.Request{Path: add, Body: `{"firstName": "Ada"}`}},
		{Name: "a contact with gender in capitals", Request: learn.Request{Path: add, Body: `{"email": "g-{email}", "gender": "Female"}`}},
		{Name: "a contact with month 13", Request: learn.Request{Path: add, Body: `{"email": "m-{email}", "dateOfBirth": "1990-13-01"}`}},
		{Name: "a contact with opt status -1", Request: learn.Request{Path: add, Body: `{"email": "o-{email}", "emailOptStatus": -1}`}},
		{Name: "a contact with opt status 1.0", Request: learn.Request{Path: add, Body: `{"email": "f-{email}", "smsOptStatus": 1.0}`}},
		{Name: "a contact with a tag list holding null", Request: learn.Request{Path: add, Body: `{"email": "t-{email}", "tag": [null]}`}},
		{Name: "a contact with email a number", Request: learn.Request{Path: add, Body: `{"email": 5}`}},
		{Name: "a contact with two unknown fields", Request: learn.Request{Path: add, Body: `{"email": "u-{email}", "alias": "x", "nickname": "y"}`}},
		// The body itself.
		{Name: "a body of 2 MiB", Request: learn.Request{Path: list, Body: padded(2 << 20)}},
		{Name: "Campaign List without a Content-Type", Request: learn.Request{Path: list, Body: listBody}, NoContentType: true},
		{Name: "Add Contact without a Content-Type", Request: learn.Request{Path: add, Body: `{"email": "c-{email}"}`}, NoContentType: true},
		{Name: "a form Content-Type", Request: learn.Request{Path: list, Body: listBody, ContentType: "application/x-www-form-urlencoded"}},
		{Name: "JSON with a charset", Request: learn.Request{Path: list, Body: listBody, ContentType: "application/json; charset=utf-8"}},
		{Name: "malformed JSON", Request: learn.Request{Path: list, Body: `{"limit": 1,`}},
		{Name: "an empty body", Request: learn.Request{Path: list}},
		{Name: "a JSON array", Request: learn.Request{Path: list, Body: `[1, 2]`}},
		{Name: "JSON null", Request: learn.Request{Path: stats, Body: `null`}},
		// Two faults at once: which refusal comes first.
		{Name: "malformed JSON and no email or phoneNo", Request: learn.Request{Path: add, Body: `{"firstName": "Ada"`}},
		{Name: "malformed JSON and no campaignId", Request: learn.Request{Path: stats, Body: `{"channel": `}},
		{Name: "a wrong secret and a limit above 50", Request: learn.Request{Path: list, Body: `{"limit": 80, "page": 1}`, WrongSecret: true}},
		{Name: "a wrong secret and malformed JSON", Request: learn.Request{Path: list, Body: `{"limit": `, WrongSecret: true}},
		{Name: "a wrong secret and no Content-Type", Request: learn.Request{Path: list, Body: listBody, WrongSecret: true}, NoContentType: true},
		{Name: "an unknown account and a wrong key", Request: learn.Request{Path: list, Body: listBody}, WrongKey: true, UnknownAccount: true},
		{Name: "an unknown account", Request: learn.Request{Path: list, Body: listBody}, UnknownAccount: true},
		{Name: "a wrong key", Request: learn.Request{Path: stats, Body: `{"campaignId": {campaignId}}`}, WrongKey: true},
		{Name: "no x-account-id on an unknown path", Request: learn.Request{Path: "nothing/here", Body: listBody, NoAccount: true}},
		{Name: "an unknown account and an unknown path", Request: learn.Request{Path: "contacts/search", Body: `{}`}, UnknownAccount: true},
		{Name: "GET with a wrong secret", Request: learn.Request{Method: http.MethodGet, Path: list, WrongSecret: true}},
	}
	return append(ps, other...)
}
