package profile

import "github.com/partner-v3/conformance-kit/simulator/spec"

// This file holds a framework's own words for two bodies that are not one
// JSON object (issue 28, "a framework's own shape"): a body that is JSON
// but no object (an array, null: FastAPI's 422 "Input should be a valid
// dictionary"), and a body that ends before its JSON does (a parser's
// "unexpected end of input", where there is no byte to quote).

// What the requestBody.notObject and requestBody.endOfInput probes send,
// on Campaign List, and the simulator's own wording of their errors
// ({parseError} at the probe; held so by the simulator's tests).
const (
	// ProbeNotObject is valid JSON, an array holding the body a client
	// meant to send.
	ProbeNotObject      = `[{"limit": 1, "page": 1}]`
	ProbeNotObjectError = "Request body must be a JSON object"
	// ProbeEndOfInput ends where a value should come: its parse fails at
	// its length, ProbeEndOfInputOffset.
	ProbeEndOfInput       = `{"limit": 1, "page": `
	ProbeEndOfInputOffset = len(ProbeEndOfInput)
	ProbeEndOfInputError  = "Request body is not valid JSON: unexpected end of JSON input"
)

// probeBodyShape is ProbeRequest of requestBody.notObject and endOfInput.
func probeBodyShape(choice string) (Request, bool) {
	r := Request{Method: "POST", Operation: spec.PathCampaignList, Path: spec.BasePath + "/" + spec.PathCampaignList}
	switch choice {
	case "requestBody.notObject":
		r.ParseError = ProbeNotObjectError
	case "requestBody.endOfInput":
		r.Offset, r.ParseError = ProbeEndOfInputOffset, ProbeEndOfInputError
	default:
		return Request{}, false
	}
	return r, true
}
