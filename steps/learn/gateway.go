package learn

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// This file learns what a gateway in front of a service changes (issue
// 28): which rate-limit headers each class of answer carries, messages
// that quote the request, and a request without a Content-Type.

// missingContentType learns http.missingContentType (§1 rule 2: bodies
// are sent as application/json; a request without a Content-Type is not
// shown): a valid Campaign List body sent without one, and, when that is
// read as JSON, a Campaign Stats without any body: read as {}, §4.3
// answers "CampaignId is required"; else its refusal is learned.
func (l *learner) missingContentType(ctx context.Context) error {
	x, err := l.send(ctx, req{path: spec.PathCampaignList, body: listBody, noContentType: true})
	if err != nil {
		return err
	}
	v := profile.NoContentType{Outcome: outcome(x)}
	if !v.Accepted() {
		l.p.HTTP.MissingContentType = profile.Choice[profile.NoContentType]{Value: v, Evidence: l.evidences(x)}
		return nil
	}
	empty, err := l.send(ctx, req{path: spec.PathCampaignStats, noContentType: true})
	if err != nil {
		return err
	}
	v.EmptyAsObject = empty.status == http.StatusBadRequest && messageOf(empty.body) == spec.MsgCampaignIDRequired
	if o := outcome(empty); !v.EmptyAsObject && !o.Accepted() && empty.status != http.StatusTooManyRequests {
		v.Empty = &o
	}
	l.p.HTTP.MissingContentType = profile.Choice[profile.NoContentType]{Value: v, Evidence: l.evidences(x, empty)}
	return nil
}

// probeUnknownPathMethod is the other method the unknown path is probed
// with, to tell a message that quotes the method from one that does not.
const probeUnknownPathMethod = http.MethodPut

// unknownPathMethod sends http.unknownPath's probe again with another
// method (echoTemplates).
func (l *learner) unknownPathMethod(ctx context.Context) error {
	_, err := l.send(ctx, req{method: probeUnknownPathMethod, path: profile.ProbeUnknownPath, body: listBody})
	return err
}

// echoTemplates writes the parts of the request that http.unknownPath's,
// http.otherMethod's and http.requestContentType's messages quote as
// placeholders (profile.Render), so that the simulator says the path,
// method and Content-Type a client really sent, not the probe's: the
// path as the probe sent it (the base URL's path and the probe's), then
// the operation's path, the method and the Content-Type, each where it
// stands as a word of its own.
func (l *learner) echoTemplates() {
	base := strings.TrimSuffix(l.env.BaseURL.EscapedPath(), "/")
	if c := &l.p.HTTP.UnknownPath; c.Known() && !c.Value.Accepted() {
		c.Value.Message = echo(c.Value.Message, base+"/"+profile.ProbeUnknownPath, profile.PlaceholderPath)
		// The method, where the answer to the same path with another
		// method says that one in the same place ("Cannot POST /x",
		// "Cannot PUT /x"); a message naming POST of its own (the
		// operations' method) says it to both.
		for _, x := range l.exchanges() {
			if x.method != probeUnknownPathMethod || x.path != profile.ProbeUnknownPath || x.status != c.Value.Status {
				continue
			}
			other := echo(messageOf(x.body), base+"/"+profile.ProbeUnknownPath, profile.PlaceholderPath)
			if m := echo(c.Value.Message, http.MethodPost, profile.PlaceholderMethod); other != c.Value.Message &&
				m == echo(other, probeUnknownPathMethod, profile.PlaceholderMethod) {
				c.Value.Message = m
			}
			break
		}
	}
	if c := &l.p.HTTP.OtherMethod; c.Known() && !c.Value.Accepted() {
		m := echo(c.Value.Message, base+"/"+profile.ProbeOtherMethodPath, profile.PlaceholderPath)
		m = echo(m, profile.ProbeOtherMethodPath, profile.PlaceholderOperation)
		c.Value.Message = echo(m, profile.ProbeOtherMethod, profile.PlaceholderMethod)
	}
	if c := &l.p.HTTP.RequestContentType; c.Known() && !c.Value.Accepted() {
		c.Value.Message = echo(c.Value.Message, profile.ProbeRequestContentType, profile.PlaceholderContentType)
	}
}

// echo replaces each occurrence of part in message that no letter, digit
// or path character continues on either side with placeholder.
func echo(message, part, placeholder string) string {
	if part == "" || !strings.Contains(message, part) {
		return message
	}
	re := regexp.MustCompile(`(^|[^A-Za-z0-9_/.-])` + regexp.QuoteMeta(part) + `($|[^A-Za-z0-9_/-])`)
	// The expression eats the characters around a match: replace until
	// none is left, so that two occurrences side by side both go.
	for {
		next := re.ReplaceAllString(message, "${1}"+strings.ReplaceAll(placeholder, "$", "$$")+"${2}")
		if next == message {
			return message
		}
		message = next
	}
}

// headerClasses learns rateLimit.headerClasses from every answer met: a
// refusal to a POST of an operation whose x-api-key is the primary
// account's but whose secret or x-account-id is not (unauthenticated),
// and the refusal of a Campaign Stats {} with the right credentials
// (refused: §4.3's 400, or a framework's 422, a body's refusal whether
// the limit counted it or not), and the answers to the unknown path,
// another method and a body over the limit with the right credentials
// (routing: decided before the credentials in the simulator). Each class's answers must agree on their rate-limit headers,
// names the simulator can write.
func (l *learner) headerClasses() {
	var unauth, refused, routing []*exch
	pr := l.env.Primary
	for _, x := range l.exchanges() {
		h := x.reqHeader
		if x.status < 400 || x.status > 499 || x.status == http.StatusTooManyRequests || h.Get(spec.HeaderAPIKey) != pr.APIKey {
			continue
		}
		rightAccount := h.Get(spec.HeaderAPISecret) == pr.APISecret && h.Get(spec.HeaderAccountID) == pr.AccountID
		switch {
		case x.path == profile.ProbeUnknownPath, x.op != "" && x.method != http.MethodPost, x.status == http.StatusRequestEntityTooLarge:
			if rightAccount {
				routing = append(routing, x)
			}
		case x.op == "" || x.method != http.MethodPost:
		case !rightAccount:
			unauth = append(unauth, x)
		case x.op == spec.PathCampaignStats && string(x.reqBody) == "{}" && h.Get("Content-Type") != "" && !notBodys(x.status):
			refused = append(refused, x)
		}
	}
	names := func(class string, xs []*exch) ([]string, string) {
		if len(xs) == 0 {
			return nil, "no " + class + " answer was met"
		}
		var first []string
		for i, x := range xs {
			var ns []string
			for k := range x.header {
				if profile.IsRateLimitHeader(k) {
					ns = append(ns, http.CanonicalHeaderKey(k))
				}
			}
			slices.Sort(ns)
			for _, n := range ns {
				if !slices.Contains(profile.PlayableRateHeaders(), n) {
					return nil, fmt.Sprintf("a %s answer (%d) carries %s, which the simulator cannot write", class, x.status, n)
				}
			}
			if i == 0 {
				first = append([]string{}, ns...)
			} else if !slices.Equal(first, ns) {
				return nil, fmt.Sprintf("%s answers carry different rate-limit headers: %v (%d) and %v (%d)", class, first, xs[0].status, ns, x.status)
			}
		}
		return first, ""
	}
	u, whyU := names("unauthenticated", unauth)
	r, whyR := names("refused", refused)
	ro, whyRo := names("routing", routing)
	ev := l.evidences(append(append(firstOf(unauth), firstOf(refused)...), firstOf(routing)...)...)
	if why := strings.Join(slices.DeleteFunc([]string{whyU, whyR, whyRo}, func(s string) bool { return s == "" }), "; "); why != "" {
		l.p.Rate.HeaderClasses = unknown[profile.RateHeaderClasses](why, ev...)
		return
	}
	l.p.Rate.HeaderClasses = profile.Choice[profile.RateHeaderClasses]{Value: profile.RateHeaderClasses{Unauthenticated: u, Refused: r, Routing: ro}, Evidence: ev}
}

// notBodys reports whether status is no refusal of a body: the
// credentials', another method's, the body limit's or the rate limit's.
func notBodys(status int) bool {
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusMethodNotAllowed, http.StatusRequestEntityTooLarge, http.StatusTooManyRequests:
		return true
	}
	return false
}

// firstOf is xs's first exchange, as evidence.
func firstOf(xs []*exch) []*exch {
	if len(xs) == 0 {
		return nil
	}
	return xs[:1]
}
