package spec

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// Sample is what a valid request body is made of that its caller
// supplies: the operation's table entry knows the body's shape (Body), the
// caller its inputs (an address of its run, a campaign of its account, the
// page size it measures with). An operation reads only the fields it
// needs; its Writes and NeedsCampaign say which a caller must have.
type Sample struct {
	// Email is the address of Add Contact's contact (§4.1: email or
	// phoneNo is required). An operation that Writes needs it, a new one
	// for each body, so that each request is a create.
	Email string
	// FirstName, LastName, Country and Tags are more §2.1 fields of the
	// contact, each left out of the body when empty.
	FirstName, LastName, Country string
	Tags                         []string
	// Limit is Campaign List's page size (§4.2: at least 1, here, and at
	// most MaxPageSize); the page is always MinPage, the first.
	Limit int
	// CampaignID is the campaign Campaign Stats asks about (§4.3), when
	// the operation NeedsCampaign: any Id is a body of a valid shape, one
	// the account owns is one the target answers 200.
	CampaignID int64
}

// Body returns a valid request body of the operation made of s, or an
// error when s lacks what the operation needs (an address, a page size)
// or the operation has no body builder (one not taken from Operations).
//
// The body is a JSON object with the fields in the spec's order, written
// `{"name": value, "name": value}`: the bytes the suite has always sent,
// which its reports show.
func (o Operation) Body(s Sample) ([]byte, error) {
	if o.body == nil {
		return nil, fmt.Errorf("operation %q (%s) has no body builder in spec's table", o.Name, o.Path)
	}
	b, err := o.body(s)
	if err != nil {
		return nil, fmt.Errorf("valid %s body: %w", o.Name, err)
	}
	return b, nil
}

// contactBody is Add Contact's: the address and the other fields given.
func contactBody(s Sample) ([]byte, error) {
	if s.Email == "" {
		return nil, errors.New("no email: §4.1 needs email or phoneNo")
	}
	var b object
	b.str("email", s.Email)
	b.str("firstName", s.FirstName)
	b.str("lastName", s.LastName)
	b.str("country", s.Country)
	b.strs("tag", s.Tags)
	return b.close(), nil
}

// listBody is Campaign List's: the first page of Limit campaigns.
func listBody(s Sample) ([]byte, error) {
	if s.Limit < 1 || s.Limit > MaxPageSize {
		return nil, fmt.Errorf("page size %d: want 1 to %d", s.Limit, MaxPageSize)
	}
	var b object
	b.int("limit", int64(s.Limit))
	b.int("page", MinPage)
	return b.close(), nil
}

// statsBody is Campaign Stats': the statistics of CampaignID.
func statsBody(s Sample) ([]byte, error) {
	var b object
	b.int("campaignId", s.CampaignID)
	return b.close(), nil
}

// object writes a JSON object a field at a time, leaving out empty
// strings and empty lists. It is cheap enough for cmd/load to build a
// body per request without weighing on the server it measures.
type object struct{ b []byte }

// key starts a field.
func (o *object) key(name string) {
	if o.b == nil {
		o.b = make([]byte, 0, 128)
		o.b = append(o.b, '{')
	} else {
		o.b = append(o.b, ", "...)
	}
	o.b = appendString(o.b, name)
	o.b = append(o.b, ": "...)
}

func (o *object) str(name, v string) {
	if v != "" {
		o.key(name)
		o.b = appendString(o.b, v)
	}
}

func (o *object) strs(name string, vs []string) {
	if len(vs) == 0 {
		return
	}
	o.key(name)
	o.b = append(o.b, '[')
	for i, v := range vs {
		if i > 0 {
			o.b = append(o.b, ", "...)
		}
		o.b = appendString(o.b, v)
	}
	o.b = append(o.b, ']')
}

func (o *object) int(name string, v int64) {
	o.key(name)
	o.b = strconv.AppendInt(o.b, v, 10)
}

func (o *object) close() []byte {
	if o.b == nil {
		return []byte("{}")
	}
	return append(o.b, '}')
}

// appendString appends s as a JSON string: as it is between quotes when
// it is printable ASCII with nothing to escape (every input the callers
// have), else as encoding/json writes it.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
