package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/partner-v3/conformance-kit/simulator"
)

// Violations lists the deliberate breaches of the spec the simulator can be
// started with (--violate NAME), each against one normative rule, named by
// its section. They exist to prove the conformance suite: a run against a
// simulator with any one of them on must fail. Never use them otherwise.
var Violations = map[string]string{
	// §5 Authentication, §7 errors.
	"auth-secret-ignored":     "§5 rule 1: a wrong x-api-secret is accepted",
	"auth-key-ignored":        "§5 rule 1: a wrong x-api-key is accepted when the secret is right",
	"auth-account-ignored":    "§5 rule 2: a mismatched x-account-id is accepted",
	"auth-401-as-403":         "§5 rule 1: invalid credentials answer 403 instead of 401",
	"auth-403-as-401":         "§5 rule 2: an account mismatch answers 401 instead of 403",
	"auth-401-message":        "§7: the 401 message is reworded",
	"auth-403-message":        "§7: the 403 message is reworded",
	"rate-off-by-one":         "§8: the 101st request in a minute is let through",
	"rate-limit-too-low":      "§8: only 50 requests per minute are let through",
	"rate-per-operation":      "§8: each operation has its own counter instead of one per account",
	"rate-global":             "§8: all accounts share one counter instead of one per account",
	"rate-never-frees":        "§8: a refused account stays refused after the minute has passed",
	"rate-status-503":         "§8: a refused request answers 503 instead of 429",
	"rate-body-shape":         "§7: the 429 body has no string field error",
	"rate-message":            "§7: the 429 message is reworded",
	"contact-no-requirement":  "§4.1: a contact with neither email nor phoneNo is accepted",
	"contact-email-required":  "§2.1: a contact with phoneNo but no email is refused",
	"contact-phone-required":  "§2.1: a contact with email but no phoneNo is refused",
	"contact-400-as-422":      "§4.1: a contact with neither email nor phoneNo answers 422 instead of 400",
	"contact-400-message":     "§4.1: the missing email/phoneNo message is reworded",
	"contact-status-value":    "§4.1: status is \"ok\" instead of \"success\"",
	"contact-id-number":       "§4.1: contactId is a number instead of a string",
	"contact-optional-fields": "§2.1: the optional fields tag and playerType are refused",
	"list-page-size-capped":   "§4.2, §8: a limit of 50 returns at most 20 campaigns",
	"list-total-pages-floor":  "§4.2: totalPages is rounded down",
	"list-pages-overlap":      "§4.2: consecutive pages share a campaign",
	"list-page-zero-based":    "§4.2: page 1 returns the second page",
	"list-no-filtered":        "§4.2: filteredRecords is missing",
	"list-page-no-string":     "§4.2: pageNo is a string",
	"campaign-id-lowercase":   "§2.2: the Id field is spelt id",
	"campaign-id-string":      "§2.2: Id is a string",
	"campaign-no-millis":      "§2.2: timestamps have no milliseconds",
	"campaign-offset-format":  "§2.2: offset is +HHMM without a colon",
	"campaign-color-no-hash":  "§2.2: statusColor has no leading #",
	"campaign-channel-case":   "§2.2: campaignChannel is upper case",
	"campaign-reason-absent":  "§2.2: a null reason is left out instead of null",
	"campaign-active-bool":    "§2.2: active is a boolean",
	"stats-key-missing":       "§2.3: emailStat has no Complained count",
	"stats-count-string":      "§2.3: counts are strings",
	"stats-sms-missing":       "§4.3: smsStat is left out",
	"stats-no-requirement":    "§4.3: a request without campaignId is not answered 400",
	"stats-400-message":       "§4.3: the missing campaignId message is reworded",
	"json-content-type":       "§1 rule 3: responses are labelled text/plain",
}

func (s *Server) violates(name string) bool { return s.Violations[name] }

// violateAuthentication finds the account a request's credentials would
// reach when the key or the secret is not checked.
func (s *Server) violateAuthentication(r *http.Request) *simulator.Account {
	if !s.violates("auth-secret-ignored") && !s.violates("auth-key-ignored") {
		return nil
	}
	accounts, _ := s.Accounts.Accounts(r.Context())
	for _, a := range accounts {
		if s.violates("auth-secret-ignored") && a.APIKey == r.Header.Get(headerAPIKey) ||
			s.violates("auth-key-ignored") && a.APISecret == r.Header.Get(headerAPISecret) {
			return a
		}
	}
	return nil
}

// violatePaging breaks the page arithmetic of spec §4.2 on purpose.
func (s *Server) violatePaging(f *simulator.CampaignFilter, page int) {
	switch {
	case s.violates("list-page-size-capped"):
		f.Limit = min(f.Limit, 20)
	case s.violates("list-pages-overlap") && page > 1:
		f.Offset--
	case s.violates("list-page-zero-based"):
		f.Offset += f.Limit
	}
}

// rateKey is the account (spec §8), unless a violation counts otherwise.
func (s *Server) rateKey(r *http.Request, a *simulator.Account) string {
	switch {
	case s.violates("rate-per-operation"):
		return a.AccountID + "|" + entryFrom(r).Operation
	case s.violates("rate-global"):
		return "*"
	}
	return a.AccountID
}

// violationRewrites change a response body after the handler wrote it;
// each returns false when the body holds nothing for it to change.
var violationRewrites = map[string]func(v map[string]any) bool{
	"auth-401-message":       replaceMessage(simulator.MsgInvalidCredentials, "Invalid credentials"),
	"auth-403-message":       replaceMessage(simulator.MsgUnauthorizedAccount, "Account access denied"),
	"rate-message":           replaceMessage(simulator.MsgRateLimit, "Too many requests"),
	"contact-400-message":    replaceMessage(simulator.MsgEmailOrPhoneRequired, "email or phone required"),
	"stats-400-message":      replaceMessage(simulator.MsgCampaignIDRequired, "campaignId missing"),
	"rate-body-shape":        renameKeyIf("error", "message", simulator.MsgRateLimit),
	"contact-status-value":   setIfPresent("status", "success", "ok"),
	"contact-id-number":      func(v map[string]any) bool { return mapKey(v, "contactId", func(any) any { return 1234567 }) },
	"list-no-filtered":       func(v map[string]any) bool { return deleteKey(v, "filteredRecords") },
	"list-page-no-string":    func(v map[string]any) bool { return mapKey(v, "pageNo", func(x any) any { return jsonString(x) }) },
	"campaign-id-lowercase":  eachCampaign(func(c map[string]any) { c["id"] = c["Id"]; delete(c, "Id") }),
	"campaign-id-string":     eachCampaign(func(c map[string]any) { c["Id"] = jsonString(c["Id"]) }),
	"campaign-no-millis":     eachCampaign(stripMillis),
	"campaign-offset-format": eachCampaign(func(c map[string]any) { c["offset"] = strings.Replace(c["offset"].(string), ":", "", 1) }),
	"campaign-color-no-hash": eachCampaign(func(c map[string]any) { c["statusColor"] = strings.TrimPrefix(c["statusColor"].(string), "#") }),
	"campaign-channel-case":  eachCampaign(func(c map[string]any) { c["campaignChannel"] = strings.ToUpper(c["campaignChannel"].(string)) }),
	"campaign-reason-absent": eachCampaign(func(c map[string]any) {
		if c["reason"] == nil {
			delete(c, "reason")
		}
	}),
	"campaign-active-bool": eachCampaign(func(c map[string]any) { c["active"] = c["active"] == json.Number("1") }),
	"stats-key-missing": func(v map[string]any) bool {
		e, ok := v["emailStat"].(map[string]any)
		return ok && deleteKey(e, "Complained")
	},
	"stats-count-string": func(v map[string]any) bool {
		changed := false
		for _, k := range []string{"emailStat", "smsStat"} {
			if m, ok := v[k].(map[string]any); ok {
				for key, n := range m {
					m[key], changed = jsonString(n), true
				}
			}
		}
		return changed
	},
	"stats-sms-missing": func(v map[string]any) bool { return deleteKey(v, "smsStat") },
}

// violate wraps the partner API with the response rewrites switched on. It
// costs nothing when none is.
func (s *Server) violate(next http.Handler) http.Handler {
	var rewrites []func(map[string]any) bool
	for name, rw := range violationRewrites {
		if s.violates(name) {
			rewrites = append(rewrites, rw)
		}
	}
	if len(rewrites) == 0 && !s.violates("json-content-type") {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		buf := &bufferedWriter{header: http.Header{}}
		next.ServeHTTP(buf, r)
		body := buf.body.Bytes()
		var v map[string]any
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		if dec.Decode(&v) == nil {
			changed := false
			for _, rw := range rewrites {
				changed = rw(v) || changed
			}
			if changed {
				body, _ = json.Marshal(v)
			}
		}
		for k, vs := range buf.header {
			w.Header()[k] = vs
		}
		if s.violates("json-content-type") {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		}
		w.WriteHeader(buf.status)
		_, _ = w.Write(body)
	})
}

// bufferedWriter holds a response so violate can rewrite it.
type bufferedWriter struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedWriter) Header() http.Header { return b.header }
func (b *bufferedWriter) WriteHeader(code int) {
	if b.status == 0 {
		b.status = code
	}
}
func (b *bufferedWriter) Write(p []byte) (int, error) {
	b.WriteHeader(http.StatusOK)
	return b.body.Write(p)
}

func replaceMessage(from, to string) func(map[string]any) bool {
	return setIfPresent("error", from, to)
}

func setIfPresent(key, from, to string) func(map[string]any) bool {
	return func(v map[string]any) bool {
		if v[key] != from {
			return false
		}
		v[key] = to
		return true
	}
}

func renameKeyIf(from, to, value string) func(map[string]any) bool {
	return func(v map[string]any) bool {
		if v[from] != value {
			return false
		}
		v[to] = v[from]
		delete(v, from)
		return true
	}
}

func mapKey(v map[string]any, key string, f func(any) any) bool {
	x, ok := v[key]
	if ok {
		v[key] = f(x)
	}
	return ok
}

func deleteKey(v map[string]any, key string) bool {
	_, ok := v[key]
	delete(v, key)
	return ok
}

func jsonString(x any) any {
	if n, ok := x.(json.Number); ok {
		return n.String()
	}
	return x
}

func eachCampaign(f func(map[string]any)) func(map[string]any) bool {
	return func(v map[string]any) bool {
		cs, ok := v["campaigns"].([]any)
		for _, c := range cs {
			if m, ok := c.(map[string]any); ok {
				f(m)
			}
		}
		return ok && len(cs) > 0
	}
}

func stripMillis(c map[string]any) {
	for _, k := range []string{"scheduledOn", "broadcastOn", "createdAt", "updatedAt"} {
		if ts, ok := c[k].(string); ok && len(ts) == len(simulator.TimestampLayout) {
			c[k] = ts[:19] + "Z"
		}
	}
}
