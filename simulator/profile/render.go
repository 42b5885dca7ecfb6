package profile

import (
	"slices"
	"strconv"
	"strings"

	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// Request is what a refusal's message may quote of the request it answers:
// an Outcome's Message is a template whose placeholders name these parts,
// so that one choice says its message of every request of its kind, not
// only of the probe's (issue 31: the simulator's own messages are
// default.json's, played as any profile's are).
type Request struct {
	// Method is {method}, the request's method.
	Method string
	// Path is {path}, the path as sent (escaped), cut as the caller shows
	// a path.
	Path string
	// Operation is {operation}, the operation's path under the base path
	// ("campaign/list").
	Operation string
	// ContentType is {contentType}, the Content-Type sent, cut as the
	// caller shows a header.
	ContentType string
	// Limit is {limit}, the largest body served, in bytes.
	Limit int64
	// Fields are the fields at fault, {field}: bare, their names joined by
	// ", " in sorted order; written in quotes ("{field}"), each name
	// quoted (Go syntax, cut at 64 bytes), sorted, the first five and
	// then how many more.
	Fields []string
	// Offset ({offset}, and {position} one more), Char ({char}) and
	// ParseError ({parseError}) say where and why a body is no JSON
	// (RequestBody.MalformedJSON).
	Offset     int
	Char       string
	ParseError string
}

// Placeholders of a message template (Request).
const (
	PlaceholderMethod      = "{method}"
	PlaceholderPath        = "{path}"
	PlaceholderOperation   = "{operation}"
	PlaceholderContentType = "{contentType}"
	PlaceholderLimit       = "{limit}"
	PlaceholderField       = "{field}"
)

// Render is message with each placeholder replaced by req's part. A
// message without one is returned as it is: a learned message quoting a
// probe's request word for word is played so (docs/fidelity.md, Limits).
func Render(message string, req Request) string {
	if !strings.Contains(message, "{") {
		return message
	}
	var pairs []string
	if strings.Contains(message, `"`+PlaceholderField+`"`) {
		pairs = append(pairs, `"`+PlaceholderField+`"`, quotedFields(req.Fields))
	}
	if strings.Contains(message, PlaceholderField) {
		names := slices.Clone(req.Fields)
		slices.Sort(names)
		pairs = append(pairs, PlaceholderField, strings.Join(names, ", "))
	}
	for _, p := range []struct{ name, value string }{
		{PlaceholderMethod, req.Method}, {PlaceholderPath, req.Path}, {PlaceholderOperation, req.Operation},
		{PlaceholderContentType, req.ContentType}, {PlaceholderLimit, strconv.FormatInt(req.Limit, 10)},
		{PlaceholderOffset, strconv.Itoa(req.Offset)}, {PlaceholderPosition, strconv.Itoa(req.Offset + 1)},
		{PlaceholderChar, req.Char}, {PlaceholderParseError, req.ParseError},
	} {
		if strings.Contains(message, p.name) {
			pairs = append(pairs, p.name, p.value)
		}
	}
	if len(pairs) == 0 {
		return message
	}
	return strings.NewReplacer(pairs...).Replace(message)
}

// quotedFields names fields as a refusal of unknown fields does: each
// quoted and cut at 64 bytes, sorted, at most five and then "and N more".
func quotedFields(fields []string) string {
	q := make([]string, len(fields))
	for i, f := range fields {
		q[i] = strconv.Quote(shorten(f))
	}
	slices.Sort(q)
	if len(q) > 5 {
		q = append(q[:5], "and "+strconv.Itoa(len(q)-5)+" more")
	}
	return strings.Join(q, ", ")
}

// shorten cuts a client's string to 64 bytes for a message.
func shorten(s string) string {
	if len(s) > 64 {
		return strings.ToValidUTF8(s[:64], "") + "…"
	}
	return s
}

// ProbeRequestContentType is the Content-Type http.requestContentType's
// probe sends a JSON body with.
const ProbeRequestContentType = "text/plain"

// ProbeWrongTypeField is the field campaignList.wrongType's probe sends as
// a string.
const ProbeWrongTypeField = "limit"

// ProbeRequest is the request the learner's probe of choice (its JSON path,
// "http.unknownPath"; a validation class as "contact.validation.<class>")
// sends, as a message template quotes it: a template rendered at it is
// the message the probe met. The parts a choice's probe does not set are
// empty.
func ProbeRequest(choice string) Request {
	if r, ok := probeRequestBody(choice); ok {
		return r
	}
	if class, ok := strings.CutPrefix(choice, "contact.validation."); ok {
		for _, vc := range ValidationCases() {
			if vc.Class == class {
				return Request{Method: "POST", Operation: spec.PathContactAdd, Path: spec.BasePath + "/" + spec.PathContactAdd, Fields: []string{vc.Field}}
			}
		}
		return Request{}
	}
	op := map[string]string{"campaignList": spec.PathCampaignList, "campaignStats": spec.PathCampaignStats, "contact": spec.PathContactAdd}
	section, name, _ := strings.Cut(choice, ".")
	r := Request{Method: "POST", Operation: op[section]}
	if r.Operation != "" {
		r.Path = spec.BasePath + "/" + r.Operation
	}
	switch choice {
	case "http.unknownPath":
		r.Path = spec.BasePath + "/" + ProbeUnknownPath
	case "http.otherMethod":
		r.Method, r.Operation, r.Path = ProbeOtherMethod, ProbeOtherMethodPath, spec.BasePath+"/"+ProbeOtherMethodPath
	case "http.requestContentType":
		r.ContentType = ProbeRequestContentType
	case "contact.duplicateEmail":
		r.Fields = []string{"email"}
	case "contact.duplicatePhone":
		r.Fields = []string{"phoneNo"}
	case "campaignList.extraField", "campaignStats.extraField":
		r.Fields = []string{ProbeExtraField}
	case "campaignList.wrongType", "campaignList.notInteger", "campaignList.null":
		r.Fields = []string{ProbeWrongTypeField}
	case "campaignStats.unknown", "campaignStats.numericString", "campaignStats.notInteger", "campaignStats.null":
		r.Fields = []string{"campaignId"}
	}
	switch name {
	case "limitAboveMax", "limitBelowOne", "limitMissing":
		r.Fields = []string{"limit"}
	case "pageBelowOne", "pageMissing", "pastLast":
		r.Fields = []string{"page"}
	}
	return r
}

// atProbe is a choice's value with each message rendered at its probe
// (ProbeRequest): what the probe's answer said. A body limit's {limit} is
// the size it accepts.
func atProbe(choice string, v any) any {
	req := ProbeRequest(choice)
	outcome := func(o Outcome, req Request) Outcome {
		o.Message = Render(o.Message, req)
		return o
	}
	switch v := v.(type) {
	case Outcome:
		return outcome(v, req)
	case MethodOutcome:
		v.Outcome = outcome(v.Outcome, req)
		return v
	case PastLast:
		v.Outcome = outcome(v.Outcome, req)
		return v
	case NoContentType:
		v.Outcome = outcome(v.Outcome, req)
		if v.Empty != nil {
			o := outcome(*v.Empty, req)
			v.Empty = &o
		}
		return v
	case Duplicate:
		if v.Refusal != nil {
			o := outcome(*v.Refusal, req)
			v.Refusal = &o
		}
		return v
	case BodyLimit:
		if v.Refusal != nil {
			req.Limit = int64(v.Accepted)
			o := outcome(*v.Refusal, req)
			v.Refusal = &o
		}
		return v
	case map[string]Outcome:
		out := make(map[string]Outcome, len(v))
		for class, o := range v {
			out[class] = outcome(o, ProbeRequest(choice+"."+class))
		}
		return out
	}
	return v
}

// MapStrings returns v, a JSON value as encoding/json decodes it into an
// any, with f applied to each string in it, however deep (the values of
// objects and the items of arrays; not the keys): how a template field
// (FormatTemplate) is written by the learner and rendered by the
// simulator. v's maps and slices are changed in place.
func MapStrings(v any, f func(string) string) any {
	switch v := v.(type) {
	case string:
		return f(v)
	case []any:
		for i := range v {
			v[i] = MapStrings(v[i], f)
		}
	case map[string]any:
		for k := range v {
			v[k] = MapStrings(v[k], f)
		}
	}
	return v
}
