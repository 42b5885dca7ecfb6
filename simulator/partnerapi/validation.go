package partnerapi

import (
	"encoding/json"
	"net/mail"
	"regexp"
	"slices"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/jsonbody"
	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// classRefusal is the answer to a value of class on field: the class's
// refusal, or nil when the profile accepts the class.
func (pl *play) classRefusal(class, field string) error {
	if o := pl.validation[class]; !o.Accepted() {
		return withFinding(simulator.FindingInvalidField, field, refuse(o, fieldRequest(field)))
	}
	return nil
}

// contactString reads a string field of Add Contact: a number or a
// boolean (string.type) and an empty string (string.empty) on the fields
// those classes cover are answered as the profile says; an accepted
// number is stored as its text (5 → "5").
func (pl *play) contactString(f fields, name string) (string, error) {
	v, err := stringField(f, name)
	if err != nil {
		class := validationClass(name, f.Raw(name))
		if class != profile.ClassStringType && class != profile.ClassContactType {
			return "", err
		}
		if class == profile.ClassContactType {
			// Beside the other of email and phoneNo, phoneNo.type's
			// answer; alone, email.type's (§4.1's refusal, when it reads
			// the value as absent, was decodeContact's first answer).
			other := "phoneNo"
			if name == "phoneNo" {
				other = "email"
			}
			if !pl.contactBlank(f, other) {
				class = profile.ClassContactTypeBeside
			}
			if err := pl.classRefusal(class, name); err != nil {
				return "", err
			}
			if pl.contactTypeAbsent() {
				return "", nil // served, read as absent
			}
			return string(f.Raw(name)), nil
		}
		if err := pl.classRefusal(class, name); err != nil {
			return "", err
		}
		return string(f.Raw(name)), nil
	}
	if v == "" && f.Present(name) && validationClass(name, f.Raw(name)) == profile.ClassEmptyString {
		if err := pl.classRefusal(profile.ClassEmptyString, name); err != nil {
			return "", err
		}
	}
	return v, nil
}

// contactTypeAbsent reports whether the profile reads email or phoneNo of
// another type than string as absent (profile.ContactTypeAbsent).
func (pl *play) contactTypeAbsent() bool {
	return profile.ContactTypeAbsent(pl.validation[profile.ClassContactType])
}

// contactBlank reports whether Add Contact's email or phoneNo is not given
// as far as §4.1's "Either email or phoneNo is required" goes: absent,
// null, empty, or of another type where the profile reads that as absent.
func (pl *play) contactBlank(f fields, name string) bool {
	return f.Blank(name) || validationClass(name, f.Raw(name)) == profile.ClassContactType && pl.contactTypeAbsent()
}

// optStatus reads emailOptStatus or smsOptStatus: one sent as a string
// (optStatus.type), as an integral float (optStatus.integralFloat: in the
// words of a contact's field, not Campaign List's integralFloat) or
// outside 0 and 1 (optStatus.value) is answered as the profile says.
// Accepted, a string is its integer when it is "0" or "1" and dropped
// otherwise (ok false); a float is its integer; a value outside is stored
// as sent.
func (pl *play) optStatus(f fields, name string) (v int64, ok bool, err error) {
	if raw := f.Raw(name); integralFloat(raw) && validationClass(name, raw) == profile.ClassOptFloat {
		if err := pl.classRefusal(profile.ClassOptFloat, name); err != nil {
			return 0, false, err
		}
		v, _ = jsonbody.Integer(raw)
		if v != 0 && v != 1 {
			if err := pl.classRefusal(profile.ClassOptValue, name); err != nil {
				return 0, false, err
			}
		}
		return v, true, nil
	}
	v, ok, err = pl.integer(f, name)
	if err != nil {
		if validationClass(name, f.Raw(name)) != profile.ClassOptType {
			return 0, false, err
		}
		if err := pl.classRefusal(profile.ClassOptType, name); err != nil {
			return 0, false, err
		}
		var s string
		_ = json.Unmarshal(f.Raw(name), &s)
		switch s {
		case "0":
			return 0, true, nil
		case "1":
			return 1, true, nil
		}
		return 0, false, nil
	}
	if ok && v != 0 && v != 1 {
		if err := pl.classRefusal(profile.ClassOptValue, name); err != nil {
			return 0, false, err
		}
	}
	return v, ok, nil
}

// contactList reads tag or playerType: one sent as a string (list.type) or
// holding other items than strings (list.item) is answered as the profile
// says. Accepted, a string is a list of it and an item its text, and the
// list is read again as sent so.
func (pl *play) contactList(f fields, name string) ([]string, error) {
	v, err := stringsField(f, name)
	if err == nil {
		return v, nil
	}
	class := validationClass(name, f.Raw(name))
	if class != profile.ClassListType && class != profile.ClassListItem && class != profile.ClassListNull {
		return nil, err
	}
	if err := pl.classRefusal(class, name); err != nil {
		return nil, err
	}
	var texts []string
	if class == profile.ClassListType {
		var s string
		_ = json.Unmarshal(f.Raw(name), &s)
		texts = []string{s}
	} else {
		var items []json.RawMessage
		_ = json.Unmarshal(f.Raw(name), &items)
		texts = make([]string, 0, len(items))
		for _, it := range items {
			if string(it) == "null" {
				continue // list.null accepted: an item that names nothing
			}
			var s string
			if json.Unmarshal(it, &s) != nil {
				s = string(it)
			}
			texts = append(texts, s)
		}
	}
	raw, _ := json.Marshal(texts)
	return stringsField(fields{{Name: []byte(name), Value: raw}}, name)
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
// outside every class: the simulator's own checks answer it). A class
// applies only to the fields it lists.
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
		if integralFloat(raw) {
			return profile.ClassOptFloat
		}
		if v, ok := jsonbody.Integer(raw); ok && v != 0 && v != 1 {
			return profile.ClassOptValue
		}
		return ""
	case "tag", "playerType":
		if isString {
			return profile.ClassListType
		}
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) == nil {
			class := ""
			for _, it := range items {
				switch {
				case string(it) == "null":
					class = profile.ClassListNull
				case it[0] != '"':
					return profile.ClassListItem // any other item: list.item first
				}
			}
			return class
		}
		return ""
	case "email", "phoneNo":
		if !isString && raw[0] != '{' && raw[0] != '[' {
			return profile.ClassContactType // a number or a boolean
		}
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
