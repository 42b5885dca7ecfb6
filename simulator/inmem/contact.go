package inmem

import (
	"context"
	"hash/maphash"
	"iter"
	"strings"
	"sync"

	"github.com/partner-v3/conformance-kit/simulator"
)

// ContactStore keeps contacts in memory at a cost that does not grow with
// their number: an upsert is one or two hash lookups, whether the store
// holds none or millions.
//
// Layout, chosen so that a million contacts fit in a few hundred megabytes
// and cost the garbage collector nothing to scan:
//   - each contact is one compact record (see record.go) in an arena of
//     large byte chunks, which hold no pointers; loc maps a contact's
//     position in creation order to its record;
//   - byAccount lists each account's positions in creation order;
//   - emails indexes account + lower-cased email, phones indexes account +
//     phoneNo to the oldest contact that has it now; both are open-addressing
//     tables of 64-bit words (hash fingerprint, position) verified against
//     the record on a hit, so a hash collision never merges two contacts;
//   - the contacts that share one phoneNo form a list in creation order
//     (phoneNext, phonePrev), so the oldest is found at once and a merge
//     that replaces a phoneNo unlinks the contact in constant time.
type ContactStore struct {
	mu sync.RWMutex

	seed       maphash.Seed
	accounts   []string          // account number -> account id
	accountNum map[string]uint32 // account id -> account number
	byAccount  [][]uint32        // account number -> positions, oldest first

	arena arena
	dict  dict     // words records share
	loc   []uint64 // position -> record location in the arena
	// phoneNext and phonePrev link the contacts that share a phoneNo, oldest
	// first: positions + 1, 0 for none. The head's prev is the tail.
	phoneNext, phonePrev []uint32
	emails, phones       table

	version string // of the seeded contacts, "" when none are
	scratch []byte
}

var _ simulator.ContactSeeder = (*ContactStore)(nil)

// NewContactStore returns an empty store.
func NewContactStore() *ContactStore {
	return &ContactStore{seed: maphash.MakeSeed(), accountNum: map[string]uint32{}}
}

func (s *ContactStore) account(id string) uint32 {
	n, ok := s.accountNum[id]
	if !ok {
		n = uint32(len(s.accounts))
		s.accounts = append(s.accounts, id)
		s.accountNum[id] = n
		s.byAccount = append(s.byAccount, nil)
	}
	return n
}

func (s *ContactStore) emailHash(acct uint32, email string) uint64 {
	var h maphash.Hash
	h.SetSeed(s.seed)
	writeUint32(&h, acct)
	for i := 0; i < len(email); i++ {
		c := email[i]
		if c >= 0x80 { // not ASCII: lower-case the whole of it the slow way
			h.WriteString(strings.ToLower(email[i:]))
			return h.Sum64()
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		h.WriteByte(c)
	}
	return h.Sum64()
}

func (s *ContactStore) phoneHash(acct uint32, phone string) uint64 {
	var h maphash.Hash
	h.SetSeed(s.seed)
	writeUint32(&h, acct)
	h.WriteByte(1) // apart from the email hashes
	h.WriteString(phone)
	return h.Sum64()
}

func writeUint32(h *maphash.Hash, v uint32) {
	_, _ = h.Write([]byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)})
}

// record returns the bytes of the contact at position pos.
func (s *ContactStore) record(pos uint32) []byte { return s.arena.at(s.loc[pos]) }

// findEmail returns the position of the account's contact with that email,
// compared case-insensitively.
func (s *ContactStore) findEmail(acct uint32, email string) (uint32, bool) {
	lower := strings.ToLower(email)
	_, pos, ok := s.emails.find(s.emailHash(acct, email), func(pos uint32) bool {
		k := keysOf(s.record(pos))
		return k.account == acct && equalLower(k.email, lower)
	})
	return pos, ok
}

// findPhone returns the slot and position of the oldest of the account's
// contacts that have phoneNo now.
func (s *ContactStore) findPhone(acct uint32, phone string) (int, uint32, bool) {
	return s.phones.find(s.phoneHash(acct, phone), func(pos uint32) bool {
		k := keysOf(s.record(pos))
		return k.account == acct && string(k.phone) == phone
	})
}

// UpsertContact implements simulator.ContactStore.
func (s *ContactStore) UpsertContact(ctx context.Context, c *simulator.Contact) (*simulator.Contact, bool, error) {
	return s.AddContact(ctx, c, simulator.DuplicateRule{})
}

// AddContact implements simulator.ContactStore. A contact stored anyway
// (DuplicateNew) is indexed like any other: the email index then holds
// two positions of one email, and a later match finds either.
func (s *ContactStore) AddContact(_ context.Context, c *simulator.Contact, rule simulator.DuplicateRule) (*simulator.Contact, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	stored, created := s.upsert(c, rule)
	if created {
		// Stored as its record's bytes, not as c: c itself is the
		// answer, and nothing the caller does to it reaches the store.
		// A copy cost two allocations per new contact (issue 31).
		stored = c
	} else if stored == nil {
		return nil, false, simulator.ErrDuplicate
	}
	return stored, created, nil
}

// upsert stores c. It returns the merged contact, or nil and true when c
// was stored as new, or nil and false when rule refuses its match.
func (s *ContactStore) upsert(c *simulator.Contact, rule simulator.DuplicateRule) (*simulator.Contact, bool) {
	acct := s.account(c.AccountID)
	pos, found := uint32(0), false
	switch {
	case c.Email != "":
		pos, found = s.findEmail(acct, c.Email)
	case c.PhoneNo != "":
		_, pos, found = s.findPhone(acct, c.PhoneNo)
	}
	if found {
		switch rule.For(c) {
		case simulator.DuplicateRefuse:
			return nil, false
		case simulator.DuplicateNew:
			found = false
		}
	}
	if !found {
		s.add(acct, c)
		return nil, true
	}
	old := s.record(pos)
	old = old[:recordSize(old)]
	stored := decodeRecord(old, &s.dict, s.accounts)
	phoneBefore := stored.PhoneNo
	stored.Merge(c)
	stored.UpdatedAt = c.UpdatedAt
	// Unlink while the record still holds the old phoneNo: the phone index
	// verifies its hits against records.
	phoneChanged := stored.PhoneNo != phoneBefore
	if phoneChanged && phoneBefore != "" {
		s.unlinkPhone(acct, phoneBefore, pos)
	}
	s.scratch = appendRecord(s.scratch[:0], &s.dict, acct, stored)
	if len(s.scratch) <= len(old) {
		copy(old, s.scratch) // in place: the leftover bytes are never read
		s.arena.waste += len(old) - len(s.scratch)
	} else {
		s.loc[pos] = s.arena.add(s.scratch)
		s.arena.waste += len(old)
	}
	if phoneChanged {
		s.linkPhone(acct, stored.PhoneNo, pos)
	}
	if s.arena.wasteful() {
		s.compact()
	}
	return stored, false
}

// add stores c as the newest contact; the caller has checked that it
// matches none.
func (s *ContactStore) add(acct uint32, c *simulator.Contact) {
	s.scratch = appendRecord(s.scratch[:0], &s.dict, acct, c)
	s.addRecord(acct, s.scratch, c.Email, c.PhoneNo)
}

func (s *ContactStore) addRecord(acct uint32, rec []byte, email, phone string) {
	pos := uint32(len(s.loc))
	s.loc = append(s.loc, s.arena.add(rec))
	s.phoneNext = append(s.phoneNext, 0)
	s.phonePrev = append(s.phonePrev, 0)
	s.byAccount[acct] = append(s.byAccount[acct], pos)
	if email != "" {
		s.emails.insert(s.emailHash(acct, email), pos)
	}
	if phone != "" {
		s.linkPhone(acct, phone, pos)
	}
}

// linkPhone adds the contact at pos to the list of the contacts that have
// phone, in creation order. A new contact is the newest, so it goes at the
// tail at once; only a merge that gives an older contact a phoneNo others
// have walks the list.
func (s *ContactStore) linkPhone(acct uint32, phone string, pos uint32) {
	next, prev := s.phoneNext, s.phonePrev
	slot, head, ok := s.findPhone(acct, phone)
	if !ok {
		s.phones.insert(s.phoneHash(acct, phone), pos)
		next[pos], prev[pos] = 0, pos+1
		return
	}
	if tail := prev[head] - 1; pos > tail { // the newest: a new contact
		next[tail], prev[pos], next[pos] = pos+1, tail+1, 0
		prev[head] = pos + 1
		return
	}
	if pos < head { // the new oldest
		next[pos], prev[pos] = head+1, prev[head]
		prev[head] = pos + 1
		s.phones.set(slot, pos)
		return
	}
	cur := head
	for next[cur] != 0 && next[cur]-1 < pos {
		cur = next[cur] - 1
	}
	after := next[cur]
	next[cur], prev[pos], next[pos] = pos+1, cur+1, after
	if after != 0 {
		prev[after-1] = pos + 1
	} else {
		prev[head] = pos + 1 // the new tail
	}
}

// unlinkPhone removes the contact at pos from the list of phone.
func (s *ContactStore) unlinkPhone(acct uint32, phone string, pos uint32) {
	next, prev := s.phoneNext, s.phonePrev
	slot, head, ok := s.findPhone(acct, phone)
	if !ok {
		return
	}
	defer func() { next[pos], prev[pos] = 0, 0 }()
	if pos == head {
		if next[pos] == 0 {
			s.phones.delete(slot)
			return
		}
		n := next[pos] - 1
		prev[n] = prev[pos]
		s.phones.set(slot, n)
		return
	}
	p, n := prev[pos]-1, next[pos]
	next[p] = n
	if n != 0 {
		prev[n-1] = p + 1
	} else {
		prev[head] = p + 1
	}
}

// FindContacts implements simulator.ContactStore.
func (s *ContactStore) FindContacts(_ context.Context, f simulator.ContactFilter) ([]*simulator.Contact, int, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []*simulator.Contact
	if f.AccountID == "" {
		lo, hi := bounds(len(s.loc), f.Offset, f.Limit)
		for pos := lo; pos < hi; pos++ {
			out = append(out, decodeRecord(s.record(uint32(pos)), &s.dict, s.accounts))
		}
		return out, len(s.loc), nil
	}
	n, ok := s.accountNum[f.AccountID]
	if !ok {
		return nil, 0, nil
	}
	all := s.byAccount[n]
	for _, pos := range window(all, f.Offset, f.Limit) {
		out = append(out, decodeRecord(s.record(pos), &s.dict, s.accounts))
	}
	return out, len(all), nil
}

// bounds returns the range of [0, n) that offset and limit select.
func bounds(n, offset, limit int) (int, int) {
	lo := min(max(offset, 0), n)
	hi := n
	if limit > 0 && limit < n-lo {
		hi = lo + limit
	}
	return lo, hi
}

// DeleteContacts implements simulator.ContactStore. It rebuilds the store
// from the contacts it keeps, so it costs time in proportion to them.
func (s *ContactStore) DeleteContacts(_ context.Context, accountID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.version = ""
	drop, ok := s.accountNum[accountID]
	if accountID != "" && !ok {
		return nil
	}
	s.rebuild(func(acct uint32) bool { return accountID != "" && acct != drop })
	return nil
}

// compact copies the live records into a fresh arena once merges have left
// more dead bytes than live ones.
func (s *ContactStore) compact() { s.rebuild(func(uint32) bool { return true }) }

// rebuild keeps the records of the accounts keep accepts, in order, and
// rebuilds every index over them.
func (s *ContactStore) rebuild(keep func(acct uint32) bool) {
	old, oldLoc := s.arena, s.loc
	s.arena, s.loc = arena{}, nil
	s.phoneNext, s.phonePrev = nil, nil
	s.emails, s.phones = table{}, table{}
	for i := range s.byAccount {
		s.byAccount[i] = nil
	}
	for _, l := range oldLoc {
		rec := old.at(l)
		k := keysOf(rec)
		if !keep(k.account) {
			continue
		}
		s.addRecord(k.account, rec[:recordSize(rec)], string(k.email), string(k.phone))
	}
}

// SeedContacts stores contacts as new ones, oldest first, unless this store
// already holds the contacts seeded under version; DeleteContacts forgets
// the version. It reports whether it stored. Each is upserted as by
// UpsertContact (seed.Contacts gives each account's contacts distinct
// emails, so on an empty store every one is new).
func (s *ContactStore) SeedContacts(_ context.Context, version string, contacts iter.Seq[*simulator.Contact]) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if version != "" && s.version == version {
		return false, nil
	}
	for c := range contacts {
		s.upsert(c, simulator.DuplicateRule{})
	}
	s.version = version
	return true, nil
}
