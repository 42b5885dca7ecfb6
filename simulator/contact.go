package simulator

import (
	"context"
	"iter"
	"time"
)

// Contact is a contact record (spec §2.1). Empty strings and nil pointers or
// slices mean the field was not given. The fields after PlayerType are the
// simulator's own bookkeeping: the spec does not show a stored record's
// extra fields.
type Contact struct {
	Email          string   `json:"email,omitempty"`
	PhoneNo        string   `json:"phoneNo,omitempty"`
	FirstName      string   `json:"firstName,omitempty"`
	LastName       string   `json:"lastName,omitempty"`
	AddrOne        string   `json:"addrOne,omitempty"`
	AddrTwo        string   `json:"addrTwo,omitempty"`
	City           string   `json:"city,omitempty"`
	Country        string   `json:"country,omitempty"`
	State          string   `json:"state,omitempty"`
	ZipCode        string   `json:"zipCode,omitempty"`
	Gender         string   `json:"gender,omitempty"`
	DateOfBirth    string   `json:"dateOfBirth,omitempty"`
	EmailOptStatus *int     `json:"emailOptStatus,omitempty"`
	SMSOptStatus   *int     `json:"smsOptStatus,omitempty"`
	Tag            []string `json:"tag,omitempty"`
	PlayerType     []string `json:"playerType,omitempty"`

	ID        string    `json:"contactId"`
	AccountID string    `json:"accountId"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// Merge copies every field that src gives onto c, leaving the others.
// Identity and bookkeeping fields are not touched.
func (c *Contact) Merge(src *Contact) {
	str := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	str(&c.Email, src.Email)
	str(&c.PhoneNo, src.PhoneNo)
	str(&c.FirstName, src.FirstName)
	str(&c.LastName, src.LastName)
	str(&c.AddrOne, src.AddrOne)
	str(&c.AddrTwo, src.AddrTwo)
	str(&c.City, src.City)
	str(&c.Country, src.Country)
	str(&c.State, src.State)
	str(&c.ZipCode, src.ZipCode)
	str(&c.Gender, src.Gender)
	str(&c.DateOfBirth, src.DateOfBirth)
	if src.EmailOptStatus != nil {
		v := *src.EmailOptStatus
		c.EmailOptStatus = &v
	}
	if src.SMSOptStatus != nil {
		v := *src.SMSOptStatus
		c.SMSOptStatus = &v
	}
	if src.Tag != nil {
		c.Tag = append([]string(nil), src.Tag...)
	}
	if src.PlayerType != nil {
		c.PlayerType = append([]string(nil), src.PlayerType...)
	}
}

// ContactFilter selects stored contacts. Zero fields select everything.
type ContactFilter struct {
	AccountID string
	Offset    int
	Limit     int // 0 means no limit
}

// ContactStore keeps contacts.
type ContactStore interface {
	// UpsertContact stores c for c.AccountID. When the account already holds
	// a contact with the same email (compared case-insensitively) or, for a
	// request without email, the same phoneNo, the given fields are merged
	// into it and the stored contact is returned with created false (spec
	// §2.1: behaviour for an existing contact is not shown; ASSUMPTION: an
	// idempotent upsert, so a retried request never creates a duplicate).
	// Otherwise c is stored as given, with its ID, and returned with created
	// true: c itself or a copy, never a value the store keeps (a caller's
	// change to it reaches no stored contact). The contact is durable when
	// the call returns without error.
	UpsertContact(ctx context.Context, c *Contact) (stored *Contact, created bool, err error)

	// AddContact is UpsertContact under rule: what to do with a contact
	// the account already has, matched as UpsertContact matches (by email,
	// else by phoneNo). UpsertContact is AddContact with the zero rule.
	// Returns ECONFLICT, storing nothing, when the rule refuses the match.
	AddContact(ctx context.Context, c *Contact, rule DuplicateRule) (stored *Contact, created bool, err error)

	// FindContacts returns the contacts that match, oldest first, and the
	// number that match before Offset and Limit apply.
	FindContacts(ctx context.Context, filter ContactFilter) ([]*Contact, int, error)

	// DeleteContacts removes every contact of accountID, or of every account
	// when accountID is empty.
	DeleteContacts(ctx context.Context, accountID string) error
}

// ContactSeeder is a ContactStore that also stores fake contacts in bulk at
// start (--contacts), once per version.
type ContactSeeder interface {
	ContactStore
	// SeedContacts replaces the contacts with the given ones unless they
	// were seeded already under version, and reports whether it stored.
	SeedContacts(ctx context.Context, version string, contacts iter.Seq[*Contact]) (bool, error)
}

// DuplicateRule says what AddContact does with a contact the account
// already has (spec §2.1: "Behaviour when a contact already exists: not
// shown"; a deployment profile's contact.duplicateEmail and
// duplicatePhone). Its zero value is UpsertContact's merge.
type DuplicateRule struct {
	// Email applies to a contact matched by its email; Phone to one
	// without email matched by its phoneNo.
	Email, Phone Duplicate
}

// Duplicate is the answer to one kind of match.
type Duplicate int

// Duplicate answers.
const (
	// DuplicateMerge merges the fields given into the stored contact,
	// which keeps its ID.
	DuplicateMerge Duplicate = iota
	// DuplicateNew stores the contact as a new one, with its own ID.
	DuplicateNew
	// DuplicateRefuse stores nothing: AddContact returns ECONFLICT.
	DuplicateRefuse
)

// For returns the answer to c's match: Email when c has an email, else
// Phone.
func (r DuplicateRule) For(c *Contact) Duplicate {
	if c.Email != "" {
		return r.Email
	}
	return r.Phone
}

// ErrDuplicate is AddContact's refusal of a match (DuplicateRefuse).
var ErrDuplicate = &Error{Code: ECONFLICT, Message: "The account already has this contact"}
