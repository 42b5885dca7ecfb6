package server

import (
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
)

// FuzzDecodeContact: no body makes decoding panic, every refusal is a 400 or
// a 413, and whatever is accepted satisfies spec §2.1's one hard rule.
func FuzzDecodeContact(f *testing.F) {
	for _, seed := range []string{
		`{"email":"a@example.com"}`,
		`{"phoneNo":"+14155550100","tag":["a","b"],"emailOptStatus":1}`,
		`{"email":"a@example.com","dateOfBirth":"2000-02-29","gender":"other","country":"US"}`,
		`{}`, `[]`, `null`, `{"email":null}`, `{"email":1e400}`, `{"tag":[null]}`,
		`{"emailOptStatus":1.0}`, `{"email":"a@example.com"}{"x":1}`, "{\"email\":\"\xff@x.io\"}",
	} {
		f.Add([]byte(seed))
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, body []byte) {
		fs, err := parseFields(body)
		if err != nil {
			if code := simulator.ErrorCode(err); code != simulator.EINVALID {
				t.Fatalf("parse error with code %s: %v", code, err)
			}
			return
		}
		c, err := decodeContact(fs, now)
		if err != nil {
			if code := simulator.ErrorCode(err); code != simulator.EINVALID {
				t.Fatalf("decode error with code %s: %v", code, err)
			}
			return
		}
		if c.Email == "" && c.PhoneNo == "" {
			t.Fatalf("accepted a contact with neither email nor phoneNo: %q", body)
		}
	})
}
