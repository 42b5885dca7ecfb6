package simulator

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/partner-v3/conformance-kit/simulator/spec"
)

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
	// rate decision within any 60 s; at most MaxPaceCount, a floor
	// when it is MaxPaceCount.
	BusiestMinute int `json:"busiestMinute"`
	// WouldBeRefused is how many of them the spec's limiter would have
	// refused with 429 (it counts the requests it allows, as the
	// simulator's does).
	WouldBeRefused int `json:"wouldBeRefused"`
	// Note says the same in a sentence, with how the simulator's limit
	// differs from the spec's.
	Note string `json:"note"`
}

// MaxPaceCount bounds SpecPace.BusiestMinute: the report keeps at most
// that many request times per account.
const MaxPaceCount = 10_000

// Finding is one kind of mistake the client made, with how often.
type Finding struct {
	// Kind names the mistake; one of the Finding* constants.
	Kind string `json:"kind"`
	// Section is the spec section the rule comes from, e.g. "§8".
	Section string `json:"section"`
	// Severity is "error" (the spec's rule is broken) or "warning" (allowed
	// but wasteful or risky).
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
// partner about. Each has one entry in FindingCatalogue.
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

// Severities of a Finding.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
)

// FindingInfo is what the catalogue says of one kind of Finding.
type FindingInfo struct {
	Section  string
	Severity string
	Title    string
	Advice   string
}

// FieldSections are the spec sections of the fields of Campaign List and
// Campaign Stats: a FindingInvalidField for one of them cites it instead of
// the catalogue's §2.1 (Add Contact's fields).
var FieldSections = map[string]string{"limit": "§4.2", "page": "§4.2", "campaignId": "§4.3"}

// operationURLs words the paths of spec.Paths() under the base address as
// the advice gives them: "{base}/contact/add, /campaign/list and
// /campaign/stats".
func operationURLs() string {
	paths := spec.Paths()
	for i, p := range paths {
		paths[i] = "/" + p
	}
	if len(paths) == 0 {
		return "{base}"
	}
	paths[0] = "{base}" + paths[0]
	if len(paths) == 1 {
		return paths[0]
	}
	return strings.Join(paths[:len(paths)-1], ", ") + " and " + paths[len(paths)-1]
}

// FindingCatalogue holds every kind's spec section, severity, title and
// advice: one source for the JSON report, its Markdown form and the docs.
var FindingCatalogue = map[string]FindingInfo{
	FindingMalformedJSON: {"§1", SeverityError, "Body is not one JSON object",
		"Spec §1 rule 2: every body is JSON. Serialise the body with a JSON encoder (never by string concatenation), in UTF-8 without a byte-order mark, each field once, nothing after the object."},
	FindingWrongMethod: {"§1", SeverityError, "Operation called with a method other than POST",
		"Spec §1 rule 4: all three operations use POST. Send POST, also for Campaign List and Campaign Stats, which only read."},
	FindingWrongContentType: {"§1", SeverityError, "Body not sent as application/json",
		"Spec §1 rule 2: send Content-Type: application/json (a charset of utf-8 is fine) once, with an uncompressed body."},
	FindingUnknownOperation: {"§1", SeverityError, "Path is not one of the three operations",
		fmt.Sprintf("Spec §1 and §9: the operations are POST %s, under the base address ending in %s. Build paths from the base address, without a trailing slash or escaped characters.",
			operationURLs(), spec.BasePath)},
	FindingInvalidField: {"§2.1", SeverityError, "Body refused for a field",
		"The 400's message names the field and what it must be (spec §2.1 for Add Contact, §4.2 and §4.3 for the others). Validate the field before sending: a 400 is never worth retrying."},
	FindingUnknownField: {"§2.1", SeverityError, "Body has a field the operation does not take",
		"Send only the fields of spec §2.1 (Add Contact), §4.2 (limit, page) or §4.3 (campaignId), spelt as the spec spells them (phoneNo, not phone)."},
	FindingDuplicateContact: {"§2.1", SeverityWarning, "Add Contact sent again for a contact already added",
		"Spec §2.1 shows no behaviour for a contact that already exists, so what a re-send does on the real service (an error, a second contact, an update) is unknown. Remember which contacts you added and send each once; retry only a request that failed (5xx, no answer)."},
	FindingPageSizeOverMax: {"§8", SeverityError, fmt.Sprintf("Campaign List with limit above %d", spec.MaxPageSize),
		fmt.Sprintf("Spec §4.2 and §8: limit is at most %d. Ask for %[1]d and follow the pages.", spec.MaxPageSize)},
	FindingPageBelowOne: {"§8", SeverityError, fmt.Sprintf("Campaign List with page below %d", spec.MinPage),
		fmt.Sprintf("Spec §4.2 and §8: pages count from %d.", spec.MinPage)},
	FindingPagePastEnd: {"§4.2", SeverityWarning, "Campaign List for a page past totalPages",
		"Spec §4.2: stop at the totalPages of the answer; a page past it holds no campaign and costs a request of the budget of §8."},
	FindingUnknownCampaign: {"§4.3", SeverityWarning, "Campaign Stats for a campaign the account does not own",
		"Take campaignId from the Id of a campaign Campaign List returned for the same account (spec §2.2, §4.3)."},
	FindingMissingHeader: {"§5", SeverityError, "Authentication header missing",
		fmt.Sprintf("Spec §5: every request carries %s, %s and %s. Set all three on every request, also on retries.",
			spec.HeaderAPIKey, spec.HeaderAPISecret, spec.HeaderAccountID)},
	FindingRepeatedHeader: {"§5", SeverityError, "Authentication header sent more than once",
		"Spec §5 shows one of each header: set it once (Header.Set, not Header.Add), also when a retry or a middleware adds its own."},
	FindingWrongCredentials: {"§5", SeverityError, "Key and secret match no account",
		"Spec §5 rule 1: the service answers 401. Check that the key and secret are the pair issued together, with no surrounding space; a 401 is never worth retrying."},
	FindingWrongAccountID: {"§5", SeverityError, spec.HeaderAccountID + " is not the key's account",
		"Spec §5 rule 2: the service answers 403. Send the account identifier issued with the key, as it was issued (it is the encrypted identifier)."},
	FindingRateLimited: {"§8", SeverityError, "Refused 429 by the rate limiter, and not waited out",
		"Spec §7 and §8: after a 429, wait the Retry-After it carries, counted from the answer, before the next request of the account (the limit is shared by all operations); better, pace the client below the limit so that it meets few 429s."},
	FindingRetryTooSoon: {"§8", SeverityError, "Request sent before Retry-After had passed",
		"Spec §7 and §8: after a 429, wait at least the Retry-After seconds it carries, counted from the answer, before any request of the account (the limit is shared by all operations)."},
	FindingHammering: {"§8", SeverityError, "Refused 429 again while an earlier Retry-After was running",
		"The client kept sending after a 429 without waiting. Stop every request of the account until Retry-After has passed (one shared pause, not one per goroutine), then resume paced."},
	FindingRefused: {"§7", SeverityError, "Request refused for another reason",
		"Detail holds the HTTP status; the answer's error message says why (e.g. 413 for a body over the size cap, 408 for a body that came too slowly)."},
}

// Markdown renders the report for a CI log or a pull request: a summary,
// the information on the spec's limit, a table of the findings and each
// kind's advice (GET /accounts/{accountId}/report with Accept:
// text/markdown).
func (rep ClientReport) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Client report: %s\n\n", rep.AccountID)
	fmt.Fprintf(&b, "%d requests since %s. The simulator's rate limit: %d per %s; the rate rules (§8) judge the client against it.\n\n",
		rep.Requests, rep.Since.UTC().Format(time.RFC3339), rep.RateLimit, rep.RateWindow)
	if rep.SpecPace != nil {
		fmt.Fprintf(&b, "Information, not a finding: %s\n\n", rep.SpecPace.Note)
	}
	if rep.Clean {
		b.WriteString("**Clean**: the client broke no rule the simulator checks.\n")
		return b.String()
	}
	fmt.Fprintf(&b, "%d findings.\n\n", len(rep.Findings))
	b.WriteString("| Section | Severity | Finding | Detail | Count | Example request |\n|---|---|---|---|---|---|\n")
	for _, f := range rep.Findings {
		fmt.Fprintf(&b, "| %s | %s | %s (`%s`) | %s | %d | `%s` |\n",
			f.Section, f.Severity, f.Title, f.Kind, f.Detail, f.Count, f.ExampleRequestID)
	}
	b.WriteString("\n## Advice\n")
	var seen []string
	for _, f := range rep.Findings {
		if slices.Contains(seen, f.Kind) {
			continue
		}
		seen = append(seen, f.Kind)
		fmt.Fprintf(&b, "\n- **%s** (`%s`, %s): %s\n", f.Title, f.Kind, f.Section, f.Advice)
	}
	return b.String()
}
