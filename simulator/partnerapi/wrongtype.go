package partnerapi

import (
	"bytes"
	"strconv"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/jsonbody"
	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// This file plays how a deployment reads an integer field of Campaign List
// or Campaign Stats sent as another type (issue 28, profile/wrongtype.go):
// a numeric string is campaignList.wrongType or campaignStats.numericString,
// an integral float requestBody.integralFloat, any other value of no
// integer type (a fraction, true, a word, an object, an array) the
// operation's notInteger, and null the operation's null, read as the
// profile's NullReading says.

// resolveNull reads, once per profile, how each operation reads null: its
// null answer against its missing and notInteger answers, each rendered
// at the probe's field (§4.3's missing campaignId is the spec's 400).
func (pl *play) resolveNull() {
	limit := fieldRequest(profile.ProbeWrongTypeField)
	at := func(o profile.Outcome, req profile.Request) profile.Outcome {
		o.Message = profile.Render(o.Message, req)
		return o
	}
	pl.listNull = profile.NullReading(at(pl.list.Null.Value, limit), at(pl.list.LimitMissing.Value, limit), at(pl.list.NotInteger.Value, limit))
	id := fieldRequest("campaignId")
	pl.statsNull = profile.NullReading(at(pl.stats.Null.Value, id),
		profile.Outcome{Status: 400, Message: spec.MsgCampaignIDRequired}, at(pl.stats.NotInteger.Value, id))
}

// numericString is the integer a JSON string of digits holds (ok false for
// any other value).
func numericString(raw []byte) (int64, bool) {
	if len(raw) < 3 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return 0, false
	}
	n, err := strconv.ParseInt(string(raw[1:len(raw)-1]), 10, 64)
	return n, err == nil
}

// integralFloat reports whether raw is a number written with a fraction or
// an exponent that is still an integer (5.0, 5e0): requestBody.integralFloat's.
func integralFloat(raw []byte) bool {
	if len(raw) == 0 || !(raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') || !bytes.ContainsAny(raw, ".eE") {
		return false
	}
	_, isInt := jsonbody.Integer(raw)
	return isInt
}

// typedInteger reads the integer field name of an operation, present and
// not null, under its choices: a numeric string answered as numericString
// says (refused, or read as its integer), an integral float as
// requestBody.integralFloat says (pl.integer), and any other value of no
// integer type as notInteger says: refused naming the field, or, accepted,
// the value its PageSize (limit) or PageNo (page) says, else fallback.
func (pl *play) typedInteger(f fields, name string, numeric, notInteger profile.Outcome, fallback int64) (int64, error) {
	raw := f.Raw(name)
	if n, ok := numericString(raw); ok {
		if !numeric.Accepted() {
			return 0, withFinding(simulator.FindingInvalidField, name, refuse(numeric, fieldRequest(name)))
		}
		return n, nil
	}
	if _, isInt := jsonbody.Integer(raw); isInt || integralFloat(raw) {
		v, _, err := pl.integer(f, name)
		return v, err
	}
	return acceptedValue(notInteger, name, fallback)
}

// acceptedValue is the value a choice o serves for field name: its refusal
// (naming the field), or the page size (limit) or page (page) its 200
// answered, else fallback.
func acceptedValue(o profile.Outcome, name string, fallback int64) (int64, error) {
	if !o.Accepted() {
		return 0, withFinding(simulator.FindingInvalidField, name, refuse(o, fieldRequest(name)))
	}
	v := int64(o.PageSize)
	if name == "page" {
		v = int64(o.PageNo)
	}
	if v <= 0 || name == "campaignId" {
		return fallback, nil
	}
	return v, nil
}

// nullOf plays null in an integer field: read as the field missing
// (isMissing true: the caller answers its missing), as a value of no
// integer type (notInteger), or the operation's own null answer.
func nullOf(reading string, null, notInteger profile.Outcome, name string, fallback int64) (v int64, isMissing bool, err error) {
	switch reading {
	case profile.NullMissing:
		return 0, true, nil
	case profile.NullWrongType:
		v, err = acceptedValue(notInteger, name, fallback)
		return v, false, err
	}
	v, err = acceptedValue(null, name, fallback)
	return v, false, err
}
