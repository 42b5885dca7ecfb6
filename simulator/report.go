package simulator

import "time"

// RequestRecord is one answered partner request as the request path saw
// it: its journal entry and what the client report judges it by. The
// server fills one per request on its way through and hands it, once
// answered, to its RequestObserver: the report never reaches into the
// request itself.
type RequestRecord struct {
	Entry JournalEntry
	// Finding and FindingDetail name the mistake the server refused the
	// request for (or, on a 200, warned about), one of the Finding*
	// kinds; empty when it noted none (the observer may still judge the
	// status).
	Finding, FindingDetail string
	// Now is the account's clock at the rate decision (spec §8); zero when
	// the request did not reach it.
	Now time.Time
	// Limited: the rate limiter refused the request (429).
	Limited bool
	// RetryAfter is the Retry-After the answer carried (the limiter's 429
	// or an injected one), whole seconds as sent; zero for none.
	RetryAfter time.Duration
	// ContactAdded: Add Contact stored a contact with ContactEmail and
	// ContactPhone (spec §2.1's email and phoneNo).
	ContactAdded               bool
	ContactEmail, ContactPhone string
}

// Account is the account whose request the record is: the one it
// authenticated as, else the one it was attributed to; "" for none.
func (r *RequestRecord) Account() string {
	if r.Entry.AccountID != "" {
		return r.Entry.AccountID
	}
	return r.Entry.AttributedTo
}

// RequestObserver is told of every partner request once it is answered:
// the one hook of the request path. ObserveRequest is called before the
// answer's header goes out, from many goroutines at once; it must not keep
// rec past the call.
type RequestObserver interface {
	ObserveRequest(rec *RequestRecord)
}

// ClientReporter keeps the client reports (ClientReport): it observes the
// partner requests, and the control API reads and resets it.
type ClientReporter interface {
	RequestObserver
	// Report returns the report of accountID, a known account; one with
	// no request yet has a clean, empty report.
	Report(accountID string) ClientReport
	// Reset forgets every report (POST /reset): they start again now.
	Reset()
	// StartAccount starts accountID's report afresh from now (a throwaway
	// account made by POST /accounts); ForgetAccount drops it (DELETE
	// /accounts/{accountId}).
	StartAccount(accountID string)
	ForgetAccount(accountID string)
}

// ClientReport is what the simulator saw one account's client do, judged
// against the spec: the control API's GET /accounts/{accountId}/report. A
// client that broke no rule has no findings (Clean).
type ClientReport struct {
	AccountID string `json:"accountId"`
	// Since is when the simulator started observing (start, reset, or the
	// account's creation); Requests is how many requests it attributed to
	// the account since.
	Since    time.Time `json:"since"`
	Requests int       `json:"requests"`
	// RateLimit and RateWindow are the limits the simulator ran with: the
	// rate rules (§8) judge the client against them.
	RateLimit  int    `json:"rateLimit"`
	RateWindow string `json:"rateWindow"`
	Clean      bool   `json:"clean"`
	// Findings are ordered by spec section, then kind; never nil.
	Findings []Finding `json:"findings"`
	// SpecPace tells, as information (never a finding), how the client's
	// pace compares with the spec's 100 per minute. Nil when the simulator
	// runs the spec's own limit: then the rate rules judged exactly that.
	SpecPace *SpecPace `json:"specPace,omitempty"`
}

// SpecPace is a client's pace against spec §8's limit, for a simulator that
// runs another one: what the real service would have done with the same
// requests.
type SpecPace struct {
	// Limit and Window are the spec's: 100 per 1m0s.
	Limit  int    `json:"limit"`
	Window string `json:"window"`
	// BusiestMinute is the most requests of the account that reached the
	// rate decision within any 60 s; at most clientreport.MaxPaceCount, a
	// floor when it is that.
	BusiestMinute int `json:"busiestMinute"`
	// WouldBeRefused is how many of them the spec's limiter would have
	// refused with 429 (it counts the requests it allows, as the
	// simulator's does).
	WouldBeRefused int `json:"wouldBeRefused"`
	// Note says the same in a sentence, with how the simulator's limit
	// differs from the spec's.
	Note string `json:"note"`
}

// Finding is one kind of mistake the client made, with how often.
type Finding struct {
	// Kind names the mistake; one of the Finding* constants.
	Kind string `json:"kind"`
	// Section is the spec section the rule comes from, e.g. "§8".
	Section string `json:"section"`
	// Severity is "error" (the spec's rule is broken) or "warning" (allowed
	// but wasteful or risky): clientreport.SeverityError or SeverityWarning.
	Severity string `json:"severity"`
	Title    string `json:"title"`
	Count    int    `json:"count"`
	// ExampleRequestID is one such request's id in the journal (the
	// X-Request-Id the simulator answered with).
	ExampleRequestID string `json:"exampleRequestId"`
	// Detail narrows the kind, e.g. the field of an invalid body or the
	// missing header. Empty when the kind says it all.
	Detail string `json:"detail,omitempty"`
	Advice string `json:"advice"`
}

// Kinds of Finding: the mistakes the client report (ClientReport) tells a
// partner about. The partner API names one in a RequestRecord when it
// refuses (or warns about) a request; each has one entry in
// simulator/clientreport's FindingCatalogue, which gives the rest of the
// Finding (section, severity, title, advice).
const (
	// FindingMalformedJSON: a body that is not one JSON object in UTF-8
	// (bad syntax, empty, a field twice, data after it).
	FindingMalformedJSON = "malformed-json"
	// FindingWrongMethod: an operation called with a method other than POST.
	FindingWrongMethod = "wrong-method"
	// FindingWrongContentType: a request body not sent as application/json.
	FindingWrongContentType = "wrong-content-type"
	// FindingUnknownOperation: a path that is none of the three operations
	// under /v3/partner/webhook.
	FindingUnknownOperation = "unknown-operation"
	// FindingInvalidField: a body refused for one field, named in Detail.
	FindingInvalidField = "invalid-field"
	// FindingUnknownField: a body with a field the operation does not take.
	FindingUnknownField = "unknown-field"
	// FindingPageSizeOverMax: Campaign List with limit above 50.
	FindingPageSizeOverMax = "page-size-over-max"
	// FindingPageBelowOne: Campaign List with page below 1.
	FindingPageBelowOne = "page-below-one"
	// FindingPagePastEnd: Campaign List for a page past totalPages.
	FindingPagePastEnd = "page-past-end"
	// FindingDuplicateContact: Add Contact for a contact already added.
	FindingDuplicateContact = "duplicate-contact"
	// FindingUnknownCampaign: Campaign Stats for an Id the account does not
	// own.
	FindingUnknownCampaign = "unknown-campaign"
	// FindingMissingHeader: one of the three headers of spec §5 missing,
	// named in Detail.
	FindingMissingHeader = "missing-header"
	// FindingRepeatedHeader: one of the three headers sent more than once,
	// named in Detail.
	FindingRepeatedHeader = "repeated-header"
	// FindingWrongCredentials: a key and secret that match no account.
	FindingWrongCredentials = "wrong-credentials"
	// FindingWrongAccountID: an x-account-id that is not the key's.
	FindingWrongAccountID = "wrong-account-id"
	// FindingRateLimited: a 429 of the simulator's rate limiter that the
	// client did not honour: its next request of the account came before
	// the Retry-After had passed. A 429 waited out is no finding, whatever
	// limit the simulator runs.
	FindingRateLimited = "rate-limited"
	// FindingRetryTooSoon: a request sent before the Retry-After of an
	// earlier 429 had passed.
	FindingRetryTooSoon = "retry-too-soon"
	// FindingHammering: a request refused 429 by the limiter that was
	// itself sent before an earlier 429's Retry-After had passed.
	FindingHammering = "hammering"
	// FindingRefused: any other 4xx the simulator answered (too large a
	// body, a body too slow, headers too large...), its status in Detail.
	FindingRefused = "refused"
)
