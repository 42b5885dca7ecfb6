package seed

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"iter"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/brianvoe/gofakeit/v7"
	"github.com/brianvoe/gofakeit/v7/data"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// contactsGeneratorVersion changes whenever the contact generator's output
// changes, so that a Redis seeded by an older simulator is not mistaken for
// this one's.
const contactsGeneratorVersion = "contacts/v1"

// contactBlock is how many contacts one generator makes: each block has a
// generator of its own, seeded by the seed, the account and the block
// number, so blocks are made in parallel and still come out byte for byte
// the same whatever the number of processors.
const contactBlock = 2048

// contactsSpan is how far before the dataset's epoch the oldest seeded
// contact was created; createdAt grows with the position.
const contactsSpan = 2 * 365 * 24 * time.Hour

// gofakeit's own lists, read once: its FirstName, City and the like look
// the list up by name in a map at every call, which made seeding a million
// contacts several times slower.
var (
	firstNames     = data.Person["first"]
	lastNames      = data.Person["last"]
	streetNames    = data.Address["street_name"]
	streetSuffixes = []string{"Street", "Avenue", "Road", "Lane", "Drive", "Court", "Way", "Place"}
	cities         = data.Address["city"]
	states         = data.Address["state_abr"][:50] // the 50 states, not the military codes
	genders        = spec.Genders()                 // in the order weighted draws them
)

// The names' email forms, made once.
var firstLocal, lastLocal = localParts(firstNames), localParts(lastNames)

func localParts(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = localPart(n)
	}
	return out
}

func pick(f *gofakeit.Faker, list []string) string { return list[f.IntN(len(list))] }

var (
	emailDomains = []string{"example.com", "example.net", "example.org", "mail.example.com", "inbox.example.net"}
	contactTags  = []string{"vip", "newsletter", "sports", "casino", "poker", "bingo", "lottery", "high-roller", "churn-risk", "welcome-bonus"}
	playerTypes  = []string{"casual", "regular", "vip", "dormant", "new"}
	dobFirst     = time.Date(1940, 1, 1, 0, 0, 0, 0, time.UTC)
	dobLast      = time.Date(2008, 5, 31, 0, 0, 0, 0, time.UTC) // 18 at the epoch
)

// ContactsVersion identifies the output of Contacts for these inputs: the
// version under which a shared store holds them.
func ContactsVersion(seed int64, accountIDs []string, perAccount int) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%d\x00%d\x00%s", contactsGeneratorVersion, seed, perAccount, strings.Join(accountIDs, "\x00"))
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Contacts generates perAccount contacts for each account: account by
// account in the given order, each account's oldest first. The same seed,
// account and count always give the same contacts, byte for byte; each is
// valid for Add Contact (spec §2.1, §4.1) and each account's emails are
// distinct (the position is part of the address), so perAccount contacts
// are perAccount contacts. Blocks are generated in parallel; stopping the
// iteration stops the generators.
func Contacts(seed int64, accountIDs []string, perAccount int) iter.Seq[*simulator.Contact] {
	return func(yield func(*simulator.Contact) bool) {
		if perAccount <= 0 {
			return
		}
		type job struct {
			account string
			block   int
			out     chan []*simulator.Contact
		}
		workers := runtime.GOMAXPROCS(0)
		jobs := make(chan job)
		order := make(chan job, 2*workers) // bounds how far ahead generation runs
		done := make(chan struct{})
		var wg sync.WaitGroup
		defer wg.Wait()
		defer close(done)
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := range jobs {
					j.out <- contactBlockOf(seed, j.account, j.block, perAccount)
				}
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(jobs)
			defer close(order)
			blocks := (perAccount + contactBlock - 1) / contactBlock
			for _, acc := range accountIDs {
				for b := range blocks {
					j := job{account: acc, block: b, out: make(chan []*simulator.Contact, 1)}
					select {
					case order <- j:
					case <-done:
						return
					}
					select {
					case jobs <- j:
					case <-done:
						return
					}
				}
			}
		}()
		for j := range order {
			for _, c := range <-j.out {
				if !yield(c) {
					return
				}
			}
		}
	}
}

// contactBlockOf generates block b of the account's perAccount contacts.
func contactBlockOf(seed int64, accountID string, b, perAccount int) []*simulator.Contact {
	f := gofakeit.New(blockSeed(seed, accountID, b))
	first, last := b*contactBlock, min((b+1)*contactBlock, perAccount)
	step := contactsSpan / time.Duration(perAccount)
	start := epoch.Add(-contactsSpan)
	out := make([]*simulator.Contact, 0, last-first)
	for i := first; i < last; i++ {
		created := start.Add(time.Duration(i) * step)
		if step > time.Millisecond {
			created = created.Add(time.Duration(f.IntRange(0, int(step/time.Millisecond)-1)) * time.Millisecond)
		}
		out = append(out, contact(f, accountID, i, created))
	}
	return out
}

func blockSeed(seed int64, accountID string, block int) uint64 {
	sum := sha256.Sum256([]byte(accountID + "\x00contacts\x00" + strconv.Itoa(block)))
	s := uint64(seed) ^ binary.BigEndian.Uint64(sum[:8])
	if s == 0 { // gofakeit would read seed 0 as "random"
		s = 1
	}
	return s
}

func contact(f *gofakeit.Faker, accountID string, i int, created time.Time) *simulator.Contact {
	fi, li := f.IntN(len(firstNames)), f.IntN(len(lastNames))
	first, last := firstNames[fi], lastNames[li]
	var id [12]byte
	binary.BigEndian.PutUint64(id[:8], f.Uint64())
	binary.BigEndian.PutUint32(id[8:], uint32(f.Uint64()))
	c := &simulator.Contact{
		ID:        "ct_" + hex.EncodeToString(id[:]),
		AccountID: accountID,
		// The position makes each account's addresses distinct.
		Email:     firstLocal[fi] + "." + lastLocal[li] + "." + strconv.Itoa(i+1) + "@" + f.RandomString(emailDomains),
		PhoneNo:   "+1" + strconv.Itoa(f.IntRange(2000000000, 9999999999)),
		FirstName: first,
		LastName:  last,
		AddrOne:   strconv.Itoa(f.IntRange(1, 99999)) + " " + pick(f, streetNames) + " " + pick(f, streetSuffixes),
		City:      pick(f, cities),
		Country:   "US",
		State:     pick(f, states),
		ZipCode:   fmt.Sprintf("%05d", f.IntRange(501, 99950)),
		Gender:    genders[weighted(f, 48, 48, 4)],
		DateOfBirth: dobFirst.AddDate(0, 0, f.IntRange(0, int(dobLast.Sub(dobFirst)/(24*time.Hour)))).
			Format(time.DateOnly),
		CreatedAt: created,
	}
	if f.IntRange(1, 100) <= 20 {
		c.AddrTwo = "Apt " + strconv.Itoa(f.IntRange(1, 999))
	}
	emailOpt, smsOpt := weighted(f, 20, 80), weighted(f, 40, 60)
	c.EmailOptStatus, c.SMSOptStatus = &emailOpt, &smsOpt
	if n := weighted(f, 40, 35, 20, 5); n > 0 {
		// n distinct tags: a partial Fisher-Yates shuffle of the indexes.
		idx := make([]int, len(contactTags))
		for k := range idx {
			idx[k] = k
		}
		for k := range n {
			j := f.IntRange(k, len(idx)-1)
			idx[k], idx[j] = idx[j], idx[k]
			c.Tag = append(c.Tag, contactTags[idx[k]])
		}
	}
	c.PlayerType = []string{playerTypes[f.IntRange(0, len(playerTypes)-1)]}
	// Updated at some moment between creation and the epoch, in whole
	// milliseconds like the creation time.
	c.UpdatedAt = created.Add(time.Duration(f.IntRange(0, int(epoch.Sub(created)/time.Millisecond))) * time.Millisecond)
	return c
}

// weighted returns an index drawn with the given integer weights.
func weighted(f *gofakeit.Faker, weights ...int) int {
	total := 0
	for _, w := range weights {
		total += w
	}
	r := f.IntRange(0, total-1)
	for i, w := range weights {
		if r < w {
			return i
		}
		r -= w
	}
	return len(weights) - 1
}

// localPart keeps the letters and digits of a name, lower-cased, so an
// address is always a bare one (no quoting, spaces or apostrophes).
func localPart(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if ('a' <= r && r <= 'z') || ('0' <= r && r <= '9') {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return "contact"
	}
	return b.String()
}
