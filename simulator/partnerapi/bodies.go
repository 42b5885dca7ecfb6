package partnerapi

import (
	"bytes"
	"encoding/json"

	"github.com/partner-v3/conformance-kit/simulator/profile"
)

// parseOutcome is the answer to a body jsonbody could not read as one
// JSON object (issue 28, profile/bodies.go): requestBody.notObject for
// JSON that is no object (an array, null), requestBody.endOfInput for a
// body that ends before its JSON does (an empty one too: off at its end,
// no byte to quote), requestBody.malformedJSON for the rest.
func (pl *play) parseOutcome(body []byte, off int, ch string) profile.Outcome {
	switch {
	case json.Valid(body) && !bytes.HasPrefix(bytes.TrimSpace(body), []byte("{")):
		// An object jsonbody refuses (a duplicate key, too many
		// fields) is no case of this: the parse error's answer.
		return pl.notObject
	case ch == "" && off == len(body):
		return pl.endOfInput
	}
	return pl.malformedJSON
}
