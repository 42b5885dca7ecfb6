package inmem

import (
	"encoding/binary"
	"encoding/hex"
	"strings"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
)

// A record is one contact, encoded compactly and without pointers:
//
//	uvarint account number
//	string  email, phoneNo            (the index keys, first, so a hit is verified quickly)
//	id      0 + string, or 1 + 12 bytes for the server's "ct_" + 24 hex digits
//	time    createdAt, updatedAt      (varint Unix seconds, uvarint nanoseconds; read back in UTC)
//	word    firstName, lastName
//	string  addrOne
//	word    addrTwo, city, country, state
//	string  zipCode
//	word    gender, dateOfBirth
//	opt     emailOptStatus, smsOptStatus (uvarint 0 for absent, else zigzag value + 1)
//	list    tag, playerType           (uvarint count, then words; an empty list reads back absent)
//
// where a string is a uvarint length and its bytes, and a word is a string
// that is likely to repeat: uvarint 2·length and its bytes, or 2·n+1 for
// the store's n-th dictionary word (names, cities, dates, tags: a few
// bytes each instead of ten or more, for a million contacts). A record is
// self-delimiting, so the arena stores no lengths.

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

const idPrefix = "ct_"

func appendID(b []byte, id string) []byte {
	if len(id) == len(idPrefix)+24 && strings.HasPrefix(id, idPrefix) && isLowerHex(id[len(idPrefix):]) {
		b = append(b, 1)
		var raw [12]byte
		_, _ = hex.Decode(raw[:], []byte(id[len(idPrefix):]))
		return append(b, raw[:]...)
	}
	b = append(b, 0)
	return appendString(b, id)
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func appendTime(b []byte, t time.Time) []byte {
	b = binary.AppendVarint(b, t.Unix())
	return binary.AppendUvarint(b, uint64(t.Nanosecond()))
}

func appendOpt(b []byte, v *int) []byte {
	if v == nil {
		return append(b, 0)
	}
	return binary.AppendUvarint(b, zigzag(int64(*v))+1)
}

func zigzag(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }

// dict numbers the words records share. It only grows, up to dictMax
// words, so it stays small whatever the contacts; later words are stored
// in full.
type dict struct {
	ids   map[string]uint32
	words []string
}

const (
	dictMax     = 1 << 16
	dictWordMax = 32 // longer strings are seldom shared
)

func (d *dict) appendWord(b []byte, s string) []byte {
	if s == "" {
		// The bytes of a zero-length string in full, without the map
		// lookup: most of a contact's words are absent (issue 31).
		return append(b, 0)
	}
	id, ok := d.ids[s]
	if !ok && len(s) <= dictWordMax && len(d.words) < dictMax {
		if d.ids == nil {
			d.ids = map[string]uint32{}
		}
		s = strings.Clone(s) // not a part of the caller's larger string
		id, ok = uint32(len(d.words)), true
		d.words = append(d.words, s)
		d.ids[s] = id
	}
	if ok {
		return binary.AppendUvarint(b, uint64(id)<<1|1)
	}
	b = binary.AppendUvarint(b, uint64(len(s))<<1)
	return append(b, s...)
}

func (d *dict) appendList(b []byte, l []string) []byte {
	b = binary.AppendUvarint(b, uint64(len(l)))
	for _, s := range l {
		b = d.appendWord(b, s)
	}
	return b
}

// appendRecord appends the record of c, for account number acct, to b.
func appendRecord(b []byte, d *dict, acct uint32, c *simulator.Contact) []byte {
	b = binary.AppendUvarint(b, uint64(acct))
	b = appendString(b, c.Email)
	b = appendString(b, c.PhoneNo)
	b = appendID(b, c.ID)
	b = appendTime(b, c.CreatedAt)
	b = appendTime(b, c.UpdatedAt)
	b = d.appendWord(b, c.FirstName)
	b = d.appendWord(b, c.LastName)
	b = appendString(b, c.AddrOne)
	for _, s := range [...]string{c.AddrTwo, c.City, c.Country, c.State} {
		b = d.appendWord(b, s)
	}
	b = appendString(b, c.ZipCode)
	b = d.appendWord(b, c.Gender)
	b = d.appendWord(b, c.DateOfBirth)
	b = appendOpt(b, c.EmailOptStatus)
	b = appendOpt(b, c.SMSOptStatus)
	b = d.appendList(b, c.Tag)
	return d.appendList(b, c.PlayerType)
}

// reader decodes a record. Records are written only by appendRecord, so a
// malformed one is a bug: reads past the end panic.
type reader struct {
	b   []byte
	off int
}

func (r *reader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b[r.off:])
	r.pass(n)
	return v
}

func (r *reader) varint() int64 {
	v, n := binary.Varint(r.b[r.off:])
	r.pass(n)
	return v
}

// pass moves past a varint of n bytes, as encoding/binary measured it: n
// <= 0 is its report of a record cut short or overflowing.
func (r *reader) pass(n int) {
	if n <= 0 {
		panic("inmem: corrupt contact record")
	}
	r.off += n
}

// bytes returns the next string's bytes, without copying.
func (r *reader) bytes() []byte {
	n := int(r.uvarint())
	s := r.b[r.off : r.off+n]
	r.off += n
	return s
}

func (r *reader) skipWord() {
	if x := r.uvarint(); x&1 == 0 {
		r.off += int(x >> 1)
	}
}

func (r *reader) skipID() {
	kind := r.b[r.off]
	r.off++
	if kind == 1 {
		r.off += 12
	} else {
		r.bytes()
	}
}

// keys are the fields a lookup verifies, aliasing the record.
type keys struct {
	account      uint32
	email, phone []byte
}

func keysOf(rec []byte) keys {
	r := reader{b: rec}
	var k keys
	k.account = uint32(r.uvarint())
	k.email = r.bytes()
	k.phone = r.bytes()
	return k
}

// recordSize returns the length of the record at the start of b.
func recordSize(b []byte) int {
	r := reader{b: b}
	r.uvarint()
	r.bytes()
	r.bytes()
	r.skipID()
	for range 2 {
		r.varint()
		r.uvarint()
	}
	r.skipWord()
	r.skipWord()
	r.bytes()
	for range 4 {
		r.skipWord()
	}
	r.bytes()
	r.skipWord()
	r.skipWord()
	r.uvarint()
	r.uvarint()
	for range 2 {
		for n := r.uvarint(); n > 0; n-- {
			r.skipWord()
		}
	}
	return r.off
}

// decodeRecord returns a fresh Contact from the record at the start of rec.
// Its strings share one allocation.
func decodeRecord(rec []byte, d *dict, accounts []string) *simulator.Contact {
	rec = rec[:recordSize(rec)]
	all := string(rec)
	r := reader{b: rec}
	str := func() string {
		n := int(r.uvarint())
		s := all[r.off : r.off+n]
		r.off += n
		return s
	}
	word := func() string {
		x := r.uvarint()
		if x&1 == 1 {
			return d.words[x>>1]
		}
		n := int(x >> 1)
		s := all[r.off : r.off+n]
		r.off += n
		return s
	}
	c := &simulator.Contact{}
	c.AccountID = accounts[r.uvarint()]
	c.Email = str()
	c.PhoneNo = str()
	if kind := rec[r.off]; kind == 1 {
		c.ID = idPrefix + hex.EncodeToString(rec[r.off+1:r.off+13])
		r.off += 13
	} else {
		r.off++
		c.ID = str()
	}
	for _, t := range []*time.Time{&c.CreatedAt, &c.UpdatedAt} {
		sec := r.varint()
		*t = time.Unix(sec, int64(r.uvarint())).UTC()
	}
	c.FirstName = word()
	c.LastName = word()
	c.AddrOne = str()
	for _, p := range [...]*string{&c.AddrTwo, &c.City, &c.Country, &c.State} {
		*p = word()
	}
	c.ZipCode = str()
	c.Gender = word()
	c.DateOfBirth = word()
	for _, p := range []**int{&c.EmailOptStatus, &c.SMSOptStatus} {
		if v := r.uvarint(); v > 0 {
			v--
			n := int(int64(v>>1) ^ -int64(v&1))
			*p = &n
		}
	}
	for _, p := range []*[]string{&c.Tag, &c.PlayerType} {
		if n := int(r.uvarint()); n > 0 {
			l := make([]string, n)
			for i := range l {
				l[i] = word()
			}
			*p = l
		}
	}
	return c
}

// equalLower reports whether b, lower-cased, is lower.
func equalLower(b []byte, lower string) bool {
	if len(b) != len(lower) {
		// Lower-casing keeps ASCII lengths; only non-ASCII may differ.
		return hasNonASCII(b) && strings.ToLower(string(b)) == lower
	}
	for i, c := range b {
		if c >= 0x80 {
			return strings.ToLower(string(b)) == lower
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

func hasNonASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return true
		}
	}
	return false
}

// arenaChunk is the size of the arena's chunks: large, so a million
// records are a few hundred allocations the garbage collector never scans.
const arenaChunk = 1 << 20

// arena holds records back to back in chunks; a location is the chunk
// number in the high 32 bits and the offset in the low 32.
type arena struct {
	chunks [][]byte
	used   int // bytes appended
	waste  int // bytes no record uses any more
}

func (a *arena) add(rec []byte) uint64 {
	n := len(a.chunks)
	if n == 0 || len(a.chunks[n-1])+len(rec) > cap(a.chunks[n-1]) {
		a.chunks = append(a.chunks, make([]byte, 0, max(arenaChunk, len(rec))))
		n++
	}
	c := a.chunks[n-1]
	a.chunks[n-1] = append(c, rec...)
	a.used += len(rec)
	return uint64(n-1)<<32 | uint64(len(c))
}

// at returns the bytes from the record at l to the end of its chunk.
func (a *arena) at(l uint64) []byte { return a.chunks[l>>32][uint32(l):] }

// wasteful reports whether dead bytes outweigh live ones enough to compact.
func (a *arena) wasteful() bool { return a.waste > 16<<20 && 2*a.waste > a.used }

// table is an open-addressing hash table with linear probing from a key's
// 64-bit hash to a position. A slot holds the hash's high 32 bits (the
// fingerprint, whose low bits also pick the home slot) and the position
// + 1; 0 is empty. Keys are not stored: a fingerprint match is verified
// against the record, so distinct keys with one fingerprint simply take
// two slots.
type table struct {
	slots []uint64
	n     int
}

func (t *table) find(h uint64, match func(pos uint32) bool) (slot int, pos uint32, ok bool) {
	if len(t.slots) == 0 {
		return -1, 0, false
	}
	mask := len(t.slots) - 1
	fp := uint32(h >> 32)
	for i := int(fp) & mask; ; i = (i + 1) & mask {
		v := t.slots[i]
		if v == 0 {
			return i, 0, false
		}
		if uint32(v>>32) == fp && match(uint32(v)-1) {
			return i, uint32(v) - 1, true
		}
	}
}

func (t *table) insert(h uint64, pos uint32) {
	if 4*(t.n+1) > 3*len(t.slots) {
		t.grow()
	}
	t.put(uint64(uint32(h>>32))<<32 | uint64(pos+1))
	t.n++
}

func (t *table) put(v uint64) {
	mask := len(t.slots) - 1
	i := int(uint32(v>>32)) & mask
	for t.slots[i] != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = v
}

func (t *table) grow() {
	old := t.slots
	t.slots = make([]uint64, max(16, 2*len(old)))
	for _, v := range old {
		if v != 0 {
			t.put(v)
		}
	}
}

// set points the key in slot at pos.
func (t *table) set(slot int, pos uint32) {
	t.slots[slot] = t.slots[slot]&^0xffffffff | uint64(pos+1)
}

// delete empties slot and shifts back the entries after it that probed
// past it, so no tombstones pile up.
func (t *table) delete(slot int) {
	mask := len(t.slots) - 1
	i := slot
	t.slots[i] = 0
	for j := (i + 1) & mask; t.slots[j] != 0; j = (j + 1) & mask {
		v := t.slots[j]
		home := int(uint32(v>>32)) & mask
		if (j-home)&mask >= (j-i)&mask {
			t.slots[i], t.slots[j] = v, 0
			i = j
		}
	}
	t.n--
}
