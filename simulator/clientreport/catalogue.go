package clientreport

import (
	"fmt"
	"strings"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// The catalogue of findings: what the client report tells a partner of
// each kind of mistake the partner API records (simulator.Finding*). It
// lives with the report that fills simulator.Finding from it, not in the
// root package, which holds only the kinds the partner API names.

// MaxPaceCount bounds simulator.SpecPace's BusiestMinute: the report keeps
// at most that many request times per account.
const MaxPaceCount = 10_000

// Severities of a simulator.Finding.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
)

// FindingInfo is what the catalogue says of one kind of simulator.Finding.
type FindingInfo struct {
	Section  string
	Severity string
	Title    string
	Advice   string
}

// FieldSections are the spec sections of the fields of Campaign List and
// Campaign Stats: a simulator.FindingInvalidField for one of them cites it
// instead of the catalogue's §2.1 (Add Contact's fields).
var FieldSections = map[string]string{"limit": "§4.2", "page": "§4.2", "campaignId": "§4.3"}

// FindingCatalogue holds every kind's spec section, severity, title and
// advice: one source for the JSON report, its Markdown form and the docs.
var FindingCatalogue = map[string]FindingInfo{
	simulator.FindingMalformedJSON: {"§1", SeverityError, "Body is not one JSON object",
		"Spec §1 rule 2: every body is JSON. Serialise the body with a JSON encoder (never by string concatenation), in UTF-8 without a byte-order mark, each field once, nothing after the object."},
	simulator.FindingWrongMethod: {"§1", SeverityError, "Operation called with a method other than POST",
		"Spec §1 rule 4: all three operations use POST. Send POST, also for Campaign List and Campaign Stats, which only read."},
	simulator.FindingWrongContentType: {"§1", SeverityError, "Body not sent as application/json",
		"Spec §1 rule 2: send Content-Type: application/json (a charset of utf-8 is fine) once, with an uncompressed body."},
	simulator.FindingUnknownOperation: {"§1", SeverityError, "Path is not one of the three operations",
		fmt.Sprintf("Spec §1 and §9: the operations are POST %s, under the base address ending in %s. Build paths from the base address, without a trailing slash or escaped characters.",
			operationURLs(), spec.BasePath)},
	simulator.FindingInvalidField: {"§2.1", SeverityError, "Body refused for a field",
		"The 400's message names the field and what it must be (spec §2.1 for Add Contact, §4.2 and §4.3 for the others). Validate the field before sending: a 400 is never worth retrying."},
	simulator.FindingUnknownField: {"§2.1", SeverityError, "Body has a field the operation does not take",
		"Send only the fields of spec §2.1 (Add Contact), §4.2 (limit, page) or §4.3 (campaignId), spelt as the spec spells them (phoneNo, not phone)."},
	simulator.FindingDuplicateContact: {"§2.1", SeverityWarning, "Add Contact sent again for a contact already added",
		"Spec §2.1 shows no behaviour for a contact that already exists, so what a re-send does on the real service (an error, a second contact, an update) is unknown. Remember which contacts you added and send each once; retry only a request that failed (5xx, no answer)."},
	simulator.FindingPageSizeOverMax: {"§8", SeverityError, fmt.Sprintf("Campaign List with limit above %d", spec.MaxPageSize),
		fmt.Sprintf("Spec §4.2 and §8: limit is at most %d. Ask for %[1]d and follow the pages.", spec.MaxPageSize)},
	simulator.FindingPageBelowOne: {"§8", SeverityError, fmt.Sprintf("Campaign List with page below %d", spec.MinPage),
		fmt.Sprintf("Spec §4.2 and §8: pages count from %d.", spec.MinPage)},
	simulator.FindingPagePastEnd: {"§4.2", SeverityWarning, "Campaign List for a page past totalPages",
		"Spec §4.2: stop at the totalPages of the answer; a page past it holds no campaign and costs a request of the budget of §8."},
	simulator.FindingUnknownCampaign: {"§4.3", SeverityWarning, "Campaign Stats for a campaign the account does not own",
		"Take campaignId from the Id of a campaign Campaign List returned for the same account (spec §2.2, §4.3)."},
	simulator.FindingMissingHeader: {"§5", SeverityError, "Authentication header missing",
		fmt.Sprintf("Spec §5: every request carries %s, %s and %s. Set all three on every request, also on retries.",
			spec.HeaderAPIKey, spec.HeaderAPISecret, spec.HeaderAccountID)},
	simulator.FindingRepeatedHeader: {"§5", SeverityError, "Authentication header sent more than once",
		"Spec §5 shows one of each header: set it once (Header.Set, not Header.Add), also when a retry or a middleware adds its own."},
	simulator.FindingWrongCredentials: {"§5", SeverityError, "Key and secret match no account",
		"Spec §5 rule 1: the service answers 401. Check that the key and secret are the pair issued together, with no surrounding space; a 401 is never worth retrying."},
	simulator.FindingWrongAccountID: {"§5", SeverityError, spec.HeaderAccountID + " is not the key's account",
		"Spec §5 rule 2: the service answers 403. Send the account identifier issued with the key, as it was issued (it is the encrypted identifier)."},
	simulator.FindingRateLimited: {"§8", SeverityError, "Refused 429 by the rate limiter, and not waited out",
		"Spec §7 and §8: after a 429, wait the Retry-After it carries, counted from the answer, before the next request of the account (the limit is shared by all operations); better, pace the client below the limit so that it meets few 429s."},
	simulator.FindingRetryTooSoon: {"§8", SeverityError, "Request sent before Retry-After had passed",
		"Spec §7 and §8: after a 429, wait at least the Retry-After seconds it carries, counted from the answer, before any request of the account (the limit is shared by all operations)."},
	simulator.FindingHammering: {"§8", SeverityError, "Refused 429 again while an earlier Retry-After was running",
		"The client kept sending after a 429 without waiting. Stop every request of the account until Retry-After has passed (one shared pause, not one per goroutine), then resume paced."},
	simulator.FindingRefused: {"§7", SeverityError, "Request refused for another reason",
		"Detail holds the HTTP status; the answer's error message says why (e.g. 413 for a body over the size cap, 408 for a body that came too slowly)."},
}

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
