package profile

import (
	"slices"

	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// This file holds the choices a web framework makes for a service without
// its authors writing them (issue 28, "a framework's own shape"): its
// validation refusals as a list of problems, its parse-error message, the
// order its layers check a request in, an integral float read or refused.

// Problems is the list of problems of an error body (ErrorBody.Problems).
type Problems struct {
	// Field is the (dotted) path of the array ("detail", "errors").
	Field string `json:"field"`
	// MessageField is the string field of an item holding the message
	// ("msg").
	MessageField string `json:"messageField"`
	// Fields are an item's other fields, made as a body's (Field); one
	// that names the field at fault is FormatTemplate, its Example
	// holding {field} where the field's name was.
	Fields []Field `json:"fields,omitempty"`
}

// RequestBody holds how a deployment reads a body that is not what §4
// asks (§1 rule 2: "Every request body is JSON"; the answer to one that
// is not: not shown).
type RequestBody struct {
	// MalformedJSON is the answer to a body that is no JSON: the
	// framework's parse error. Its message may quote where the parse
	// failed: {offset} (0-based byte), {position} (1-based), {char} (the
	// byte found there), {parseError} (the simulator's own wording).
	MalformedJSON Choice[Outcome] `json:"malformedJSON"`
	// IntegralFloat is the answer to an integer field sent as a number
	// with a zero fraction ("limit": 5.0): a 200 (read as 5) or the
	// refusal, on every integer field.
	IntegralFloat Choice[Outcome] `json:"integralFloat"`
	// NotObject is the answer to a body that is JSON but no object (an
	// array, null): {parseError} is the simulator's own wording (bodies.go).
	NotObject Choice[Outcome] `json:"notObject"`
	// EndOfInput is the answer to a body that ends before its JSON does
	// (an empty body too): the parse error where there is no byte to
	// quote, {offset} and {position} where it ended (bodies.go).
	EndOfInput Choice[Outcome] `json:"endOfInput"`
}

// The checks of a request, as CheckOrder names them (§5 and §4, which
// the spec does not order).
const (
	// CheckJSON: the body is JSON (Content-Type, size, syntax). When it
	// comes after CheckFields, a body that is no JSON is read as {} (a
	// framework that swallows its parse error).
	CheckJSON = "json"
	// CheckFields: the body's fields are what the operation takes.
	CheckFields = "fields"
	// CheckAccount: x-account-id names an account (403 when not, whatever
	// the key; auth.missingAccount's answer when it is missing).
	CheckAccount = "account"
	// CheckCredentials: x-api-key and x-api-secret are an account's (401).
	CheckCredentials = "credentials"
)

// Checks are the checks CheckOrder orders, in the simulator's own order
// (default.json's): credentials, then the account, then the body.
func Checks() []string {
	return []string{CheckCredentials, CheckAccount, CheckJSON, CheckFields}
}

// CheckOrderOf is the order credentialsFirst alone says, for a profile
// written before CheckOrder: the body before both credential checks, or
// after them.
func CheckOrderOf(credentialsFirst bool) []string {
	if credentialsFirst {
		return Checks()
	}
	return []string{CheckJSON, CheckFields, CheckCredentials, CheckAccount}
}

// Before reports whether check a comes before b in order (a check not in
// order comes after every one that is).
func Before(order []string, a, b string) bool {
	ia, ib := slices.Index(order, a), slices.Index(order, b)
	if ia < 0 {
		return false
	}
	return ib < 0 || ia < ib
}

// Precedence is one pair of checks a probe ordered: First answered when
// both failed.
type Precedence struct{ First, Then string }

// OrderOf is the order the precedences say, every check placed: a check
// no precedence holds back comes as early as the simulator's order
// (Checks) puts it, so that two deployments that showed the same
// precedences have the same order. ok is false when the precedences
// contradict each other (a cycle).
func OrderOf(ps []Precedence) (order []string, ok bool) {
	all := Checks()
	before := map[string][]string{} // check → the checks that must come first
	for _, p := range ps {
		before[p.Then] = append(before[p.Then], p.First)
	}
	for len(order) < len(all) {
		placed := false
		for _, c := range all {
			if slices.Contains(order, c) {
				continue
			}
			free := true
			for _, b := range before[c] {
				free = free && slices.Contains(order, b)
			}
			if free {
				order, placed = append(order, c), true
				break
			}
		}
		if !placed {
			return nil, false
		}
	}
	return order, true
}

// What the requestBody and checkOrder probes send.
const (
	// ProbeMalformedJSON is requestBody.malformedJSON's body, on Campaign
	// List: ProbeMalformedChar where a value should be, at byte
	// ProbeMalformedOffset (0-based).
	ProbeMalformedJSON   = `{"limit": 1, "page": #}`
	ProbeMalformedOffset = 21
	ProbeMalformedChar   = "#"
	// ProbeParseError is the simulator's own wording of
	// ProbeMalformedJSON's error ({parseError} at the probe; held so by
	// the simulator's tests).
	ProbeParseError = "Request body is not valid JSON: invalid character '#' looking for beginning of value (at byte 17)"
	// ProbeIntegralFloat is requestBody.integralFloat's body, on Campaign
	// List.
	ProbeIntegralFloat = `{"limit": 5.0, "page": 1}`
	// ProbeIntegralFloatField is the field it sends as 5.0.
	ProbeIntegralFloatField = "limit"
)

// Placeholders of a parse error's message (RequestBody.MalformedJSON).
const (
	PlaceholderOffset     = "{offset}"
	PlaceholderPosition   = "{position}"
	PlaceholderChar       = "{char}"
	PlaceholderParseError = "{parseError}"
)

// probeRequestBody is ProbeRequest of a requestBody choice.
func probeRequestBody(choice string) (Request, bool) {
	r := Request{Method: "POST", Operation: spec.PathCampaignList, Path: spec.BasePath + "/" + spec.PathCampaignList}
	switch choice {
	case "requestBody.malformedJSON":
		r.Offset, r.Char, r.ParseError = ProbeMalformedOffset, ProbeMalformedChar, ProbeParseError
	case "requestBody.integralFloat":
		r.Fields = []string{ProbeIntegralFloatField}
	default:
		return probeBodyShape(choice)
	}
	return r, true
}
