package partnerapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/jsonbody"
	"github.com/partner-v3/conformance-kit/simulator/profile"
)

// This file plays the choices a web framework makes for a service (issue
// 28, profile/framework.go): a parse error's message, integral floats,
// the order of the checks, refusals as a list of problems.

// malformed answers a body jsonbody could not read as one JSON object
// (jsonErr) as the profile says (requestBody.malformedJSON), its message
// rendered where the parse failed; or, when the profile checks the fields
// before the JSON (auth.checkOrder: a framework that swallows its parse
// error), reads it as {}.
func (pl *play) malformed(body []byte, jsonErr error) (fields, error) {
	if !profile.Before(pl.checkOrder, profile.CheckJSON, profile.CheckFields) {
		return fields{}, nil
	}
	off, ch := syntaxPosition(body)
	req := profile.Request{Offset: off, Char: ch, ParseError: simulator.ErrorMessage(jsonErr)}
	return nil, withFinding(simulator.FindingMalformedJSON, "", refuse(pl.parseOutcome(body, off, ch), req))
}

// syntaxPosition is where body stops being JSON: the 0-based offset of
// the first byte that cannot be there and that byte ("" at the end of
// the body, or where the body is JSON but not what jsonbody takes).
func syntaxPosition(body []byte) (int, string) {
	var raw json.RawMessage
	err := json.Unmarshal(body, &raw)
	var syn *json.SyntaxError
	if !errors.As(err, &syn) {
		return 0, ""
	}
	off := int(syn.Offset)
	if strings.Contains(syn.Error(), "end of JSON input") || off < 1 || off > len(body) {
		return min(max(off, 0), len(body)), ""
	}
	return off - 1, string(body[off-1 : off])
}

// integer reads an integer field (integerField) under the profile's
// requestBody.integralFloat: a number written with a fraction or an
// exponent that is still an integer (5.0, 5e0) is refused with its
// outcome, naming the field, or read as the integer.
func (pl *play) integer(f fields, name string) (int64, bool, error) {
	raw := f.Raw(name)
	if len(raw) > 0 && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') && bytes.ContainsAny(raw, ".eE") {
		if _, isInt := jsonbody.Integer(raw); isInt {
			if o := pl.integralFloat; !o.Accepted() {
				return 0, false, withFinding(simulator.FindingInvalidField, name, refuse(o, fieldRequest(name)))
			}
		}
	}
	return integerField(f, name)
}

// unknownAccount reports whether x-account-id names no account, for a
// profile that checks the account before the credentials
// (auth.checkOrder): such a deployment finds the account first and
// answers 403 whatever the key. A store that cannot tell says no: the
// credentials' answer stands.
func (s *API) unknownAccount(r *http.Request, account string) bool {
	if account == "" {
		return true
	}
	_, err := s.Accounts.LookupAccount(r.Context(), simulator.AccountLookup{AccountIDs: []string{account}})
	return simulator.ErrorCode(err) == simulator.ENOTFOUND
}

// appendProblems appends `"name":[items]` of a body that lists its
// problems (profile.Problems): one item per field at fault (one naming
// none when there is none), each with the message said of its field and
// the other fields, a template's {field} its name.
func appendProblems(dst []byte, pr *profile.Problems, message string, faulty []string, status int, requestID string) []byte {
	if len(faulty) == 0 {
		faulty = []string{""}
	}
	dst = append(dst, '[')
	for i, field := range faulty {
		if i > 0 {
			dst = append(dst, ',')
		}
		leaves := []bodyLeaf{{strings.Split(pr.MessageField, "."), func(dst []byte) []byte {
			m, _ := json.Marshal(message)
			return append(dst, m...)
		}}}
		for _, f := range pr.Fields {
			leaves = append(leaves, bodyLeaf{strings.Split(f.Name, "."), func(dst []byte) []byte {
				if f.Format == profile.FormatTemplate {
					return append(dst, renderTemplate(f.Example, field)...)
				}
				return appendFieldValue(dst, f, status, requestID)
			}})
		}
		dst = appendTree(dst, leaves)
	}
	return append(dst, ']')
}

// renderTemplate is a template field's JSON with {field} in each of its
// strings replaced by field (profile.FormatTemplate).
func renderTemplate(example json.RawMessage, field string) []byte {
	var v any
	if err := json.Unmarshal(example, &v); err != nil {
		return example // Check keeps a template JSON
	}
	b, err := json.Marshal(profile.MapStrings(v, func(s string) string {
		return strings.ReplaceAll(s, profile.PlaceholderField, field)
	}))
	if err != nil {
		return example
	}
	return b
}

// faultyFields are the fields an error names: a profile's refusal's
// request fields, else the field of the error's finding.
func faultyFields(err error) []string {
	var oe *outcomeError
	if errors.As(err, &oe) && len(oe.fields) > 0 {
		return oe.fields
	}
	var fe *findingError
	if errors.As(err, &fe) && fe.detail != "" && !strings.Contains(fe.detail, " ") {
		return []string{fe.detail}
	}
	return nil
}

// problemsBody is the body of an error whose shape lists problems.
func problemsBody(dst []byte, message string, b profile.ErrorBody, faulty []string, status int, requestID string) []byte {
	leaves := []bodyLeaf{{strings.Split(b.Problems.Field, "."), func(dst []byte) []byte {
		return appendProblems(dst, b.Problems, message, faulty, status, requestID)
	}}}
	if b.MessageField != "" {
		leaves = append(leaves, bodyLeaf{strings.Split(b.MessageField, "."), func(dst []byte) []byte {
			m, _ := json.Marshal(message)
			return append(dst, m...)
		}})
	}
	for _, f := range b.Fields {
		leaves = append(leaves, bodyLeaf{strings.Split(f.Name, "."), func(dst []byte) []byte {
			return appendFieldValue(dst, f, status, requestID)
		}})
	}
	return appendTree(dst, leaves)
}
