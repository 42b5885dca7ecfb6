package server

import (
	"encoding/json"
	"net/mail"
	"regexp"
	"slices"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// decodeContact is Add Contact's body under the profile's
// contact.validation (§4.1: "Response to validation failures on other
// fields: not shown"). Classes whose outcome is the default's are today's
// checks; the others are played first, field by field in §2.1's order.
func (pl *play) decodeContact(f fields, now time.Time) (*simulator.Contact, error) {
	if pl.validation == nil || f.blank("email") && f.blank("phoneNo") {
		// §4.1's own message first, whatever else is wrong (today's).
		return decodeContact(f, now)
	}
	f, skip, err := pl.applyValidation(f)
	if err != nil {
		return nil, err
	}
	return decodeContactSkip(f, now, skip)
}

var dateShapeRE = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)

// classFields are the fields each class covers (ValidationCase.Fields).
var classFields = func() map[string][]string {
	m := map[string][]string{}
	for _, vc := range profile.ValidationCases() {
		m[vc.Class] = vc.Fields
	}
	return m
}()

// validationClass returns the class of profile.ValidationCases that the
// value raw of field belongs to, or "" for none (a valid value, or one
// outside every class: today's checks answer it). A class applies only to
// the fields it lists.
func validationClass(field string, raw json.RawMessage) string {
	class := valueClass(field, raw)
	if class == "" || class == profile.ClassUnknownField || slices.Contains(classFields[class], field) {
		return class
	}
	return ""
}

func valueClass(field string, raw json.RawMessage) string {
	if !slices.Contains(contactFields, field) {
		return profile.ClassUnknownField
	}
	if string(raw) == "null" || len(raw) == 0 {
		return ""
	}
	var str string
	isString := raw[0] == '"' && json.Unmarshal(raw, &str) == nil
	switch field {
	case "emailOptStatus", "smsOptStatus":
		if isString {
			return profile.ClassOptType
		}
		if v, ok := jsonInteger(string(raw)); ok && v != 0 && v != 1 {
			return profile.ClassOptValue
		}
		return ""
	case "tag", "playerType":
		if isString {
			return profile.ClassListType
		}
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) == nil {
			for _, it := range items {
				if string(it) != "null" && it[0] != '"' {
					return profile.ClassListItem
				}
			}
		}
		return ""
	}
	if !isString {
		if raw[0] != '{' && raw[0] != '[' {
			return profile.ClassStringType // a number or a boolean
		}
		return ""
	}
	if str == "" {
		return profile.ClassEmptyString
	}
	switch field {
	case "gender":
		if !slices.Contains(spec.Genders(), str) {
			return profile.ClassGenderValue
		}
	case "dateOfBirth":
		if !dateShapeRE.MatchString(str) {
			return profile.ClassDateFormat
		}
		if _, err := time.Parse(spec.DateLayout, str); err != nil {
			return profile.ClassDateImpossible
		}
	case "country":
		if !countryRE.MatchString(str) {
			return profile.ClassCountryFreeText
		}
	case "email":
		if a, err := mail.ParseAddress(str); err != nil || a.Address != str || a.Name != "" {
			return profile.ClassEmailFormat
		}
	}
	return ""
}

// applyValidation plays the classes the profile answers otherwise than the
// default: a refusal is returned as the error; an accepted value is made
// one today's decoding stores, and its field goes into skip (no format or
// range check). Choices made where a class is accepted (ASSUMPTION, what a
// lenient deployment does): a number where a string is expected is stored
// as its text (5 → "5"); an opt status sent as a string is stored as its
// integer when it is "0" or "1", dropped otherwise; a list sent as one
// string is a list of that string; a list's non-string items are stored as
// their text; an unknown field is ignored; an out-of-range opt status, a
// gender, date, country or email of the wrong form is stored as sent.
func (pl *play) applyValidation(f fields) (fields, map[string]bool, error) {
	keys := make([]string, 0, len(f))
	for _, k := range contactFields {
		if _, ok := f[k]; ok {
			keys = append(keys, k)
		}
	}
	var unknown []string
	for k := range f {
		if !slices.Contains(contactFields, k) {
			unknown = append(unknown, k)
		}
	}
	slices.Sort(unknown)
	keys = append(keys, unknown...)
	var out fields
	var skip map[string]bool
	for _, k := range keys {
		class := validationClass(k, f[k])
		o, ok := pl.validation[class]
		if !ok {
			continue // today's checks answer it
		}
		if !o.Accepted() {
			return nil, nil, withFinding(simulator.FindingInvalidField, k, refuse(o, k))
		}
		if out == nil {
			out = make(fields, len(f))
			for k, v := range f {
				out[k] = v
			}
			skip = map[string]bool{}
		}
		switch class {
		case profile.ClassUnknownField:
			delete(out, k)
		case profile.ClassStringType:
			out[k], _ = json.Marshal(string(f[k]))
		case profile.ClassOptType:
			var s string
			_ = json.Unmarshal(f[k], &s)
			if s == "0" || s == "1" {
				out[k] = json.RawMessage(s)
			} else {
				delete(out, k)
			}
		case profile.ClassListType:
			var s string
			_ = json.Unmarshal(f[k], &s)
			out[k], _ = json.Marshal([]string{s})
		case profile.ClassListItem:
			var items []json.RawMessage
			_ = json.Unmarshal(f[k], &items)
			texts := make([]string, 0, len(items))
			for _, it := range items {
				var s string
				if json.Unmarshal(it, &s) != nil {
					s = string(it)
				}
				texts = append(texts, s)
			}
			out[k], _ = json.Marshal(texts)
		default:
			skip[k] = true
		}
	}
	if out == nil {
		return f, nil, nil
	}
	return out, skip, nil
}
