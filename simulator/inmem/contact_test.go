package inmem

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
)

// model is the obvious implementation the indexed store must agree with:
// a slice scanned on every upsert, as inmem did before the indexes.
type model struct{ contacts []*simulator.Contact }

func (m *model) upsert(c *simulator.Contact) (*simulator.Contact, bool) {
	for _, old := range m.contacts {
		if old.AccountID != c.AccountID {
			continue
		}
		if (c.Email != "" && strings.EqualFold(old.Email, c.Email)) ||
			(c.Email == "" && c.PhoneNo != "" && old.PhoneNo == c.PhoneNo) {
			old.Merge(c)
			old.UpdatedAt = c.UpdatedAt
			return clone(old), false
		}
	}
	m.contacts = append(m.contacts, clone(c))
	return clone(c), true
}

func (m *model) find(account string) []*simulator.Contact {
	out := []*simulator.Contact{}
	for _, c := range m.contacts {
		if account == "" || c.AccountID == account {
			out = append(out, c)
		}
	}
	return out
}

func (m *model) delete(account string) {
	kept := m.contacts[:0]
	for _, c := range m.contacts {
		if account != "" && c.AccountID != account {
			kept = append(kept, c)
		}
	}
	m.contacts = kept
}

// Thousands of random upserts over few emails and phones (so merges, shared
// phoneNos and replaced phoneNos are common), deletions and compactions
// leave the indexed store exactly where the scanning model is.
func TestContactStore_AgreesWithAScanningModel(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	s, m := NewContactStore(), &model{}
	accounts := []string{"acc_a", "acc_b", "acc_c"}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := range 20000 {
		c := &simulator.Contact{
			AccountID: accounts[rng.IntN(len(accounts))],
			ID:        fmt.Sprintf("c%d", i),
			CreatedAt: at.Add(time.Duration(i) * time.Millisecond),
		}
		c.UpdatedAt = c.CreatedAt
		if i%3 == 0 {
			c.ID = fmt.Sprintf("ct_%024x", i) // the server's form, stored packed
		}
		if rng.IntN(3) > 0 {
			c.Email = fmt.Sprintf("User%d@Example.com", rng.IntN(300))
			if rng.IntN(2) == 0 {
				c.Email = strings.ToLower(c.Email)
			}
		}
		if rng.IntN(3) > 0 || c.Email == "" {
			c.PhoneNo = fmt.Sprintf("+1555%04d", rng.IntN(60))
		}
		if rng.IntN(2) == 0 {
			c.City = strings.Repeat("x", rng.IntN(40)) // records grow and shrink
			v := rng.IntN(2)
			c.EmailOptStatus = &v
			c.Tag = []string{"t", fmt.Sprint(rng.IntN(9))}
		}
		got, gotCreated, err := s.UpsertContact(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		want, wantCreated := m.upsert(c)
		if gotCreated != wantCreated || !reflect.DeepEqual(got, want) {
			t.Fatalf("upsert %d: got %+v, %v\nwant %+v, %v", i, got, gotCreated, want, wantCreated)
		}
		switch r := rng.IntN(1000); {
		case r == 0:
			a := accounts[rng.IntN(len(accounts))]
			_ = s.DeleteContacts(ctx, a)
			m.delete(a)
		case r == 1:
			s.mu.Lock()
			s.compact()
			s.mu.Unlock()
		}
		if i%997 == 0 {
			for _, a := range append([]string{""}, accounts...) {
				got, total, _ := s.FindContacts(ctx, simulator.ContactFilter{AccountID: a})
				want := m.find(a)
				if total != len(want) || (len(got) > 0 || len(want) > 0) && !reflect.DeepEqual(got, want) {
					t.Fatalf("after %d, FindContacts(%q): %d contacts, total %d; want %d", i, a, len(got), total, len(want))
				}
			}
		}
	}
}

// A record reads back as the contact it was made from.
func TestRecord_RoundTrip(t *testing.T) {
	one, zero := 1, -3
	for _, c := range []*simulator.Contact{
		{ID: "x", AccountID: "a"},
		{ID: "y", AccountID: "a", FirstName: strings.Repeat("long", 20), Tag: []string{strings.Repeat("t", 64)}},
		{ID: "ct_0123456789abcdef01234567", AccountID: "b", Email: "Ä@example.com", PhoneNo: "+1 (555) 0100",
			FirstName: "Ada", LastName: "L", AddrOne: "1", AddrTwo: "2", City: "C", Country: "UK", State: "S",
			ZipCode: "Z", Gender: "female", DateOfBirth: "1815-12-10", EmailOptStatus: &one, SMSOptStatus: &zero,
			Tag: []string{"a", "b"}, PlayerType: []string{"p"},
			CreatedAt: time.Date(1815, 12, 10, 1, 2, 3, 4, time.UTC), UpdatedAt: time.Date(3000, 1, 1, 0, 0, 0, 999999999, time.UTC)},
		{ID: "ct_0123456789ABCDEF01234567", AccountID: "a"}, // upper-case hex is kept as given
	} {
		var d dict
		d.appendWord(nil, "female") // a word known before
		rec := appendRecord(nil, &d, map[string]uint32{"a": 0, "b": 1}[c.AccountID], c)
		if got := recordSize(append(rec, 0xff, 0xff)); got != len(rec) {
			t.Errorf("recordSize = %d, want %d", got, len(rec))
		}
		if got := decodeRecord(rec, &d, []string{"a", "b"}); !reflect.DeepEqual(got, c) {
			t.Errorf("decoded %+v, want %+v", got, c)
		}
	}
}

// clone copies c deeply enough that the model keeps contacts of its own,
// as the store keeps records.
func clone(c *simulator.Contact) *simulator.Contact {
	out := *c
	out.EmailOptStatus, out.SMSOptStatus, out.Tag, out.PlayerType = nil, nil, nil, nil
	out.Merge(&simulator.Contact{
		EmailOptStatus: c.EmailOptStatus, SMSOptStatus: c.SMSOptStatus,
		Tag: c.Tag, PlayerType: c.PlayerType,
	})
	return &out
}
