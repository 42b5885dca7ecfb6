package violation

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

const (
	contactAdd    = spec.PathContactAdd
	campaignList  = spec.PathCampaignList
	campaignStats = spec.PathCampaignStats
)

// catalogue is every switch, grouped by the part of the spec it breaks.
// Its order is the order switches that are on together apply in.
var catalogue = []Violation{
	// §1, §4, §9: transport, JSON, methods, paths.
	v("json-content-type", "§1 rule 3: responses are labelled text/plain", breach{after: label(textPlain)}),
	v("json-label-errors", "§1 rule 3, §7: error responses are labelled text/plain", breach{after: label(textPlain, failed)}),
	v("json-label-contact", "§1 rule 3: Add Contact's 200 answer is labelled text/html", breach{after: label("text/html; charset=utf-8", contactOK)}),
	v("json-errors-plain-text", "§1 rule 3, §7: 401 and 403 bodies are the bare message as plain text", breach{after: plainText(code(http.StatusUnauthorized, http.StatusForbidden))}),
	v("json-trailing-data", "§1 rule 3: Campaign Stats' 200 body is followed by a second JSON value", breach{after: trailing(statsOK)}),
	v("json-request-charset-refused", "§1 rule 2, §4: a request labelled application/json without parameters is refused 415", breach{
		before: func(x *exchange) bool {
			if x.operation() != "" && charsetless(x.r.Header.Get("Content-Type")) {
				x.note.charsetless = true
				x.setHeader("Content-Type", refusedLabel)
			}
			return false
		},
		after: replace(http.StatusUnsupportedMediaType, "Content-Type must be application/json; charset=utf-8",
			noted(func(n *note) bool { return n.charsetless }), code(http.StatusUnsupportedMediaType)),
	}),
	v("get-served", "§1 rule 4, §4: a request with another method than POST is served 200", breach{
		before: answerOn("*", isNotPost, http.StatusOK, map[string]any{"status": "success"})}),
	v("op-stats-missing", fmt.Sprintf("§4, §4.3: POST /%s answers 404", spec.PathCampaignStats), breach{
		before: answerOn(campaignStats, isPost, http.StatusNotFound, map[string]any{"error": "Not found"})}),
	v("op-contact-post-refused", fmt.Sprintf("§4, §4.1: POST /%s answers 405", spec.PathContactAdd), breach{
		before: answerOn(contactAdd, isPost, http.StatusMethodNotAllowed, map[string]any{"error": "Method POST is not allowed"})}),
	v("version-path-unversioned", "§9: the operations are served under /partner/webhook, without /v3", breach{basePath: "/partner/webhook"}),

	// §5 authentication, with its §7 errors.
	v("auth-secret-ignored", fmt.Sprintf("§5 rule 1: a wrong %s is accepted", spec.HeaderAPISecret), breach{accounts: acceptAccounts(
		func(a *simulator.Account, key, _ string, _ []*simulator.Account) bool { return a.APIKey == key })}),
	v("auth-key-ignored", fmt.Sprintf("§5 rule 1: a wrong %s is accepted when the secret is right", spec.HeaderAPIKey), breach{accounts: acceptAccounts(
		func(a *simulator.Account, _, secret string, _ []*simulator.Account) bool {
			return a.APISecret == secret
		})}),
	v("auth-secret-any-account", "§5 rule 1: a key is accepted with the secret of any account", breach{accounts: acceptAccounts(
		func(a *simulator.Account, key, secret string, all []*simulator.Account) bool {
			return a.APIKey == key && secretOfAny(secret, all)
		})}),
	v("auth-secret-prefix", fmt.Sprintf("§5 rule 1: %s is compared on its first 8 characters only", spec.HeaderAPISecret), breach{accounts: acceptAccounts(
		func(a *simulator.Account, key, secret string, _ []*simulator.Account) bool {
			return a.APIKey == key && prefix8(secret) == prefix8(a.APISecret)
		})}),
	v("auth-key-prefix", fmt.Sprintf("§5 rule 1: %s is compared on its first 8 characters only", spec.HeaderAPIKey), breach{accounts: acceptAccounts(
		func(a *simulator.Account, key, secret string, _ []*simulator.Account) bool {
			return a.APISecret == secret && prefix8(key) == prefix8(a.APIKey)
		})}),
	v("auth-missing-key-accepted", fmt.Sprintf("§5 rule 1: a request without %s is served when secret and account id are one account's", spec.HeaderAPIKey), breach{
		before: rewriteCredentials(fillMissing(func(c *credentials) *string { return &c.key }))}),
	v("auth-missing-secret-accepted", fmt.Sprintf("§5 rule 1: a request without %s is served when key and account id are one account's", spec.HeaderAPISecret), breach{
		before: rewriteCredentials(fillMissing(func(c *credentials) *string { return &c.secret }))}),
	v("auth-account-ignored", fmt.Sprintf("§5 rule 2: a mismatched %s is accepted", spec.HeaderAccountID), breach{
		before: sameAccount(func(string, *simulator.Account, []*simulator.Account) bool { return true })}),
	v("auth-missing-account-accepted", fmt.Sprintf("§5 rule 2: a request without %s is served when key and secret are right", spec.HeaderAccountID), breach{
		before: sameAccount(func(given string, _ *simulator.Account, _ []*simulator.Account) bool { return given == "" })}),
	v("auth-account-any-known", fmt.Sprintf("§5 rule 2: the %s of another existing account is accepted", spec.HeaderAccountID), breach{
		before: sameAccount(func(given string, _ *simulator.Account, all []*simulator.Account) bool {
			for _, a := range all {
				if a.AccountID == given {
					return true
				}
			}
			return false
		})}),
	v("auth-account-prefix", fmt.Sprintf("§5 rule 2: %s is compared on its first 8 characters only", spec.HeaderAccountID), breach{
		before: sameAccount(func(given string, owner *simulator.Account, _ []*simulator.Account) bool {
			return prefix8(given) == prefix8(owner.AccountID)
		})}),
	v("auth-401-as-403", "§5 rule 1: invalid credentials answer 403 instead of 401", breach{after: status(http.StatusForbidden, code(http.StatusUnauthorized))}),
	v("auth-403-as-401", "§5 rule 2: an account mismatch answers 401 instead of 403", breach{after: status(http.StatusUnauthorized, code(http.StatusForbidden))}),
	v("auth-401-as-500", fmt.Sprintf("§5 rule 1, §7: invalid credentials answer 500 %s", spec.MsgInternal), breach{
		after: replace(http.StatusInternalServerError, spec.MsgInternal, code(http.StatusUnauthorized))}),
	v("error-403-as-404", "§5 rule 2, §7: an account mismatch answers 404 Account not found", breach{
		after: replace(http.StatusNotFound, "Account not found", code(http.StatusForbidden))}),
	v("auth-401-message", "§7: the 401 message is reworded", breach{after: message(spec.MsgInvalidCredentials, "Invalid credentials")}),
	v("auth-403-message", "§7: the 403 message is reworded", breach{after: message(spec.MsgUnauthorizedAccount, "Account access denied")}),
	v("auth-401-message-list", "§7: Campaign List's 401 message is reworded", breach{
		after: message(spec.MsgInvalidCredentials, "Invalid credentials supplied", on(campaignList))}),
	v("auth-403-message-stats", "§7: Campaign Stats' 403 message is reworded", breach{
		after: message(spec.MsgUnauthorizedAccount, "Access to this account is not allowed", on(campaignStats))}),

	// §8 rate limit, with its §7 answer.
	v("rate-off-by-one", fmt.Sprintf("§8: the %s request in a %s is let through", ordinal(spec.RateLimit+1), spec.RateWindowName), breach{limits: func(l int, w time.Duration) (int, time.Duration) { return l + 1, w }}),
	v("rate-limit-too-low", fmt.Sprintf("§8: only %d requests per %s are let through", spec.RateLimit/2, spec.RateWindowName), breach{limits: func(l int, w time.Duration) (int, time.Duration) { return max(l/2, 1), w }}),
	v("rate-limit-99", fmt.Sprintf("§8: the %s request in a %s is refused", ordinal(spec.RateLimit), spec.RateWindowName), breach{limits: func(l int, w time.Duration) (int, time.Duration) { return max(l-1, 1), w }}),
	v("rate-never-frees", fmt.Sprintf("§8: a refused account stays refused after the %s has passed", spec.RateWindowName), breach{
		limits: func(l int, _ time.Duration) (int, time.Duration) { return l, 100 * 365 * 24 * time.Hour }}),
	v("rate-window-double", fmt.Sprintf("§8: a refused account is freed only after two %ss", spec.RateWindowName), breach{limits: func(l int, w time.Duration) (int, time.Duration) { return l, 2 * w }}),
	v("rate-per-operation", "§8: each operation has its own counter instead of one per account", breach{note: true, counter: countBy(
		func(ctx context.Context, key string) (string, bool) { return key + "|" + noteFrom(ctx).op, true },
		func(key string) []string {
			keys := []string{key}
			for _, op := range spec.Paths() {
				keys = append(keys, key+"|"+op)
			}
			return keys
		})}),
	v("rate-global", "§8: all accounts share one counter instead of one per account", breach{counter: countBy(
		func(context.Context, string) (string, bool) { return "*", true },
		func(string) []string { return []string{"*"} })}),
	v("rate-contact-uncounted", "§8: Add Contact requests are not counted", breach{note: true, counter: uncounted(contactAdd)}),
	v("rate-stats-uncounted", "§8: Campaign Stats requests are not counted", breach{note: true, counter: uncounted(campaignStats)}),
	v("rate-status-503", "§8: a refused request answers 503 instead of 429", breach{after: status(http.StatusServiceUnavailable, code(http.StatusTooManyRequests))}),
	v("rate-body-shape", "§7: the 429 body has no string field error", breach{
		after: at("error", rename("message"), code(http.StatusTooManyRequests), errorIs(spec.MsgRateLimit))}),
	v("rate-message", "§7: the 429 message is reworded", breach{after: message(spec.MsgRateLimit, "Too many requests")}),
	v("rate-429-extra-field", "§7: the 429 body also carries retryAfter", breach{after: retryAfterField}),
	v("rate-429-label", "§1 rule 3, §7: the 429 answer is labelled text/plain", breach{after: label(textPlain, code(http.StatusTooManyRequests))}),
	v("rate-429-message-contact", "§7: the 429 message is reworded on Add Contact", breach{
		after: message(spec.MsgRateLimit, "Too many requests, slow down", on(contactAdd))}),

	// §2.1, §4.1: Add Contact.
	v("contact-no-requirement", "§4.1: a contact with neither email nor phoneNo is accepted", breach{
		before: rewriteBody(contactAdd, func(x *exchange, f map[string]json.RawMessage) bool {
			if given(f, "email") || given(f, "phoneNo") {
				return false
			}
			f["phoneNo"], x.note.phoneAdded = json.RawMessage(placeholderPhone), true
			return true
		}),
		contacts: checkContacts(func(ctx context.Context, c *simulator.Contact) error {
			if noteFrom(ctx).phoneAdded {
				c.PhoneNo = ""
			}
			return nil
		}),
	}),
	v("contact-email-required", "§2.1: a contact with phoneNo but no email is refused", breach{
		contacts: refuseContact("Contact refused", func(_ context.Context, c *simulator.Contact) bool { return c.Email == "" })}),
	v("contact-phone-required", "§2.1: a contact with email but no phoneNo is refused", breach{
		contacts: refuseContact("Contact refused", func(_ context.Context, c *simulator.Contact) bool { return c.PhoneNo == "" })}),
	v("contact-optional-fields", "§2.1: the optional fields tag and playerType are refused", breach{
		contacts: refuseContact("Contact refused", func(_ context.Context, c *simulator.Contact) bool { return c.Tag != nil || c.PlayerType != nil })}),
	v("contact-extra-required", "§2.1: a contact without firstName is refused", breach{
		contacts: refuseContact("firstName is required", func(_ context.Context, c *simulator.Contact) bool { return c.FirstName == "" })}),
	v("contact-gender-other-refused", "§2.1: gender other is refused", breach{
		contacts: refuseContact("gender must be male or female", func(_ context.Context, c *simulator.Contact) bool { return c.Gender == "other" })}),
	v("contact-opt-zero-refused", "§2.1: emailOptStatus 0 is refused", breach{
		contacts: refuseContact("emailOptStatus must be 1", func(_ context.Context, c *simulator.Contact) bool {
			return c.EmailOptStatus != nil && *c.EmailOptStatus == 0
		})}),
	v("contact-sms-opt-refused", "§2.1: smsOptStatus 1 is refused", breach{
		contacts: refuseContact("smsOptStatus must be 0", func(_ context.Context, c *simulator.Contact) bool {
			return c.SMSOptStatus != nil && *c.SMSOptStatus == 1
		})}),
	v("contact-dob-format", "§2.1: dateOfBirth in YYYY-MM-DD is refused, only DD/MM/YYYY is accepted", breach{
		before: rewriteBody(contactAdd, func(x *exchange, f map[string]json.RawMessage) bool {
			raw := string(f["dateOfBirth"])
			if m := dmyRE.FindStringSubmatch(raw); m != nil {
				f["dateOfBirth"] = json.RawMessage(`"` + m[3] + "-" + m[2] + "-" + m[1] + `"`)
				return true
			}
			x.note.dobISO = ymdRE.MatchString(raw)
			return false
		}),
		contacts: refuseContact("dateOfBirth must be of the form DD/MM/YYYY", func(ctx context.Context, c *simulator.Contact) bool {
			return noteFrom(ctx).dobISO
		}),
	}),
	v("contact-country-uk-refused", "§2.1: country UK is refused, as if ISO 3166 GB were required", breach{
		contacts: refuseContact("country must be an ISO 3166-1 alpha-2 code, such as GB", func(_ context.Context, c *simulator.Contact) bool {
			return c.Country == "UK"
		})}),
	v("contact-400-as-422", "§4.1: a contact with neither email nor phoneNo answers 422 instead of 400", breach{
		after: status(http.StatusUnprocessableEntity, on(contactAdd), code(http.StatusBadRequest), errorIs(spec.MsgEmailOrPhoneRequired))}),
	v("contact-400-message", "§4.1: the missing email/phoneNo message is reworded", breach{
		after: message(spec.MsgEmailOrPhoneRequired, "email or phone required")}),
	v("contact-400-message-empty", "§4.1, §7: the missing email/phoneNo message is reworded for an empty body {}", breach{
		after: message(spec.MsgEmailOrPhoneRequired, "The request body is empty", on(contactAdd), emptyBody)}),
	v("error-400-contact-plain", "§1 rule 3, §7: Add Contact's 400 for a missing email and phoneNo is plain text", breach{
		after: plainText(on(contactAdd), code(http.StatusBadRequest), errorIs(spec.MsgEmailOrPhoneRequired))}),
	v("contact-success-201", "§4.1: a created contact is answered 201 instead of 200", breach{after: status(http.StatusCreated, contactOK)}),
	v("contact-status-value", "§4.1: status is \"ok\" instead of \"success\"", breach{
		after: at("status", str(func(s string) any { return strings.Replace(s, "success", "ok", 1) }), contactOK)}),
	v("contact-status-missing-phone", "§4.1: status is left out for a contact with phoneNo but no email", breach{
		after: at("status", drop, contactOK, phoneOnly)}),
	v("contact-id-number", "§4.1: contactId is a number instead of a string", breach{after: at("contactId", set(json.Number("1234567")), contactOK)}),
	v("contact-id-constant", "§4.1: every contact gets the same contactId", breach{after: at("contactId", set("<contact_id>"), contactOK)}),
	v("contact-id-empty", "§4.1: contactId is empty", breach{after: at("contactId", set(""), contactOK)}),
	v("contact-id-null-phone", "§4.1: contactId is null for a contact with phoneNo but no email", breach{
		after: at("contactId", null, contactOK, phoneOnly)}),

	// §4.2, §8: Campaign List's envelope and paging.
	v("list-page-size-capped", fmt.Sprintf("§4.2, §8: a limit of %d returns at most 20 campaigns", spec.MaxPageSize), breach{
		campaigns: filterCampaigns(func(_ context.Context, f *simulator.CampaignFilter) { f.Limit = min(f.Limit, 20) })}),
	v("list-total-pages-floor", "§4.2: totalPages is rounded down", breach{
		after: at("totalPages", fromEnvelope(func(total, size int64) any { return total / size }), listOK)}),
	v("list-total-pages-plus-one", "§4.2: totalPages is totalRecords/limit rounded down, plus one", breach{
		after: at("totalPages", fromEnvelope(func(total, size int64) any { return total/size + 1 }), listOK)}),
	v("list-pages-overlap", "§4.2: consecutive pages share a campaign", breach{
		campaigns: filterCampaigns(func(_ context.Context, f *simulator.CampaignFilter) {
			if f.Offset > 0 {
				f.Offset--
			}
		})}),
	v("list-page-zero-based", "§4.2: page 1 returns the second page", breach{
		campaigns: filterCampaigns(func(_ context.Context, f *simulator.CampaignFilter) { f.Offset += f.Limit })}),
	v("list-order-random", "§4.2: every answer pages through the campaigns in a new random order", breach{campaigns: shuffleCampaigns}),
	v("list-no-filtered", "§4.2: filteredRecords is missing", breach{after: at("filteredRecords", drop, listOK)}),
	v("list-filtered-string", "§4.2: filteredRecords is a string", breach{after: at("filteredRecords", asString, listOK)}),
	v("list-filtered-exceeds-total", "§4.2: filteredRecords is totalRecords + 5", breach{
		after: at("filteredRecords", fromEnvelope(func(total, _ int64) any { return total + 5 }), listOK)}),
	v("list-page-no-string", "§4.2: pageNo is a string", breach{after: at("pageNo", asString, listOK)}),
	v("list-page-no-always-one", "§4.2: pageNo is always 1", breach{after: at("pageNo", set(json.Number("1")), listOK)}),
	v("list-total-records-page", "§4.2: totalRecords counts the campaigns of the page only", breach{after: at("totalRecords", countCampaigns, listOK)}),
	v("list-total-records-string", "§4.2: totalRecords is a string on the last page", breach{after: at("totalRecords", asString, listOK, lastPage)}),
	v("list-page-size-fixed", "§4.2: pageSize is always 10", breach{after: at("pageSize", set(json.Number("10")), listOK)}),
	v("list-page-size-null-last", "§4.2: pageSize is null on the last page", breach{after: at("pageSize", null, listOK, lastPage)}),
	v("list-last-page-short", "§4.2: the last page leaves out its last campaign", breach{after: at("campaigns", dropLast, listOK, lastPage)}),
	v("list-last-page-empty", "§4.2: the last page holds no campaigns", breach{after: at("campaigns", set([]any{}), listOK, lastPage)}),
	v("list-past-end-500", "§4.2: a page past the end answers 500", breach{after: replace(http.StatusInternalServerError, spec.MsgInternal, listOK, pastEnd)}),
	v("list-past-end-campaigns-null", "§4.2: campaigns is null on a page past the end", breach{after: at("campaigns", null, listOK, pastEnd)}),
	v("list-past-end-no-page-no", "§4.2: pageNo is left out on a page past the end", breach{after: at("pageNo", drop, listOK, pastEnd)}),
	v("list-campaigns-object", "§4.2: campaigns is an object keyed by Id instead of an array", breach{after: at("campaigns", keyedByID, listOK)}),
	v("list-envelope-wrapped", "§4.2: the answer is wrapped in {\"data\": ...}", breach{after: whole(wrapData, listOK)}),
	v("list-limit-51-served", fmt.Sprintf("§4.2, §8: limit %[1]d is served with %[1]d campaigns", spec.MaxPageSize+1), breach{
		before: rewriteBody(campaignList, func(x *exchange, f map[string]json.RawMessage) bool {
			if n, ok := integer(f, "limit"); !ok || n != spec.MaxPageSize+1 {
				return false
			}
			f["limit"], x.note.limit51 = json.RawMessage(strconv.Itoa(spec.MaxPageSize)), true
			return true
		}),
		campaigns: filterCampaigns(func(ctx context.Context, f *simulator.CampaignFilter) {
			if noteFrom(ctx).limit51 {
				f.Offset, f.Limit = f.Offset/spec.MaxPageSize*(spec.MaxPageSize+1), spec.MaxPageSize+1
			}
		}),
		after: each(
			at("pageSize", set(json.Number(strconv.Itoa(spec.MaxPageSize+1))), listOK, noted(func(n *note) bool { return n.limit51 })),
			at("totalPages", fromEnvelope(func(total, size int64) any { return (total + size - 1) / size }), listOK, noted(func(n *note) bool { return n.limit51 })),
		),
	}),
	v("list-limit-50-refused", fmt.Sprintf("§4.2, §8: limit %d is refused 400", spec.MaxPageSize), breach{
		after: replace(http.StatusBadRequest, fmt.Sprintf("limit must be between 1 and %d", spec.MaxPageSize-1), listOK, func(x *exchange, _ map[string]any) bool {
			n, ok := integer(x.req, "limit")
			return ok && n == spec.MaxPageSize
		})}),
	v("list-page-zero-served", "§4.2, §8: page 0 is served as pageNo 0", breach{
		before: servePageAsFirst(func(p int64) bool { return p == 0 }), after: pageAsked}),
	v("list-page-negative-served", "§4.2, §8: a negative page is served as that pageNo", breach{
		before: servePageAsFirst(func(p int64) bool { return p < 0 }), after: pageAsked}),
	v("list-missing-limit-500", "§4.2: a body without limit answers 500", breach{
		after: replace(http.StatusInternalServerError, spec.MsgInternal, on(campaignList), code(http.StatusBadRequest), lacks("limit"))}),
	v("list-missing-page-500", "§4.2: a body without page answers 500", breach{
		after: replace(http.StatusInternalServerError, spec.MsgInternal, on(campaignList), code(http.StatusBadRequest), lacks("page"))}),
	v("list-id-duplicate", "§2.2, §4.2: the second campaign of every page carries the first one's Id", breach{after: at("campaigns", duplicateID, listOK)}),

	// §2.2, §3: the campaign record of Campaign List.
	v("campaign-id-lowercase", "§2.2: the Id field is spelt id", breach{after: campaign("Id", rename("id"))}),
	v("campaign-id-string", "§2.2: Id is a string", breach{after: campaign("Id", asString)}),
	v("campaign-id-float-sms", "§2.2: Id has a fraction (1234.0) on sms campaigns", breach{after: campaign("Id", asFloat, channel(spec.ChannelSMS))}),
	v("campaign-name-missing-deleted", "§2.2: campaignName is left out on deleted campaigns", breach{after: campaign("campaignName", drop, deleted)}),
	v("campaign-name-null-sms", "§2.2: campaignName is null on sms campaigns", breach{after: campaign("campaignName", null, channel(spec.ChannelSMS))}),
	v("campaign-type-string", "§2.2: campaignType is \"static\" or \"dynamic\"", breach{after: campaign("campaignType", num(func(n int64) any {
		if n == spec.CampaignDynamic {
			return "dynamic"
		}
		return "static"
	}))}),
	v("campaign-type-range-last-page", "§2.2: campaignType is 2 on the last page", breach{after: campaign("campaignType", set(json.Number("2")), lastPage)}),
	v("campaign-channel-case", "§2.2: campaignChannel is upper case", breach{after: campaign("campaignChannel", str(func(s string) any { return strings.ToUpper(s) }))}),
	v("campaign-channel-missing-email", "§2.2: campaignChannel is left out on email campaigns", breach{
		after: campaign("campaignChannel", drop, channel(spec.ChannelEmail))}),
	v("campaign-status-number-deleted", "§2.2, §3: status is the integer 0 on deleted campaigns", breach{after: campaign("status", set(json.Number("0")), deleted)}),
	v("campaign-status-null-last-page", "§2.2, §3: status is null on the last page", breach{after: campaign("status", null, lastPage)}),
	v("campaign-color-no-hash", "§2.2: statusColor has no leading #", breach{after: campaign("statusColor", str(func(s string) any { return strings.TrimPrefix(s, "#") }))}),
	v("campaign-color-name-sms", "§2.2: statusColor is a colour name on sms campaigns", breach{after: campaign("statusColor", set("green"), channel(spec.ChannelSMS))}),
	v("campaign-active-bool", "§2.2: active is a boolean", breach{after: campaign("active", func(c map[string]any, k string) bool {
		c[k] = c[k] == json.Number("1")
		return true
	})}),
	v("campaign-active-range", "§2.2, §3: active is -1 on deleted campaigns", breach{after: campaign("active", set(json.Number("-1")), deleted)}),
	v("campaign-no-millis", "§2.2: timestamps have no milliseconds", breach{after: each(
		campaign("scheduledOn", str(stripMillis)), campaign("broadcastOn", str(stripMillis)),
		campaign("createdAt", str(stripMillis)), campaign("updatedAt", str(stripMillis)))}),
	v("campaign-scheduled-offset", "§2.2: scheduledOn is local time with its offset (+01:00), not UTC, on sms campaigns", breach{
		after: campaign("scheduledOn", str(func(s string) any { return strings.TrimSuffix(s, "Z") + "+01:00" }), channel(spec.ChannelSMS))}),
	v("campaign-broadcast-on-epoch", "§2.2: broadcastOn is epoch milliseconds on the last page", breach{after: campaign("broadcastOn", str(epochMillis), lastPage)}),
	v("campaign-created-date-only", "§2.2: createdAt is a date only on deleted campaigns", breach{
		after: campaign("createdAt", str(func(s string) any { return s[:min(len(s), len(time.DateOnly))] }), deleted)}),
	v("campaign-updated-null-email", "§2.2: updatedAt is null on email campaigns", breach{after: campaign("updatedAt", null, channel(spec.ChannelEmail))}),
	v("campaign-timezone-missing-last", "§2.2: scheduledTimeZone is left out on the last page", breach{after: campaign("scheduledTimeZone", drop, lastPage)}),
	v("campaign-timezone-number", "§2.2: scheduledTimeZone is a number of minutes on sms campaigns", breach{
		after: campaign("scheduledTimeZone", offsetMinutes, channel(spec.ChannelSMS))}),
	v("campaign-offset-format", "§2.2: offset is +HHMM without a colon", breach{after: campaign("offset", str(func(s string) any { return strings.Replace(s, ":", "", 1) }))}),
	v("campaign-offset-no-sign", "§2.2: offset has no sign on email campaigns", breach{
		after: campaign("offset", str(func(s string) any { return strings.TrimLeft(s, "+-") }), channel(spec.ChannelEmail))}),
	v("campaign-autoresend-bool", "§2.2: autoResend is a boolean", breach{after: campaign("autoResend", func(c map[string]any, k string) bool {
		c[k] = c[k] == json.Number("1")
		return true
	})}),
	v("campaign-autoresend-missing-sms", "§2.2: autoResend is left out on sms campaigns", breach{after: campaign("autoResend", drop, channel(spec.ChannelSMS))}),
	v("campaign-broadcast-string", "§2.2, §3: broadcast is a string on deleted campaigns", breach{after: campaign("broadcast", asString, deleted)}),
	v("campaign-broadcast-null-last", "§2.2, §3: broadcast is null on the last page", breach{after: campaign("broadcast", null, lastPage)}),
	v("campaign-reason-absent", "§2.2: a null reason is left out instead of null", breach{after: campaign("reason", func(c map[string]any, k string) bool {
		if c[k] != nil {
			return false
		}
		delete(c, k)
		return true
	})}),
	v("campaign-reason-number", "§2.2: reason is 0 instead of null on email campaigns", breach{after: campaign("reason", func(c map[string]any, k string) bool {
		if c[k] != nil {
			return false
		}
		c[k] = json.Number("0")
		return true
	}, channel(spec.ChannelEmail))}),

	// §2.3, §4.3: Campaign Stats.
	v("stats-key-missing", "§2.3: emailStat has no Complained count", breach{after: stat("emailStat.Complained", drop)}),
	v("stats-count-string", "§2.3: counts are strings", breach{after: each(stat("emailStat.*", asString), stat("smsStat.*", asString))}),
	v("stats-count-negative", "§2.3: emailStat.Softbounce is -1", breach{after: stat("emailStat.Softbounce", set(json.Number("-1")))}),
	v("stats-count-float-sms", "§2.3: smsStat counts have a fraction (3.0) for sms campaigns", breach{after: stat("smsStat.*", asFloat, channel(spec.ChannelSMS))}),
	v("stats-count-null-sms", "§2.3: smsStat.Failed is null for sms campaigns", breach{after: stat("smsStat.Failed", null, channel(spec.ChannelSMS))}),
	v("stats-key-lowercase", "§2.3: emailStat keys are lower case for email campaigns", breach{after: stat("emailStat.*", lower, channel(spec.ChannelEmail))}),
	v("stats-sms-delivered-missing", "§2.3: smsStat has no Delivered count", breach{after: stat("smsStat.Delivered", drop)}),
	v("stats-hardbounce-renamed", "§2.3: Hardbounce is spelt HardBounce", breach{after: stat("emailStat.Hardbounce", rename("HardBounce"))}),
	v("stats-opened-string-email", "§2.3: emailStat.Opened is a string for email campaigns", breach{after: stat("emailStat.Opened", asString, channel(spec.ChannelEmail))}),
	v("stats-unsubscribe-missing-last", "§2.3: emailStat has no Unsubscribe count for the account's campaign with the highest Id", breach{
		after: stat("emailStat.Unsubscribe", drop, highestID)}),
	v("stats-object-array", "§2.3: smsStat is an array [Sent, Delivered, Failed]", breach{after: stat("smsStat", smsArray)}),
	v("stats-sms-missing", "§4.3: smsStat is left out", breach{after: stat("smsStat", drop)}),
	v("stats-email-missing-sms", "§2.3, §4.3: emailStat is left out for sms campaigns", breach{after: stat("emailStat", drop, channel(spec.ChannelSMS))}),
	v("stats-sms-null-email", "§2.3, §4.3: smsStat is null for email campaigns", breach{after: stat("smsStat", null, channel(spec.ChannelEmail))}),
	v("stats-wrapped", "§2.3, §4.3: the answer is wrapped in {\"data\": ...}", breach{after: whole(wrapData, statsOK)}),
	v("stats-no-requirement", "§4.3: a request without campaignId is not answered 400", breach{
		before: rewriteBody(campaignStats, func(_ *exchange, f map[string]json.RawMessage) bool {
			if present(f, "campaignId") {
				return false
			}
			f["campaignId"] = json.RawMessage("0")
			return true
		})}),
	v("stats-400-message", "§4.3: the missing campaignId message is reworded", breach{after: message(spec.MsgCampaignIDRequired, "campaignId missing")}),
	v("stats-400-as-404", "§4.3, §7: a body without campaignId answers 404 Campaign not found", breach{
		after: replace(http.StatusNotFound, simulator.MsgCampaignNotFound, on(campaignStats), code(http.StatusBadRequest), errorIs(spec.MsgCampaignIDRequired))}),
	v("stats-id-string-only", "§4.3: an integer campaignId is refused, only a string is accepted", breach{
		before: rewriteBody(campaignStats, func(x *exchange, f map[string]json.RawMessage) bool {
			if m := idRE.FindStringSubmatch(string(f["campaignId"])); m != nil {
				f["campaignId"] = json.RawMessage(m[1])
				return true
			}
			_, x.note.intID = integer(f, "campaignId")
			return false
		}),
		after: replace(http.StatusBadRequest, "campaignId must be a string", on(campaignStats),
			noted(func(n *note) bool { return n.intID }), code(http.StatusOK, http.StatusNotFound)),
	}),
	v("stats-last-campaign-404", "§2.2, §4.3: the account's campaign with the highest Id answers 404", breach{
		campaigns: findByID(func(ctx context.Context, next simulator.CampaignStore, accountID string, id int64) (*simulator.Campaign, error) {
			if last, err := lastCampaign(ctx, next, accountID); err == nil && last != nil && last.ID == id {
				return nil, errCampaignNotFound
			}
			return next.FindCampaignByID(ctx, accountID, id)
		})}),
	v("stats-id-offset", "§2.2, §4.3: Campaign Stats looks campaigns up by campaignId-1", breach{
		campaigns: findByID(func(ctx context.Context, next simulator.CampaignStore, accountID string, id int64) (*simulator.Campaign, error) {
			return next.FindCampaignByID(ctx, accountID, id-1)
		})}),
}

// campaign edits a field of every campaign of a Campaign List answer.
func campaign(field string, m mut, when ...pred) func(*exchange) {
	return at("campaigns[]."+field, m, append([]pred{listOK}, when...)...)
}

// stat edits a field of a Campaign Stats answer.
func stat(path string, m mut, when ...pred) func(*exchange) {
	return at(path, m, append([]pred{statsOK}, when...)...)
}

func secretOfAny(secret string, all []*simulator.Account) bool {
	for _, a := range all {
		if a.APISecret == secret {
			return true
		}
	}
	return false
}

// trailing follows the answer's JSON with a second value.
func trailing(when ...pred) func(*exchange) {
	return func(x *exchange) {
		if holds(x, nil, when) {
			x.setRaw(append(x.bytes(), "{}\n"...))
		}
	}
}

// retryAfterField copies a 429's Retry-After into its body.
func retryAfterField(x *exchange) {
	if x.status != http.StatusTooManyRequests {
		return
	}
	if obj := x.object(); obj != nil {
		secs, err := strconv.Atoi(x.header.Get("Retry-After"))
		if err != nil {
			secs = 1
		}
		obj["retryAfter"] = json.Number(strconv.Itoa(secs))
		x.changed()
	}
}

// fromEnvelope computes a field of Campaign List's envelope from
// totalRecords and pageSize.
func fromEnvelope(f func(total, size int64) any) mut {
	return func(obj map[string]any, key string) bool {
		total, err1 := jsonInt(obj["totalRecords"])
		size, err2 := jsonInt(obj["pageSize"])
		if err1 != nil || err2 != nil || size == 0 {
			return false
		}
		v := f(total, size)
		if n, ok := v.(int64); ok {
			v = json.Number(strconv.FormatInt(n, 10))
		}
		obj[key] = v
		return true
	}
}

func jsonInt(v any) (int64, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, strconv.ErrSyntax
	}
	return n.Int64()
}

func countCampaigns(obj map[string]any, key string) bool {
	cs, ok := obj["campaigns"].([]any)
	if ok {
		obj[key] = json.Number(strconv.Itoa(len(cs)))
	}
	return ok
}

func dropLast(obj map[string]any, key string) bool {
	cs, ok := obj[key].([]any)
	if !ok || len(cs) == 0 {
		return false
	}
	obj[key] = cs[:len(cs)-1]
	return true
}

func keyedByID(obj map[string]any, key string) bool {
	cs, ok := obj[key].([]any)
	if !ok {
		return false
	}
	m := make(map[string]any, len(cs))
	for _, c := range cs {
		if c, ok := c.(map[string]any); ok {
			m[jsonText(c["Id"])] = c
		}
	}
	obj[key] = m
	return true
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return strings.Trim(string(b), `"`)
}

func duplicateID(obj map[string]any, key string) bool {
	cs, _ := obj[key].([]any)
	if len(cs) < 2 {
		return false
	}
	first, ok1 := cs[0].(map[string]any)
	second, ok2 := cs[1].(map[string]any)
	if !ok1 || !ok2 {
		return false
	}
	second["Id"] = first["Id"]
	return true
}

func wrapData(doc any) any { return map[string]any{"data": doc} }

func smsArray(obj map[string]any, key string) bool {
	m, ok := obj[key].(map[string]any)
	if ok {
		obj[key] = []any{m["Sent"], m["Delivered"], m["Failed"]}
	}
	return ok
}

func stripMillis(s string) any {
	if len(s) == len(spec.TimestampLayout) {
		return s[:len(time.DateTime)] + "Z"
	}
	return s
}

func epochMillis(s string) any {
	t, err := time.Parse(spec.TimestampLayout, s)
	if err != nil {
		return s
	}
	return json.Number(strconv.FormatInt(t.UnixMilli(), 10))
}

// offsetMinutes writes the time zone as its UTC offset in minutes, read
// from the campaign's offset field: "-05:00" gives -300.
func offsetMinutes(c map[string]any, key string) bool {
	off, _ := c["offset"].(string)
	t, err := time.Parse("-07:00", off)
	if err != nil {
		return false
	}
	_, secs := t.Zone()
	c[key] = json.Number(strconv.Itoa(secs / 60))
	return true
}

// servePageAsFirst serves a page the server refuses as page 1, noting the
// page asked for.
func servePageAsFirst(ok func(page int64) bool) func(*exchange) bool {
	return rewriteBody(campaignList, func(x *exchange, f map[string]json.RawMessage) bool {
		p, isInt := integer(f, "page")
		if !isInt || !ok(p) {
			return false
		}
		asked := int(p)
		f["page"], x.note.pageAsked = json.RawMessage("1"), &asked
		return true
	})
}

// pageAsked answers pageNo with the page asked for.
func pageAsked(x *exchange) {
	if x.note.pageAsked == nil || !listOK(x, nil) {
		return
	}
	if obj := x.object(); obj != nil {
		obj["pageNo"] = json.Number(strconv.Itoa(*x.note.pageAsked))
		x.changed()
	}
}

// ordinal writes n as an English ordinal (101st, 100th) for the
// descriptions of the rate-limit switches.
func ordinal(n int) string {
	suffix := "th"
	if n%100 < 11 || n%100 > 13 {
		switch n % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return strconv.Itoa(n) + suffix
}
