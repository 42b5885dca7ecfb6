package learn

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// This file learns the choices a web framework makes for a service
// (issue 28, profile/framework.go): its parse error, integral floats, the
// order of its checks, refusals that list their problems.

// framework learns requestBody and auth.checkOrder: a body that is no
// JSON, an integral float, and five requests wrong in two ways each, whose
// answer says which check came first.
func (l *learner) framework(ctx context.Context) error {
	bad, err := l.send(ctx, req{path: spec.PathCampaignList, body: profile.ProbeMalformedJSON})
	if err != nil {
		return err
	}
	malformed := outcome(bad)
	if !malformed.Accepted() {
		malformed.Message = parseTemplate(malformed.Message)
	}
	l.p.RequestBody.MalformedJSON = l.outcomeChoice(bad, malformed)
	x, err := l.send(ctx, req{path: spec.PathCampaignList, body: profile.ProbeIntegralFloat, field: profile.ProbeIntegralFloatField})
	if err != nil {
		return err
	}
	l.p.RequestBody.IntegralFloat = l.outcomeChoice(x, withField(listOutcome(x), profile.ProbeIntegralFloatField))
	if err := l.bodyShapes(ctx); err != nil {
		return err
	}

	// The order: each probe fails two checks; its answer names the first.
	wrongSecret := l.env.Primary
	wrongSecret.APISecret += "-wrong"
	wrongKey := l.env.Primary
	wrongKey.APIKey += "-wrong"
	wrongKey.AccountID = "learn-no-such-account-" + l.env.RunID
	unknownAccount := l.env.Primary
	unknownAccount.AccountID = wrongKey.AccountID
	probes := []struct {
		r           req
		first, then string
		// firstSays reports whether the answer is first's refusal; else
		// it must be then's (thenSays), or nothing is learned.
		firstSays, thenSays func(x *exch) bool
	}{
		{req{path: spec.PathCampaignList, body: profile.ProbeMalformedJSON, acct: wrongSecret}, profile.CheckJSON, profile.CheckCredentials,
			func(x *exch) bool { return x.status == bad.status && x.status != http.StatusUnauthorized },
			func(x *exch) bool { return x.status == http.StatusUnauthorized }},
		{req{path: spec.PathCampaignStats, body: `{}`, acct: wrongSecret}, profile.CheckFields, profile.CheckCredentials,
			func(x *exch) bool { return x.status == http.StatusBadRequest },
			func(x *exch) bool { return x.status == http.StatusUnauthorized }},
		{req{path: spec.PathCampaignList, body: listBody, acct: wrongKey}, profile.CheckAccount, profile.CheckCredentials,
			func(x *exch) bool { return x.status == http.StatusForbidden },
			func(x *exch) bool { return x.status == http.StatusUnauthorized }},
		{req{path: spec.PathCampaignStats, body: `{}`, acct: unknownAccount}, profile.CheckFields, profile.CheckAccount,
			func(x *exch) bool { return x.status == http.StatusBadRequest },
			func(x *exch) bool { return x.status == http.StatusForbidden }},
		// A body that is no JSON and lacks campaignId: §4.3's 400 says the
		// fields were read (the body taken for {}), the parse error that
		// the JSON came first.
		{req{path: spec.PathCampaignStats, body: `{"campaignId": #}`}, profile.CheckFields, profile.CheckJSON,
			func(x *exch) bool { return messageOf(x.body) == spec.MsgCampaignIDRequired },
			func(x *exch) bool { return x.status == bad.status && messageOf(x.body) != spec.MsgCampaignIDRequired }},
	}
	var ps []profile.Precedence
	var ev []*exch
	var odd []string
	for _, p := range probes {
		x, err := l.send(ctx, p.r)
		if err != nil {
			return err
		}
		ev = append(ev, x)
		switch {
		case p.firstSays(x):
			ps = append(ps, profile.Precedence{First: p.first, Then: p.then})
		case p.thenSays(x):
			ps = append(ps, profile.Precedence{First: p.then, Then: p.first})
		default:
			odd = append(odd, fmt.Sprintf("%s and %s both failing were answered %d", p.first, p.then, x.status))
		}
	}
	order, ok := profile.OrderOf(ps)
	switch {
	case len(odd) > 0:
		l.p.Auth.CheckOrder = unknown[[]string](strings.Join(odd, "; "), l.evidences(ev...)...)
	case !ok:
		l.p.Auth.CheckOrder = unknown[[]string](fmt.Sprintf("the answers contradict each other: %v", ps), l.evidences(ev...)...)
	default:
		l.p.Auth.CheckOrder = profile.Choice[[]string]{Value: order, Evidence: l.evidences(ev...)}
	}
	return nil
}

// parseTemplate writes where a parse error's message quotes the probe's
// fault ({char}, {offset}, {position}: profile.RequestBody), so that the
// simulator says it of the body a client really sent.
func parseTemplate(msg string) string {
	msg = strings.ReplaceAll(msg, profile.ProbeMalformedChar, profile.PlaceholderChar)
	for _, n := range []struct {
		v           int
		placeholder string
	}{{profile.ProbeMalformedOffset, profile.PlaceholderOffset}, {profile.ProbeMalformedOffset + 1, profile.PlaceholderPosition}} {
		msg = regexp.MustCompile(`\b`+strconv.Itoa(n.v)+`\b`).ReplaceAllLiteralString(msg, n.placeholder)
	}
	return msg
}

// exemplars are the error answers errorBodies reads each status's shape
// from, one per status but 429: the first met, or for a body that lists
// its problems the first of a probe about one field, whose name its items
// may quote.
func (l *learner) exemplars() []*exch {
	var out []*exch
	at := map[int]int{}
	for _, x := range l.exchanges() {
		if x.status < 400 || x.status == http.StatusTooManyRequests {
			continue
		}
		i, seen := at[x.status]
		switch {
		case !seen:
			at[x.status] = len(out)
			out = append(out, x)
		case out[i].field == "" && x.field != "" && hasProblems(out[i].body) && hasProblems(x.body):
			out[i] = x
		}
	}
	return out
}

func hasProblems(body []byte) bool {
	keys, vals, ok := flatObject(body)
	if !ok {
		return false
	}
	pr, _ := problemsOf(keys, vals, &exch{})
	return pr != nil
}

// problemsOf finds the list of problems of an error body: an array of
// objects each with a string field (profile.Problems). It returns the
// list's shape, read from its first item, and keys without the array's.
func problemsOf(keys []string, vals map[string]json.RawMessage, x *exch) (*profile.Problems, []string) {
	for i, k := range keys {
		var items []json.RawMessage
		if json.Unmarshal(vals[k], &items) != nil || len(items) == 0 {
			continue
		}
		ikeys, ivals, ok := flatObject(items[0])
		if !ok {
			continue
		}
		mf := messageField(ikeys, ivals)
		if mf == "" {
			continue
		}
		pr := &profile.Problems{Field: k, MessageField: mf}
		for _, ik := range ikeys {
			if ik != mf {
				pr.Fields = append(pr.Fields, problemField(ik, ivals[ik], x))
			}
		}
		return pr, append(keys[:i:i], keys[i+1:]...)
	}
	return nil, keys
}

// problemMessage is the message of a body whose only message is in its
// list of problems: the first item's.
func problemMessage(keys []string, vals map[string]json.RawMessage) string {
	pr, _ := problemsOf(keys, vals, &exch{})
	if pr == nil {
		return ""
	}
	var items []json.RawMessage
	_ = json.Unmarshal(vals[pr.Field], &items)
	_, ivals, _ := flatObject(items[0])
	var s string
	_ = json.Unmarshal(ivals[pr.MessageField], &s)
	return s
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// problemField is one field of a problem: a template where it names the
// field the probe was about (FastAPI's "loc": ["body", "limit"] is
// ["body", "{field}"]), else as any body field (fieldOf).
func problemField(name string, v json.RawMessage, x *exch) profile.Field {
	if x.field != "" {
		var val any
		if json.Unmarshal(v, &val) == nil {
			word := regexp.MustCompile(`\b` + regexp.QuoteMeta(x.field) + `\b`)
			changed := false
			t := profile.MapStrings(val, func(s string) string {
				if !word.MatchString(s) {
					return s
				}
				changed = true
				return word.ReplaceAllLiteralString(s, profile.PlaceholderField)
			})
			if changed {
				return profile.Field{Name: name, Type: profile.JSONType(v), Format: profile.FormatTemplate, Example: mustJSON(t)}
			}
		}
	}
	return fieldOf(name, v, x)
}
