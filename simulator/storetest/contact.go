package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
)

const (
	accountA = "acc_enc_storetestA"
	accountB = "acc_enc_storetestB"
)

func intPtr(v int) *int { return &v }

// fullContact returns a contact that gives every field of spec §2.1.
func fullContact(account, id string) *simulator.Contact {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6000000, time.UTC)
	return &simulator.Contact{
		Email:          "ada@example.com",
		PhoneNo:        "+15550100",
		FirstName:      "Ada",
		LastName:       "Lovelace",
		AddrOne:        "1 Analytical Way",
		AddrTwo:        "Suite 2",
		City:           "London",
		Country:        "UK",
		State:          "LDN",
		ZipCode:        "N1 9GU",
		Gender:         "female",
		DateOfBirth:    "1815-12-10",
		EmailOptStatus: intPtr(1),
		SMSOptStatus:   intPtr(0),
		Tag:            []string{"vip", "beta"},
		PlayerType:     []string{"casual"},
		ID:             id,
		AccountID:      account,
		CreatedAt:      at,
		UpdatedAt:      at,
	}
}

// newContact returns a minimal contact; email or phone may be empty.
func newContact(account, id, email, phone string) *simulator.Contact {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return &simulator.Contact{
		Email: email, PhoneNo: phone,
		ID: id, AccountID: account, CreatedAt: at, UpdatedAt: at,
	}
}

func mustUpsert(t *testing.T, s simulator.ContactStore, c *simulator.Contact) (*simulator.Contact, bool) {
	t.Helper()
	stored, created, err := s.UpsertContact(context.Background(), c)
	if err != nil {
		t.Fatalf("UpsertContact(%s): %v", c.ID, err)
	}
	if stored == nil {
		t.Fatalf("UpsertContact(%s) returned a nil contact", c.ID)
	}
	return stored, created
}

func mustFindContacts(t *testing.T, s simulator.ContactStore, f simulator.ContactFilter) ([]*simulator.Contact, int) {
	t.Helper()
	cs, n, err := s.FindContacts(context.Background(), f)
	if err != nil {
		t.Fatalf("FindContacts(%+v): %v", f, err)
	}
	return cs, n
}

func contactIDs(cs []*simulator.Contact) []string {
	ids := []string{}
	for _, c := range cs {
		ids = append(ids, c.ID)
	}
	return ids
}

// equalContact compares every field; times with time.Equal, since a backend
// may hand back another location or drop the monotonic reading.
func equalContact(t *testing.T, got, want *simulator.Contact) {
	t.Helper()
	g, w := *got, *want
	if !g.CreatedAt.Equal(w.CreatedAt) || !g.UpdatedAt.Equal(w.UpdatedAt) {
		t.Errorf("CreatedAt, UpdatedAt = %v, %v, want %v, %v", g.CreatedAt, g.UpdatedAt, w.CreatedAt, w.UpdatedAt)
	}
	g.CreatedAt, g.UpdatedAt, w.CreatedAt, w.UpdatedAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	if !reflect.DeepEqual(g, w) {
		gj, _ := json.Marshal(g)
		wj, _ := json.Marshal(w)
		t.Errorf("contact =\n%s\nwant\n%s", gj, wj)
	}
}

func testContacts(t *testing.T, open func(t *testing.T) Backend) {
	t.Run("an upsert of a new contact stores every field", func(t *testing.T) {
		s := open(t).Contacts
		want := fullContact(accountA, "c1")
		stored, created := mustUpsert(t, s, fullContact(accountA, "c1"))
		if !created {
			t.Errorf("created = false, want true")
		}
		equalContact(t, stored, want)

		cs, total := mustFindContacts(t, s, simulator.ContactFilter{AccountID: accountA})
		if got, want := total, 1; got != want {
			t.Fatalf("total = %d, want %d", got, want)
		}
		if got, want := len(cs), 1; got != want {
			t.Fatalf("len = %d, want %d", got, want)
		}
		equalContact(t, cs[0], want)
	})

	t.Run("an upsert of a contact without optional fields stores them as absent", func(t *testing.T) {
		s := open(t).Contacts
		want := newContact(accountA, "c1", "", "+15550100")
		mustUpsert(t, s, newContact(accountA, "c1", "", "+15550100"))
		cs, _ := mustFindContacts(t, s, simulator.ContactFilter{AccountID: accountA})
		if got, want := len(cs), 1; got != want {
			t.Fatalf("len = %d, want %d", got, want)
		}
		equalContact(t, cs[0], want)
	})

	t.Run("an upsert with a known email merges into the stored contact, case-insensitively", func(t *testing.T) {
		s := open(t).Contacts
		first := fullContact(accountA, "c1")
		mustUpsert(t, s, first)

		update := newContact(accountA, "c2", "ADA@Example.COM", "")
		update.CreatedAt = update.CreatedAt.Add(time.Hour)
		update.UpdatedAt = update.CreatedAt
		update.FirstName = "Augusta"
		update.Tag = []string{"gold"}
		update.SMSOptStatus = intPtr(1)
		stored, created := mustUpsert(t, s, update)
		if created {
			t.Errorf("created = true, want false")
		}

		want := fullContact(accountA, "c1")
		want.Merge(update)
		// The ID, account and CreatedAt stay the stored contact's; whether a
		// merge moves UpdatedAt is the backend's choice.
		want.UpdatedAt = stored.UpdatedAt
		equalContact(t, stored, want)
		if got, want := stored.LastName, "Lovelace"; got != want {
			t.Errorf("LastName = %q, want %q (a field the update does not give is kept)", got, want)
		}

		cs, total := mustFindContacts(t, s, simulator.ContactFilter{AccountID: accountA})
		if got, want := total, 1; got != want {
			t.Fatalf("total = %d, want %d", got, want)
		}
		equalContact(t, cs[0], want)
	})

	t.Run("an upsert without email merges by phoneNo", func(t *testing.T) {
		s := open(t).Contacts
		mustUpsert(t, s, newContact(accountA, "c1", "", "+15550100"))
		update := newContact(accountA, "c2", "", "+15550100")
		update.City = "Paris"
		stored, created := mustUpsert(t, s, update)
		if created {
			t.Errorf("created = true, want false")
		}
		if got, want := stored.ID, "c1"; got != want {
			t.Errorf("ID = %q, want %q", got, want)
		}
		if got, want := stored.City, "Paris"; got != want {
			t.Errorf("City = %q, want %q", got, want)
		}
		if _, total := mustFindContacts(t, s, simulator.ContactFilter{AccountID: accountA}); total != 1 {
			t.Errorf("total = %d, want 1", total)
		}
	})

	t.Run("an upsert without email merges by phoneNo into a contact that has an email", func(t *testing.T) {
		s := open(t).Contacts
		mustUpsert(t, s, newContact(accountA, "c1", "ada@example.com", "+15550100"))
		stored, created := mustUpsert(t, s, newContact(accountA, "c2", "", "+15550100"))
		if created || stored.ID != "c1" {
			t.Errorf("ID, created = %q, %v, want c1, false", stored.ID, created)
		}
		if got, want := stored.Email, "ada@example.com"; got != want {
			t.Errorf("Email = %q, want %q", got, want)
		}
	})

	t.Run("a phoneNo replaced by a merge no longer matches", func(t *testing.T) {
		s := open(t).Contacts
		mustUpsert(t, s, newContact(accountA, "c1", "ada@example.com", "+15550100"))
		if stored, created := mustUpsert(t, s, newContact(accountA, "c2", "ada@example.com", "+15550199")); created || stored.PhoneNo != "+15550199" {
			t.Fatalf("merge: PhoneNo, created = %q, %v, want +15550199, false", stored.PhoneNo, created)
		}
		if stored, created := mustUpsert(t, s, newContact(accountA, "c3", "", "+15550100")); !created || stored.ID != "c3" {
			t.Errorf("old phoneNo: ID, created = %q, %v, want c3, true", stored.ID, created)
		}
		if stored, created := mustUpsert(t, s, newContact(accountA, "c4", "", "+15550199")); created || stored.ID != "c1" {
			t.Errorf("new phoneNo: ID, created = %q, %v, want c1, false", stored.ID, created)
		}
	})

	t.Run("AddContact plays each duplicate rule", func(t *testing.T) {
		type add struct {
			c              *simulator.Contact
			wantID         string // the stored contact's ID; "" for ErrDuplicate
			wantCreated    bool
			wantTotalAfter int
		}
		tests := []struct {
			name string
			rule simulator.DuplicateRule
			adds []add
		}{
			{"merge (the zero rule) keeps the first ID", simulator.DuplicateRule{}, []add{
				{newContact(accountA, "c1", "ada@example.com", ""), "c1", true, 1},
				{newContact(accountA, "c2", "ADA@example.com", ""), "c1", false, 1},
			}},
			{"new stores a matched email anyway", simulator.DuplicateRule{Email: simulator.DuplicateNew}, []add{
				{newContact(accountA, "c1", "ada@example.com", ""), "c1", true, 1},
				{newContact(accountA, "c2", "ada@example.com", ""), "c2", true, 2},
				{newContact(accountA, "c3", "ada@example.com", ""), "c3", true, 3},
			}},
			{"refuse stores nothing for a matched email", simulator.DuplicateRule{Email: simulator.DuplicateRefuse}, []add{
				{newContact(accountA, "c1", "ada@example.com", ""), "c1", true, 1},
				{newContact(accountA, "c2", "ada@example.com", "+15550100"), "", false, 1},
				{newContact(accountB, "c3", "ada@example.com", ""), "c3", true, 1},
			}},
			{"the phone rule applies to a contact without email", simulator.DuplicateRule{Email: simulator.DuplicateNew, Phone: simulator.DuplicateRefuse}, []add{
				{newContact(accountA, "c1", "", "+15550100"), "c1", true, 1},
				{newContact(accountA, "c2", "", "+15550100"), "", false, 1},
				{newContact(accountA, "c3", "ada@example.com", "+15550100"), "c3", true, 2},
			}},
			{"new stores a matched phoneNo anyway", simulator.DuplicateRule{Phone: simulator.DuplicateNew}, []add{
				{newContact(accountA, "c1", "", "+15550100"), "c1", true, 1},
				{newContact(accountA, "c2", "", "+15550100"), "c2", true, 2},
			}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				s := open(t).Contacts
				for i, a := range tt.adds {
					stored, created, err := s.AddContact(context.Background(), a.c, tt.rule)
					switch {
					case a.wantID == "":
						if simulator.ErrorCode(err) != simulator.ECONFLICT {
							t.Fatalf("add %d: err %v, want ECONFLICT", i, err)
						}
					case err != nil:
						t.Fatalf("add %d: %v", i, err)
					case stored.ID != a.wantID || created != a.wantCreated:
						t.Fatalf("add %d: ID, created = %q, %v, want %q, %v", i, stored.ID, created, a.wantID, a.wantCreated)
					}
					if _, total := mustFindContacts(t, s, simulator.ContactFilter{AccountID: a.c.AccountID}); total != a.wantTotalAfter {
						t.Fatalf("add %d: total %d, want %d", i, total, a.wantTotalAfter)
					}
				}
			})
		}
	})

	t.Run("a request without email merges into the oldest contact with that phoneNo", func(t *testing.T) {
		s := open(t).Contacts
		mustUpsert(t, s, newContact(accountA, "c1", "ada@example.com", ""))
		mustUpsert(t, s, newContact(accountA, "c2", "", "+15550100"))
		// c1, the older, gains c2's phoneNo.
		if stored, created := mustUpsert(t, s, newContact(accountA, "c3", "ada@example.com", "+15550100")); created || stored.ID != "c1" {
			t.Fatalf("merge by email: ID, created = %q, %v, want c1, false", stored.ID, created)
		}
		if stored, created := mustUpsert(t, s, newContact(accountA, "c4", "", "+15550100")); created || stored.ID != "c1" {
			t.Errorf("by phoneNo: ID, created = %q, %v, want c1 (the oldest), false", stored.ID, created)
		}
	})

	tests := []struct {
		name         string
		first, again *simulator.Contact
	}{
		{
			name:  "an upsert with another email creates a contact",
			first: newContact(accountA, "c1", "ada@example.com", ""),
			again: newContact(accountA, "c2", "grace@example.com", ""),
		},
		{
			name:  "an upsert without email and with another phoneNo creates a contact",
			first: newContact(accountA, "c1", "", "+15550100"),
			again: newContact(accountA, "c2", "", "+15550199"),
		},
		{
			// The phoneNo is the match key only for a request without email.
			name:  "an upsert with a new email and a known phoneNo creates a contact",
			first: newContact(accountA, "c1", "", "+15550100"),
			again: newContact(accountA, "c2", "ada@example.com", "+15550100"),
		},
		{
			name:  "an upsert with another account's email creates a contact",
			first: newContact(accountA, "c1", "ada@example.com", ""),
			again: newContact(accountB, "c2", "ada@example.com", ""),
		},
		{
			name:  "an upsert with another account's phoneNo creates a contact",
			first: newContact(accountA, "c1", "", "+15550100"),
			again: newContact(accountB, "c2", "", "+15550100"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := open(t).Contacts
			mustUpsert(t, s, tt.first)
			stored, created := mustUpsert(t, s, tt.again)
			if !created {
				t.Errorf("created = false, want true")
			}
			if got, want := stored.ID, tt.again.ID; got != want {
				t.Errorf("ID = %q, want %q", got, want)
			}
			if _, total := mustFindContacts(t, s, simulator.ContactFilter{}); total != 2 {
				t.Errorf("total of all accounts = %d, want 2", total)
			}
		})
	}

	t.Run("contacts are listed oldest first, per account, paged by offset and limit", func(t *testing.T) {
		s := open(t).Contacts
		// Interleave two accounts; IDs deliberately not in lexical order.
		for i, c := range []*simulator.Contact{
			newContact(accountA, "z1", "a1@example.com", ""),
			newContact(accountB, "y1", "b1@example.com", ""),
			newContact(accountA, "a2", "a2@example.com", ""),
			newContact(accountA, "m3", "", "+15550103"),
			newContact(accountB, "b2", "", "+15550202"),
			newContact(accountA, "c4", "a4@example.com", ""),
		} {
			if _, created := mustUpsert(t, s, c); !created {
				t.Fatalf("contact %d: created = false", i)
			}
		}
		tests := []struct {
			name   string
			filter simulator.ContactFilter
			want   []string
			total  int
		}{
			{"all of one account", simulator.ContactFilter{AccountID: accountA}, []string{"z1", "a2", "m3", "c4"}, 4},
			{"the other account", simulator.ContactFilter{AccountID: accountB}, []string{"y1", "b2"}, 2},
			{"every account", simulator.ContactFilter{}, []string{"z1", "y1", "a2", "m3", "b2", "c4"}, 6},
			{"offset and limit", simulator.ContactFilter{AccountID: accountA, Offset: 1, Limit: 2}, []string{"a2", "m3"}, 4},
			{"a limit past the end", simulator.ContactFilter{AccountID: accountA, Offset: 3, Limit: 5}, []string{"c4"}, 4},
			{"an offset without limit", simulator.ContactFilter{AccountID: accountA, Offset: 2}, []string{"m3", "c4"}, 4},
			{"an offset at the end", simulator.ContactFilter{AccountID: accountA, Offset: 4}, []string{}, 4},
			{"an offset past the end", simulator.ContactFilter{AccountID: accountA, Offset: 10, Limit: 1}, []string{}, 4},
			{"offset and limit over every account", simulator.ContactFilter{Offset: 1, Limit: 3}, []string{"y1", "a2", "m3"}, 6},
			{"an account without contacts", simulator.ContactFilter{AccountID: "acc_enc_nobody"}, []string{}, 0},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				cs, total := mustFindContacts(t, s, tt.filter)
				if got := contactIDs(cs); !reflect.DeepEqual(got, tt.want) {
					t.Errorf("IDs = %v, want %v", got, tt.want)
				}
				if total != tt.total {
					t.Errorf("total = %d, want %d", total, tt.total)
				}
			})
		}
	})

	t.Run("a merge keeps the contact's place in the order", func(t *testing.T) {
		s := open(t).Contacts
		mustUpsert(t, s, newContact(accountA, "c1", "a1@example.com", ""))
		mustUpsert(t, s, newContact(accountA, "c2", "a2@example.com", ""))
		mustUpsert(t, s, newContact(accountA, "c3", "A1@example.com", ""))
		cs, _ := mustFindContacts(t, s, simulator.ContactFilter{AccountID: accountA})
		if got, want := contactIDs(cs), []string{"c1", "c2"}; !reflect.DeepEqual(got, want) {
			t.Errorf("IDs = %v, want %v", got, want)
		}
	})

	t.Run("deleting one account's contacts leaves the others", func(t *testing.T) {
		s := open(t).Contacts
		mustUpsert(t, s, newContact(accountA, "a1", "ada@example.com", ""))
		mustUpsert(t, s, newContact(accountA, "a2", "", "+15550100"))
		mustUpsert(t, s, newContact(accountB, "b1", "ada@example.com", ""))
		if err := s.DeleteContacts(context.Background(), accountA); err != nil {
			t.Fatalf("DeleteContacts: %v", err)
		}
		if cs, total := mustFindContacts(t, s, simulator.ContactFilter{AccountID: accountA}); len(cs) != 0 || total != 0 {
			t.Errorf("account A: len, total = %d, %d, want 0, 0", len(cs), total)
		}
		if cs, total := mustFindContacts(t, s, simulator.ContactFilter{}); !reflect.DeepEqual(contactIDs(cs), []string{"b1"}) || total != 1 {
			t.Errorf("all accounts: IDs, total = %v, %d, want [b1], 1", contactIDs(cs), total)
		}
		// The deleted contacts no longer match by email or phoneNo.
		for _, c := range []*simulator.Contact{
			newContact(accountA, "a3", "ada@example.com", ""),
			newContact(accountA, "a4", "", "+15550100"),
		} {
			if stored, created := mustUpsert(t, s, c); !created || stored.ID != c.ID {
				t.Errorf("upsert after delete: ID, created = %q, %v, want %q, true", stored.ID, created, c.ID)
			}
		}
		// The other account's contact still matches.
		if stored, created := mustUpsert(t, s, newContact(accountB, "b2", "ADA@example.com", "")); created || stored.ID != "b1" {
			t.Errorf("upsert in account B: ID, created = %q, %v, want b1, false", stored.ID, created)
		}
	})

	t.Run("deleting with an empty account removes every contact", func(t *testing.T) {
		s := open(t).Contacts
		mustUpsert(t, s, newContact(accountA, "a1", "ada@example.com", ""))
		mustUpsert(t, s, newContact(accountB, "b1", "", "+15550100"))
		if err := s.DeleteContacts(context.Background(), ""); err != nil {
			t.Fatalf("DeleteContacts: %v", err)
		}
		for _, f := range []simulator.ContactFilter{{}, {AccountID: accountA}, {AccountID: accountB}} {
			if cs, total := mustFindContacts(t, s, f); len(cs) != 0 || total != 0 {
				t.Errorf("%+v: len, total = %d, %d, want 0, 0", f, len(cs), total)
			}
		}
		if _, created := mustUpsert(t, s, newContact(accountB, "b2", "", "+15550100")); !created {
			t.Errorf("upsert after delete: created = false, want true")
		}
	})

	t.Run("deleting an account without contacts succeeds", func(t *testing.T) {
		s := open(t).Contacts
		if err := s.DeleteContacts(context.Background(), accountA); err != nil {
			t.Fatalf("DeleteContacts: %v", err)
		}
	})

	for _, key := range []string{"email", "phoneNo"} {
		t.Run("concurrent upserts of one "+key+" create exactly one contact", func(t *testing.T) {
			testConcurrentUpserts(t, open(t).Contacts, key == "email")
		})
	}
}

func testConcurrentUpserts(t *testing.T, s simulator.ContactStore, byEmail bool) {
	const n = 20
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		created int
		ids     = map[string]bool{}
		errs    []error
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Alternate the case: the email match is case-insensitive.
			email := "ada@example.com"
			if i%2 == 1 {
				email = "Ada@Example.com"
			}
			c := newContact(accountA, fmt.Sprintf("c%02d", i), email, "")
			if !byEmail {
				c = newContact(accountA, fmt.Sprintf("c%02d", i), "", "+15550100")
			}
			c.City = fmt.Sprintf("city %d", i)
			stored, ok, err := s.UpsertContact(context.Background(), c)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			if ok {
				created++
			}
			ids[stored.ID] = true
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("UpsertContact: %d errors, first: %v", len(errs), errs[0])
	}
	if got, want := created, 1; got != want {
		t.Errorf("created = %d, want %d", got, want)
	}
	if got, want := len(ids), 1; got != want {
		t.Errorf("distinct stored IDs = %d, want %d", got, want)
	}
	if _, total := mustFindContacts(t, s, simulator.ContactFilter{AccountID: accountA}); total != 1 {
		t.Errorf("total = %d, want 1", total)
	}
}
