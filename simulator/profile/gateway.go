package profile

import (
	"net/http"
	"slices"
	"strings"
)

// RateHeaderClasses are the rate-limit headers a deployment sends on
// answers that rateLimit.headers does not cover, by class of answer, each
// list exactly (canonical names, sorted; empty: none). A 200 and a 429
// carry rateLimit.headers' onSuccess and onRefusal, and so does any other
// answer to a request the limit counted (a 404 for an unknown campaign, a
// 409, a 400 when bad requests count). A gateway in front of a service
// often sends its whole family on every answer that names an account; a
// service that counts after authentication sends none on a 401 (issue
// 28; §8 names no header).
type RateHeaderClasses struct {
	// Unauthenticated is a refusal to a request whose x-api-key names an
	// account but whose secret or x-account-id is wrong or missing (401,
	// 403, or the body's 400 when the body is checked first).
	Unauthenticated []string `json:"unauthenticated"`
	// Refused is the refusal of a body with the right credentials (§4.3's
	// 400 for a Campaign Stats without campaignId): the simulator sends
	// it on every refusal after authentication the limit did not count
	// (rateLimit.countsBadRequests false), the counted ones carrying
	// onSuccess's.
	Refused []string `json:"refused"`
	// Routing is an answer decided before the credentials are checked (a
	// 404 for an unknown path, a 405 for another method, a 413 for a body
	// over the limit) to a request whose x-api-key names an account: a
	// gateway that knows its consumer by the key before it routes.
	Routing []string `json:"routing,omitempty"`
}

// Rate-limit header names the simulator can write, canonical: the
// X-RateLimit family, the IETF draft's separate fields (RateLimit-Limit,
// -Remaining, -Reset, -Policy) and its combined RateLimit field.
const (
	HeaderXRateLimitLimit     = "X-Ratelimit-Limit"
	HeaderXRateLimitRemaining = "X-Ratelimit-Remaining"
	HeaderXRateLimitReset     = "X-Ratelimit-Reset"
	HeaderRateLimitLimit      = "Ratelimit-Limit"
	HeaderRateLimitRemaining  = "Ratelimit-Remaining"
	HeaderRateLimitReset      = "Ratelimit-Reset"
	HeaderRateLimitPolicy     = "Ratelimit-Policy"
	HeaderRateLimit           = "Ratelimit"
)

// PlayableRateHeaders are the rate-limit headers the simulator can write
// a value for; a class naming another cannot be played (Check).
func PlayableRateHeaders() []string {
	return []string{HeaderXRateLimitLimit, HeaderXRateLimitRemaining, HeaderXRateLimitReset,
		HeaderRateLimitLimit, HeaderRateLimitRemaining, HeaderRateLimitReset, HeaderRateLimitPolicy, HeaderRateLimit}
}

// IsRateLimitHeader reports whether name is a rate-limit header as the
// learner reads one: its name holds "ratelimit" or "rate-limit", or it is
// Retry-After.
func IsRateLimitHeader(name string) bool {
	l := strings.ToLower(name)
	return strings.Contains(l, "ratelimit") || strings.Contains(l, "rate-limit") || l == "retry-after"
}

// NoContentType is the answer to a request sent without a Content-Type
// (§1 rule 2 says every body is sent as application/json; what a
// deployment does without one is not shown).
type NoContentType struct {
	// Outcome answers a valid Campaign List body sent without one: 200
	// (the body read as JSON) or the refusal.
	Outcome
	// EmptyAsObject, for a deployment that reads such a body as JSON: an
	// empty body is read as {} (so the operation answers its missing
	// field's 400), not refused as an empty body.
	EmptyAsObject bool `json:"emptyAsObject,omitempty"`
	// Empty, for a deployment that reads such a body as JSON but not an
	// empty one as {}: its refusal of no body at all.
	Empty *Outcome `json:"empty,omitempty"`
}

// checkGateway checks the choices of this file.
func (c *checker) checkGateway(p *Profile) {
	if hc := p.Rate.HeaderClasses; hc.Known() {
		for class, names := range map[string][]string{"unauthenticated": hc.Value.Unauthenticated, "refused": hc.Value.Refused, "routing": hc.Value.Routing} {
			for _, n := range names {
				if !slices.Contains(PlayableRateHeaders(), http.CanonicalHeaderKey(n)) {
					c.addf("rateLimit.headerClasses."+class, "names %q: the simulator writes only %s (Retry-After is a 429's, rateLimit.retryAfter)", n, strings.Join(PlayableRateHeaders(), ", "))
				}
			}
		}
	}
	if m := p.HTTP.MissingContentType; m.Known() {
		c.outcome("http.missingContentType", m.Value.Outcome)
		if (m.Value.EmptyAsObject || m.Value.Empty != nil) && !m.Value.Accepted() {
			c.addf("http.missingContentType", "says how an empty body is read by a deployment that refuses a body without Content-Type")
		}
		if e := m.Value.Empty; e != nil {
			c.refusal("http.missingContentType.empty", *e)
			if m.Value.EmptyAsObject {
				c.addf("http.missingContentType.empty", "is a refusal of an empty body that emptyAsObject reads as {}")
			}
		}
	}
}

// normaliseClasses sorts each class's names, none being an empty list.
func normaliseClasses(v RateHeaderClasses) RateHeaderClasses {
	set := func(s []string) []string {
		out := make([]string, 0, len(s))
		for _, n := range s {
			out = append(out, http.CanonicalHeaderKey(n))
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	return RateHeaderClasses{Unauthenticated: set(v.Unauthenticated), Refused: set(v.Refused), Routing: set(v.Routing)}
}
