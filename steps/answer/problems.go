package answer

// What the spec says of EVERY response (matrix rule every-answer): the
// statements the whole-run observer holds each answer of a run to, each
// checked by the code that checks it everywhere else.

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/matrix"
	"github.com/partner-v3/conformance-kit/steps/result"
)

// rateLimitBody is §7's 429 body, decoded as the suite decodes answers.
var rateLimitBody = func() any {
	v, err := DecodeJSON(fmt.Appendf(nil, `{%q: %q}`, spec.ErrorField, spec.MsgRateLimit))
	if err != nil {
		panic(err)
	}
	return v
}()

// Problem holds one answer to what the spec says of every response and
// returns the condition of rule every-answer it breaks, the sections and
// what is wrong ("" when nothing is). The first broken condition counts: a
// body that is not JSON is not also a wrong 429 body.
//
// An answer to a request that is not one of the spec's operations (another
// method, another path) is held to the same statements, as a WARNING: §1
// rule 3 says every response body is JSON, but what answers a method or
// path the service does not define is often a layer before it.
func Problem(a *Answer) (cond string, sections []string, problem string, level result.Level) {
	if a.Err != nil || a.Method == http.MethodHead || a.Status < 200 || a.Status == http.StatusNoContent || a.Status == http.StatusNotModified {
		return "", nil, "", ""
	}
	level = result.LevelFailure
	if a.Method != http.MethodPost || a.Operation() == "" {
		level = result.LevelWarning
	}
	if _, err := a.JSON(); err != nil {
		return matrix.AnswerJSON, []string{"1"}, fmt.Sprintf("status %d, but the %v: every response body is JSON (spec §1 rule 3)", a.Status, err), level
	}
	if p := LabelProblem(a); p != "" {
		return matrix.AnswerJSON, []string{"1"}, fmt.Sprintf("status %d: %s", a.Status, p), level
	}
	switch a.Status {
	case http.StatusTooManyRequests:
		if p := ExactBodyProblem(a, rateLimitBody); p != "" {
			return matrix.Answer429, []string{"7"}, p, level
		}
	case http.StatusUnauthorized, http.StatusForbidden:
		// §5 says what an incorrect key or secret (401) and a mismatched
		// account id (403) get; what a request without one of the headers
		// gets is not shown, so its message is not held to either.
		if slices.ContainsFunc(spec.Headers(), func(h string) bool { return len(a.Header.Values(h)) == 0 }) {
			return "", nil, "", ""
		}
		cond, msg := matrix.Answer401, spec.MsgInvalidCredentials
		if a.Status == http.StatusForbidden {
			cond, msg = matrix.Answer403, spec.MsgUnauthorizedAccount
		}
		if p := MessageProblem(a, msg); p != "" {
			return cond, []string{"5", "7"}, fmt.Sprintf("status %d, but %s (spec §5, §7: a %d is %q)", a.Status, p, a.Status, msg), level
		}
	case http.StatusOK:
		if secs, p := ShapeProblems(a); p != "" {
			return matrix.AnswerOK, secs, p, level
		}
	}
	return "", nil, "", ""
}

// ExactBodyProblem says how an answer's body differs from want, a body the
// spec fixes whole (§7's 429); "" when it is want, labelled as JSON.
func ExactBodyProblem(a *Answer, want any) string {
	got, err := a.JSON()
	switch {
	case err != nil:
		return fmt.Sprintf("the %d body is not JSON: spec §7 shows it as a JSON object with one string field %q", a.Status, spec.ErrorField)
	case !jsonEqual(got, want):
		return fmt.Sprintf("the %d body is %s, want %s (spec §7: one string field %q holding %q)", a.Status, strings.TrimSpace(string(a.ResponseBody)), JSONText(want), spec.ErrorField, spec.MsgRateLimit)
	}
	return LabelProblem(a)
}

// MessageProblem says why an error answer does not carry the spec's
// message msg as a JSON body; "" when it does. The spec shows no body
// shape for errors other than 429 (§7), so the message may be anywhere in
// the body.
func MessageProblem(a *Answer, msg string) string {
	switch {
	case !IsJSON(a):
		return "the body is not JSON: every response body is JSON (spec §1 rule 3)"
	case LabelProblem(a) != "":
		return LabelProblem(a)
	case !Mentions(a.ResponseBody, msg):
		return fmt.Sprintf("the body does not carry the message %q", msg)
	}
	return ""
}

// jsonEqual compares two decoded JSON values.
func jsonEqual(a, b any) bool { return JSONText(a) == JSONText(b) }
