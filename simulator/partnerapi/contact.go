package partnerapi

import (
	"errors"
	"fmt"
	"net/http"
	"net/mail"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/httpjson"
	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// Limits the spec leaves open (§8: "maximum field lengths and maximum number
// of tags: not shown"). ASSUMPTION: generous caps, each a clear 400.
const (
	maxFieldLen = 255
	maxTags     = 100
	maxTagLen   = 64
)

var contactFields = []string{"email", "phoneNo", "firstName", "lastName", "addrOne", "addrTwo", "city",
	"country", "state", "zipCode", "gender", "dateOfBirth", "emailOptStatus", "smsOptStatus", "tag", "playerType"}

var (
	phoneRE   = regexp.MustCompile(`^\+?[0-9][0-9 ().-]*[0-9]$`)
	countryRE = regexp.MustCompile(`^[A-Za-z]{2,3}$`)
)

type contactAddResponse struct {
	Status    string `json:"status"`
	ContactID string `json:"contactId"`
}

// handleContactAdd is Add Contact (spec §4.1).
func (s *API) handleContactAdd(w http.ResponseWriter, r *http.Request) {
	f, err := s.readFields(r)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	now, err := s.requestTime(r)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	pl := s.play(r)
	c, err := pl.decodeContact(f, now)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	c.ID = pl.newContactID()
	c.AccountID = simulator.AccountFromContext(r.Context()).AccountID
	c.CreatedAt, c.UpdatedAt = now, now
	stored, err := s.storeContact(r, pl, c)
	if err != nil {
		s.Error(w, r, fmt.Errorf("store contact: %w", err))
		return
	}
	// For the client report's duplicate-contact rule (spec §2.1).
	rec := recordFrom(r)
	rec.ContactAdded, rec.ContactEmail, rec.ContactPhone = true, c.Email, c.PhoneNo
	writeContactAdded(w, stored.ID)
}

// writeContactAdded writes the spec §4.1 success answer, the bytes
// json.Encoder writes for contactAddResponse, without reflection when the
// identifier needs no escaping (ours never do: see newContactID).
func writeContactAdded(w http.ResponseWriter, id string) {
	for i := 0; i < len(id); i++ {
		if c := id[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			httpjson.Write(w, http.StatusOK, &contactAddResponse{Status: spec.StatusSuccess, ContactID: id})
			return
		}
	}
	buf := httpjson.GetBuffer()
	defer httpjson.PutBuffer(buf)
	*buf = append(append(append((*buf)[:0], `{"status":"`+spec.StatusSuccess+`","contactId":"`...), id...), "\"}\n"...)
	httpjson.WriteBody(w, http.StatusOK, *buf)
}

// decodeContact turns an Add Contact body into a Contact, checking every
// field of spec §2.1 (now bounds dateOfBirth) under the profile's
// contact.validation (§4.1: "Response to validation failures on other
// fields: not shown"): where a value falls in one of its classes, the
// class's outcome answers it, refused with its message or accepted
// (contactString, optStatus, contactList say how it is stored); every
// other check is the simulator's own.
func (pl *play) decodeContact(f fields, now time.Time) (*simulator.Contact, error) {
	// Spec §4.1 first: when the body gives neither email nor phoneNo, the
	// spec's own message is the answer, whatever else is wrong with it.
	if pl.contactBlank(f, "email") && pl.contactBlank(f, "phoneNo") {
		return nil, withFinding(simulator.FindingInvalidField, "email or phoneNo",
			&simulator.Error{Code: simulator.EINVALID, Message: spec.MsgEmailOrPhoneRequired})
	}
	f, err := pl.extraFields(f, pl.validation[profile.ClassUnknownField], contactFields...)
	if err != nil {
		return nil, err
	}
	c := &simulator.Contact{}
	for _, sf := range []struct {
		name string
		dst  *string
	}{
		{"email", &c.Email}, {"phoneNo", &c.PhoneNo}, {"firstName", &c.FirstName}, {"lastName", &c.LastName},
		{"addrOne", &c.AddrOne}, {"addrTwo", &c.AddrTwo}, {"city", &c.City}, {"country", &c.Country},
		{"state", &c.State}, {"zipCode", &c.ZipCode}, {"gender", &c.Gender}, {"dateOfBirth", &c.DateOfBirth},
	} {
		v, err := pl.contactString(f, sf.name)
		if err != nil {
			return nil, err
		}
		if utf8.RuneCountInString(v) > maxFieldLen {
			return nil, invalidField(sf.name, "%s is longer than %d characters", sf.name, maxFieldLen)
		}
		*sf.dst = v
	}
	// An email or phoneNo of another type the profile stores as its text
	// has no format to check (email.type accepted).
	formats := c
	for _, name := range []string{"email", "phoneNo"} {
		if validationClass(name, f.Raw(name)) == profile.ClassContactType {
			cc := *formats
			if name == "email" {
				cc.Email = ""
			} else {
				cc.PhoneNo = ""
			}
			formats = &cc
		}
	}
	if err := pl.validateContactFormats(formats, now); err != nil {
		return nil, err
	}
	for _, opt := range []struct {
		name string
		dst  **int
	}{{"emailOptStatus", &c.EmailOptStatus}, {"smsOptStatus", &c.SMSOptStatus}} {
		v, ok, err := pl.optStatus(f, opt.name)
		if err != nil {
			return nil, err
		}
		if ok {
			n := int(v)
			*opt.dst = &n
		}
	}
	for _, lf := range []struct {
		name string
		dst  *[]string
	}{{"tag", &c.Tag}, {"playerType", &c.PlayerType}} {
		v, err := pl.contactList(f, lf.name)
		if err != nil {
			return nil, err
		}
		if len(v) > maxTags {
			return nil, invalidField(lf.name, "%s holds more than %d names", lf.name, maxTags)
		}
		for _, name := range v {
			if name == "" || utf8.RuneCountInString(name) > maxTagLen {
				return nil, invalidField(lf.name, "%s names must be 1 to %d characters", lf.name, maxTagLen)
			}
		}
		*lf.dst = v
	}
	return c, nil
}

// validateContactFormats checks the formats spec §2.1 states (gender,
// dateOfBirth) and the ones it implies (email, country code), each a
// class of contact.validation, and the phone number and the date's range,
// which are the simulator's own 400s naming the field.
func (pl *play) validateContactFormats(c *simulator.Contact, now time.Time) error {
	if c.Email != "" {
		if !bareAddress(c.Email) {
			if err := pl.classRefusal(profile.ClassEmailFormat, "email"); err != nil {
				return err
			}
		}
	}
	if c.PhoneNo != "" && (!phoneRE.MatchString(c.PhoneNo) || !digitsBetween(c.PhoneNo, 7, 15)) {
		return invalidField("phoneNo", "phoneNo must be a phone number of 7 to 15 digits, optionally with a leading +")
	}
	if c.Country != "" && !countryRE.MatchString(c.Country) {
		if err := pl.classRefusal(profile.ClassCountryFreeText, "country"); err != nil {
			return err
		}
	}
	if c.Gender != "" && !slices.Contains(spec.Genders(), c.Gender) {
		if err := pl.classRefusal(profile.ClassGenderValue, "gender"); err != nil {
			return err
		}
	}
	if c.DateOfBirth != "" {
		d, err := time.Parse(spec.DateLayout, c.DateOfBirth)
		switch {
		case err != nil:
			class := profile.ClassDateImpossible
			if !dateShapeRE.MatchString(c.DateOfBirth) {
				class = profile.ClassDateFormat
			}
			// Accepted: stored as sent, with no range to check.
			return pl.classRefusal(class, "dateOfBirth")
		case d.After(now) || d.Year() < 1900:
			return invalidField("dateOfBirth", "dateOfBirth must lie between 1900-01-01 and today")
		}
	}
	return nil
}

// bareAddress reports whether mail.ParseAddress reads email as an address
// alone, itself (no display name, no comment, nothing rewritten). A plain
// local@domain (plainAddress) is one without asking it: net/mail was 5 %
// of Add Contact's handler and 3 allocations (issue 31).
func bareAddress(email string) bool {
	if plainAddress(email) {
		return true
	}
	a, err := mail.ParseAddress(email)
	return err == nil && a.Address == email && a.Name == ""
}

// plainAddress reports whether email is a dot-atom, "@" and a dot-atom of
// ASCII atext (RFC 5322 §3.2.3, §3.4.1), which mail.ParseAddress reads as
// that address and nothing else (FuzzPlainAddress holds the two to it).
// Anything else (quotes, a domain literal, a comment, spaces, non-ASCII)
// is left to mail.ParseAddress.
func plainAddress(email string) bool {
	at := strings.IndexByte(email, '@')
	return at >= 0 && dotAtom(email[:at]) && dotAtom(email[at+1:])
}

// dotAtom reports whether s is 1*atext *("." 1*atext), atext ASCII.
func dotAtom(s string) bool {
	if s == "" || s[0] == '.' || s[len(s)-1] == '.' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '.' {
			if s[i+1] == '.' { // never the last byte: checked above
				return false
			}
			continue
		}
		if c < '!' || c > '~' || strings.IndexByte(`()<>[]:;@\,"`, c) >= 0 {
			return false
		}
	}
	return true
}

func digitsBetween(s string, lo, hi int) bool {
	n := 0
	for _, r := range s {
		if r >= '0' && r <= '9' {
			n++
		}
	}
	return n >= lo && n <= hi
}

// storeContact stores c under the profile's contact.duplicateEmail and
// duplicatePhone (§2.1: "Behaviour when a contact already exists: not
// shown"): merged into the contact the account has (default.json's), a
// new contact anyway, or the profile's refusal.
func (s *API) storeContact(r *http.Request, pl *play, c *simulator.Contact) (*simulator.Contact, error) {
	stored, _, err := s.Contacts.AddContact(r.Context(), c, pl.dupRule)
	if errors.Is(err, simulator.ErrDuplicate) {
		o, field := pl.dupPhoneOut, "phoneNo"
		if c.Email != "" {
			o, field = pl.dupEmailOut, "email"
		}
		return nil, refuse(o, fieldRequest(field))
	}
	return stored, err
}
