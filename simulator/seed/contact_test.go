package seed_test

import (
	"crypto/sha256"
	"encoding/json"
	"net/mail"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/seed"
)

// digest hashes the JSON of every contact Contacts yields.
func digest(t *testing.T, s int64, accounts []string, n int) ([32]byte, int) {
	t.Helper()
	h := sha256.New()
	count := 0
	for c := range seed.Contacts(s, accounts, n) {
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		h.Write(b)
		count++
	}
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	return sum, count
}

func TestContacts_SameSeedSameBytesWhateverTheProcessors(t *testing.T) {
	const n = 5000 // several generator blocks per account
	a, count := digest(t, 42, accounts, n)
	if got, want := count, n*len(accounts); got != want {
		t.Fatalf("count = %d, want %d", got, want)
	}
	prev := runtime.GOMAXPROCS(1)
	b, _ := digest(t, 42, accounts, n)
	runtime.GOMAXPROCS(prev)
	if a != b {
		t.Fatal("seed 42 with one processor differs from seed 42 with several")
	}
	if c, _ := digest(t, 43, accounts, n); a == c {
		t.Fatal("seeds 42 and 43 give the same contacts")
	}
	if seed.ContactsVersion(42, accounts, n) == seed.ContactsVersion(43, accounts, n) ||
		seed.ContactsVersion(42, accounts, n) == seed.ContactsVersion(42, accounts, n+1) {
		t.Fatal("the version does not follow the seed and the count")
	}
}

func TestContacts_AccountContentIndependentOfOthers(t *testing.T) {
	alone, _ := digest(t, 7, []string{"acc_b"}, 100)
	var among []*simulator.Contact
	for c := range seed.Contacts(7, []string{"acc_a", "acc_b"}, 100) {
		if c.AccountID == "acc_b" {
			among = append(among, c)
		}
	}
	h := sha256.New()
	for _, c := range among {
		b, _ := json.Marshal(c)
		h.Write(b)
	}
	if string(h.Sum(nil)) != string(alone[:]) {
		t.Fatal("acc_b's contacts changed when acc_a was added")
	}
}

// Every seeded contact passes the Add Contact rules of spec §2.1 as the
// simulator checks them (simulator/partnerapi/contact.go), is ordered oldest
// first, and has an email no other contact of its account has.
func TestContacts_ValidDistinctAndOrdered(t *testing.T) {
	phoneRE := regexp.MustCompile(`^\+?[0-9][0-9 ().-]*[0-9]$`)
	countryRE := regexp.MustCompile(`^[A-Za-z]{2,3}$`)
	today := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	emails := map[string]bool{}
	ids := map[string]bool{}
	var prev time.Time
	prevAccount := ""
	for c := range seed.Contacts(9, accounts, 3000) {
		if a, err := mail.ParseAddress(c.Email); err != nil || a.Address != c.Email || a.Name != "" {
			t.Fatalf("email %q is not a bare address (%v)", c.Email, err)
		}
		key := c.AccountID + "\n" + strings.ToLower(c.Email)
		if emails[key] {
			t.Fatalf("email %q twice in %s", c.Email, c.AccountID)
		}
		emails[key] = true
		digits := 0
		for _, r := range c.PhoneNo {
			if r >= '0' && r <= '9' {
				digits++
			}
		}
		if !phoneRE.MatchString(c.PhoneNo) || digits < 7 || digits > 15 {
			t.Fatalf("phoneNo %q is not 7 to 15 digits", c.PhoneNo)
		}
		if !countryRE.MatchString(c.Country) {
			t.Fatalf("country %q", c.Country)
		}
		if c.Gender != "male" && c.Gender != "female" && c.Gender != "other" {
			t.Fatalf("gender %q", c.Gender)
		}
		if d, err := time.Parse(time.DateOnly, c.DateOfBirth); err != nil || d.Year() < 1900 || d.After(today) {
			t.Fatalf("dateOfBirth %q (%v)", c.DateOfBirth, err)
		}
		for _, s := range []string{c.FirstName, c.LastName, c.AddrOne, c.AddrTwo, c.City, c.State, c.ZipCode} {
			if len(s) > 255 {
				t.Fatalf("field %q longer than 255", s)
			}
		}
		for _, l := range [][]string{c.Tag, c.PlayerType} {
			for _, s := range l {
				if s == "" || len(s) > 64 {
					t.Fatalf("name %q", s)
				}
			}
		}
		for _, o := range []*int{c.EmailOptStatus, c.SMSOptStatus} {
			if o == nil || (*o != 0 && *o != 1) {
				t.Fatalf("opt status %v", o)
			}
		}
		if !strings.HasPrefix(c.ID, "ct_") || len(c.ID) != 27 || ids[c.ID] {
			t.Fatalf("contact id %q (malformed or seen before)", c.ID)
		}
		ids[c.ID] = true
		if c.UpdatedAt.Before(c.CreatedAt) || c.UpdatedAt.After(today.Add(24*time.Hour)) {
			t.Fatalf("createdAt %v, updatedAt %v", c.CreatedAt, c.UpdatedAt)
		}
		if c.AccountID == prevAccount && !c.CreatedAt.After(prev) {
			t.Fatalf("createdAt %v not after the previous contact's %v", c.CreatedAt, prev)
		}
		prev, prevAccount = c.CreatedAt, c.AccountID
	}
	if got, want := len(emails), 3000*len(accounts); got != want {
		t.Fatalf("%d distinct emails, want %d", got, want)
	}
}

// Breaking out of the loop stops the generators (the race detector and
// the test's end would show a leak as a hang or a panic).
func TestContacts_StopEarly(t *testing.T) {
	n := 0
	for range seed.Contacts(1, accounts, 100000) {
		if n++; n == 10 {
			break
		}
	}
	if n != 10 {
		t.Fatalf("n = %d", n)
	}
}

func BenchmarkContacts(b *testing.B) {
	for range b.N {
		for range seed.Contacts(1, []string{"acc_a"}, 10000) {
		}
	}
}
