package redisstore

import (
	"cmp"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/partner-v3/conformance-kit/simulator"
)

var _ simulator.ContactSeeder = (*ContactStore)(nil)

// ContactStore keeps contacts in Redis (see the package doc for the keys).
type ContactStore struct {
	db *DB
}

// NewContactStore returns a ContactStore on db.
func NewContactStore(db *DB) *ContactStore {
	return &ContactStore{db: db}
}

// maxUpsertAttempts bounds the optimistic merge loop; each failed attempt
// means another writer changed the same contact in between, so it is only
// reached under pathological contention.
const maxUpsertAttempts = 100

// createContactScript finds the contact that an upsert matches or, when
// none does, stores the new one and its indexes, in one atomic step: two
// concurrent upserts of one email can never both create.
//
// The phone index is a sorted set of "<hex phoneNo>:<20-digit sequence>:<id>"
// members with equal scores: the first member of a phoneNo's lexical range
// is the oldest contact that has that phoneNo now (as inmem scans), and a
// merge that replaces a phoneNo moves the contact's member.
//
// Its first lines make go-redis's retry safe: a script re-sent after Redis
// stored the contact but its reply was lost finds its own id holding its
// own JSON (ids are random per call) and answers "created" again, instead
// of "matched". The same HGET tells an id stored with other JSON, refused
// once nothing matches (one read where a HEXISTS followed: issue 21).
//
// Numbers go to redis.call as strings made with string.format's %d: a Lua
// number there is written with snprintf("%.17g"), the floating-point
// printer, which callgrind showed among the script's larger costs (issue
// 21).
//
// KEYS: data hash, account order, email index, phone index and, but on a
// sharded cluster, global order, sequence, accounts set. ARGV: match kind
// ("email", "phone" or ""), lower-cased email, hex phoneNo, id, contact
// JSON, account, and on a sharded cluster the sequence number taken
// before (the global keys are in another slot: see AddContact).
// Returns {1, id} when it created (the caller has the JSON it sent: no
// need to ship it back and decode it), {0, id, json} when it matched.
var createContactScript = redis.NewScript(`
local mine = redis.call('HGET', KEYS[1], ARGV[4])
if mine == ARGV[5] then
  return {1, ARGV[4]}
end
local existing
if ARGV[1] == 'email' then
  existing = redis.call('HGET', KEYS[3], ARGV[2])
elseif ARGV[1] == 'phone' then
  local m = redis.call('ZRANGEBYLEX', KEYS[4], '[' .. ARGV[3] .. ':', '(' .. ARGV[3] .. ';', 'LIMIT', '0', '1')[1]
  if m then existing = string.sub(m, #ARGV[3] + 23) end
end
if existing then
  local data = redis.call('HGET', KEYS[1], existing)
  if data then
    return {0, existing, data}
  end
end
if mine then
  return redis.error_reply('contact id ' .. ARGV[4] .. ' is already stored')
end
local seq
if KEYS[5] then
  seq = redis.call('INCR', KEYS[6])
else
  seq = tonumber(ARGV[7])
end
local score = string.format('%d', seq)
if KEYS[5] then
  redis.call('ZADD', KEYS[5], score, ARGV[6] .. '\n' .. ARGV[4])
  redis.call('SADD', KEYS[7], ARGV[6])
end
redis.call('HSET', KEYS[1], ARGV[4], ARGV[5])
redis.call('ZADD', KEYS[2], score, ARGV[4])
if ARGV[2] ~= '' then
  redis.call('HSET', KEYS[3], ARGV[2], ARGV[4])
end
if ARGV[3] ~= '' then
  redis.call('ZADD', KEYS[4], '0', ARGV[3] .. ':' .. string.format('%020d', seq) .. ':' .. ARGV[4])
end
return {1, ARGV[4]}
`)

// updateContactScript replaces a stored contact only if it is still the
// version the caller merged into (compare-and-set), and moves its phone
// index member when the merge replaced the phoneNo.
//
// KEYS: data hash, phone index, account order. ARGV: id, old JSON, new
// JSON, old hex phoneNo, new hex phoneNo.
// Returns 1 when it replaced, 0 when the contact changed or vanished.
var updateContactScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
if ARGV[4] ~= ARGV[5] then
  local s = tostring(tonumber(redis.call('ZSCORE', KEYS[3], ARGV[1])))
  local seq = string.rep('0', 20 - #s) .. s
  if ARGV[4] ~= '' then
    redis.call('ZREM', KEYS[2], ARGV[4] .. ':' .. seq .. ':' .. ARGV[1])
  end
  if ARGV[5] ~= '' then
    redis.call('ZADD', KEYS[2], 0, ARGV[5] .. ':' .. seq .. ':' .. ARGV[1])
  end
end
return 1
`)

// luaPage defines page, which reads a page of the ordered set zset and,
// for each member on it, the record fetch(member) returns, leaving out a
// member whose record is gone: {total, json...}. offset and limit (0: no
// limit) are ARGV strings.
const luaPage = `
local function page(zset, offset, limit, fetch)
  local total = redis.call('ZCARD', zset)
  offset, limit = tonumber(offset), tonumber(limit)
  local stop = -1
  if limit > 0 then stop = offset + limit - 1 end
  local out = {total}
  for _, m in ipairs(redis.call('ZRANGE', zset, offset, stop)) do
    local data = fetch(m)
    if data then table.insert(out, data) end
  end
  return out
end
`

// pageScript reads a page of an ordered set and the records it names, in
// one atomic step, so a page never mixes two states.
//
// KEYS: order zset, data hash. ARGV: offset, limit (0: no limit).
// Returns {total, json...}.
var pageScript = redis.NewScript(luaPage + `
return page(KEYS[1], ARGV[1], ARGV[2], function(id) return redis.call('HGET', KEYS[2], id) end)
`)

// allContactsScript is pageScript over every account's contacts.
//
// KEYS: global order zset. ARGV: offset, limit, prefix.
var allContactsScript = redis.NewScript(luaPage + `
return page(KEYS[1], ARGV[1], ARGV[2], function(m)
  local i = string.find(m, '\n', 1, true)
  return redis.call('HGET', ARGV[3] .. 'contact-data:' .. string.sub(m, 1, i - 1), string.sub(m, i + 1))
end)
`)

// deleteContactsScript removes one account's contacts and indexes, or every
// account's and the seed version when the account is empty. It refuses (0)
// while a replica other than the caller holds the seed lock, so a reset
// never cuts a seeding in half.
//
// KEYS: global order zset, accounts set, contact version, seed lock.
// ARGV: prefix, account, the caller's lock token or "".
var deleteContactsScript = redis.NewScript(`
local holder = redis.call('GET', KEYS[4])
if holder and holder ~= ARGV[3] then
  return 0
end
local p = ARGV[1]
local function drop(acct, all)
  local order = p .. 'contact-order:' .. acct
  if not all then
    for _, id in ipairs(redis.call('ZRANGE', order, 0, -1)) do
      redis.call('ZREM', KEYS[1], acct .. '\n' .. id)
    end
  end
  redis.call('UNLINK', order, p .. 'contact-data:' .. acct, p .. 'contact-email:' .. acct, p .. 'contact-phone:' .. acct)
  redis.call('SREM', KEYS[2], acct)
end
if ARGV[2] == '' then
  for _, acct in ipairs(redis.call('SMEMBERS', KEYS[2])) do drop(acct, true) end
  redis.call('UNLINK', KEYS[1], KEYS[2], KEYS[3])
else
  drop(ARGV[2], false)
end
return 1
`)

// UpsertContact implements simulator.ContactStore: a new contact is stored
// with its indexes atomically; a match is merged with Contact.Merge and
// written back only if nobody changed it meanwhile, else it retries.
func (s *ContactStore) UpsertContact(ctx context.Context, c *simulator.Contact) (*simulator.Contact, bool, error) {
	return s.AddContact(ctx, c, simulator.DuplicateRule{})
}

// AddContact implements simulator.ContactStore. DuplicateNew looks for no
// match (kind ""): the contact is stored with its indexes, the email index
// then naming the newest contact of that email. DuplicateRefuse reads the
// match the script finds and stores nothing: the script only stores when
// nothing matches.
func (s *ContactStore) AddContact(ctx context.Context, c *simulator.Contact, rule simulator.DuplicateRule) (*simulator.Contact, bool, error) {
	db := s.db
	acct := c.AccountID
	kind := ""
	switch {
	case c.Email != "":
		kind = "email"
	case c.PhoneNo != "":
		kind = "phone"
	}
	if rule.For(c) == simulator.DuplicateNew {
		kind = ""
	}
	email := lower(c.Email)
	newJSON, err := json.Marshal(c)
	if err != nil {
		return nil, false, fmt.Errorf("upsert contact: %w", err)
	}
	keys := []string{
		db.acctKey("contact-data", acct), db.acctKey("contact-order", acct),
		db.acctKey("contact-email", acct), db.acctKey("contact-phone", acct),
	}
	args := []any{kind, email, hexPhone(c.PhoneNo), c.ID, newJSON, acct}
	if db.sharded {
		// The sequence and the set of accounts are global keys, in
		// another slot: take the number and name the account first (a
		// number a match then leaves unused is a harmless gap; an account
		// named with no contact holds none), then store in the account's
		// slot. The order of every contact is the accounts' orders merged
		// by sequence (findAllSharded).
		var seq *redis.IntCmd
		if _, err := db.client.Pipelined(ctx, func(p redis.Pipeliner) error {
			seq = p.Incr(ctx, db.key("contact-seq"))
			p.SAdd(ctx, db.key("contact-accounts"), acct)
			return nil
		}); err != nil {
			return nil, false, fmt.Errorf("upsert contact: %w", err)
		}
		args = append(args, seq.Val())
	} else {
		keys = append(keys, db.key("contact-order"), db.key("contact-seq"), db.key("contact-accounts"))
	}
	for range maxUpsertAttempts {
		res, err := createContactScript.Run(ctx, db.client, keys, args...).Slice()
		if err != nil {
			return nil, false, fmt.Errorf("upsert contact: %w", err)
		}
		if len(res) < 2 {
			return nil, false, fmt.Errorf("upsert contact: unexpected reply %v", res)
		}
		if created, _ := res[0].(int64); created == 1 {
			// Stored as sent: a copy of c, as inmem answers, not
			// a decoding of the JSON just encoded from it.
			return cloneContact(c), true, nil
		}
		if rule.For(c) == simulator.DuplicateRefuse {
			return nil, false, simulator.ErrDuplicate
		}
		if len(res) != 3 {
			return nil, false, fmt.Errorf("upsert contact: unexpected reply %v", res)
		}
		id, _ := res[1].(string)
		oldJSON, _ := res[2].(string)
		stored, err := decodeContact(oldJSON)
		if err != nil {
			return nil, false, fmt.Errorf("upsert contact: %w", err)
		}

		phoneBefore := stored.PhoneNo
		stored.Merge(c)
		stored.UpdatedAt = c.UpdatedAt // as inmem: a merge is an update
		merged, err := json.Marshal(stored)
		if err != nil {
			return nil, false, fmt.Errorf("upsert contact: %w", err)
		}
		ok, err := updateContactScript.Run(ctx, db.client, []string{keys[0], keys[3], keys[1]},
			id, oldJSON, merged, hexPhone(phoneBefore), hexPhone(stored.PhoneNo)).Int()
		if err != nil {
			return nil, false, fmt.Errorf("upsert contact: %w", err)
		}
		if ok == 1 {
			return stored, false, nil
		}
	}
	return nil, false, fmt.Errorf("upsert contact: still conflicting after %d attempts", maxUpsertAttempts)
}

// FindContacts implements simulator.ContactStore.
func (s *ContactStore) FindContacts(ctx context.Context, filter simulator.ContactFilter) ([]*simulator.Contact, int, error) {
	db := s.db
	offset, limit := max(filter.Offset, 0), max(filter.Limit, 0)
	var cmd *redis.Cmd
	if filter.AccountID == "" && db.sharded {
		total, records, err := s.findAllSharded(ctx, offset, limit)
		if err != nil {
			return nil, 0, fmt.Errorf("find contacts: %w", err)
		}
		return decodeContacts(total, records)
	}
	if filter.AccountID == "" {
		cmd = allContactsScript.Run(ctx, db.client, []string{db.key("contact-order")}, offset, limit, db.Prefix)
	} else {
		keys := []string{db.acctKey("contact-order", filter.AccountID), db.acctKey("contact-data", filter.AccountID)}
		cmd = pageScript.Run(ctx, db.client, keys, offset, limit)
	}
	total, records, err := page(cmd)
	if err != nil {
		return nil, 0, fmt.Errorf("find contacts: %w", err)
	}
	return decodeContacts(total, records)
}

func decodeContacts(total int, records []string) ([]*simulator.Contact, int, error) {
	contacts := make([]*simulator.Contact, 0, len(records))
	for _, r := range records {
		c, err := decodeContact(r)
		if err != nil {
			return nil, 0, fmt.Errorf("find contacts: %w", err)
		}
		contacts = append(contacts, c)
	}
	return contacts, total, nil
}

// findAllSharded is the page of every account's contacts on a sharded
// cluster, where no global order is kept: the accounts' orders (each in
// its account's slot) merged by sequence. Three round trips: the accounts,
// the first offset+limit of each order with the totals, the page's
// records. Not one snapshot, as the page of one account is: a contact
// added meanwhile may show or not (a report of the control API, never a
// decision).
func (s *ContactStore) findAllSharded(ctx context.Context, offset, limit int) (int, []string, error) {
	db := s.db
	accounts, err := db.client.SMembers(ctx, db.key("contact-accounts")).Result()
	if err != nil {
		return 0, nil, err
	}
	stop := int64(-1)
	if limit > 0 {
		stop = int64(offset + limit - 1)
	}
	totals := make([]*redis.IntCmd, len(accounts))
	orders := make([]*redis.ZSliceCmd, len(accounts))
	if _, err := db.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, acct := range accounts {
			totals[i] = p.ZCard(ctx, db.acctKey("contact-order", acct))
			orders[i] = p.ZRangeWithScores(ctx, db.acctKey("contact-order", acct), 0, stop)
		}
		return nil
	}); err != nil {
		return 0, nil, err
	}
	type entry struct {
		seq     float64
		account string
		id      string
	}
	var all []entry
	total := 0
	for i, acct := range accounts {
		total += int(totals[i].Val())
		for _, z := range orders[i].Val() {
			id, _ := z.Member.(string)
			all = append(all, entry{z.Score, acct, id})
		}
	}
	slices.SortFunc(all, func(a, b entry) int { return cmp.Compare(a.seq, b.seq) })
	if offset >= len(all) {
		return total, nil, nil
	}
	all = all[offset:]
	if limit > 0 && len(all) > limit {
		all = all[:limit]
	}
	data := make([]*redis.StringCmd, len(all))
	if _, err := db.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, e := range all {
			data[i] = p.HGet(ctx, db.acctKey("contact-data", e.account), e.id)
		}
		return nil
	}); err != nil && !errors.Is(err, redis.Nil) {
		return 0, nil, err
	}
	records := make([]string, 0, len(all))
	for _, d := range data {
		if v, err := d.Result(); err == nil {
			records = append(records, v)
		}
	}
	return total, records, nil
}

// DeleteContacts implements simulator.ContactStore. Deleting every
// account's contacts also forgets the seed version, so SeedContacts seeds
// again. While another replica seeds, it waits (up to seedWait).
func (s *ContactStore) DeleteContacts(ctx context.Context, accountID string) error {
	if err := s.deleteContacts(ctx, accountID, ""); err != nil {
		return fmt.Errorf("delete contacts: %w", err)
	}
	return nil
}

func (s *ContactStore) deleteContacts(ctx context.Context, accountID, token string) error {
	db := s.db
	if db.sharded {
		return s.deleteSharded(ctx, accountID, token)
	}
	keys := []string{db.key("contact-order"), db.key("contact-accounts"), db.key("contact-version"), db.key("contact-seed-lock")}
	deadline := time.Now().Add(seedWait)
	for {
		done, err := deleteContactsScript.Run(ctx, db.slow, keys, db.Prefix, accountID, token).Int()
		if err != nil {
			return err
		}
		if done == 1 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("another replica has been seeding contacts for %v", seedWait)
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
}

// deleteSharded is deleteContacts on a sharded cluster: the accounts'
// keys are in their own slots, so no one script deletes them all. A
// caller that does not hold the seed lock takes it for the time of the
// delete (waiting, up to seedWait, while a replica seeds), so a reset
// never cuts a seeding in half and no seeding starts in the middle of a
// reset. Each account's keys go in one command (one slot); the global
// ones last.
func (s *ContactStore) deleteSharded(ctx context.Context, accountID, token string) error {
	db := s.db
	lockKey := db.key("contact-seed-lock")
	if token == "" {
		token = db.uniqueMember()
		deadline := time.Now().Add(seedWait)
		for {
			ok, err := db.slow.SetNX(ctx, lockKey, token, seedLockTTL).Result()
			if err != nil {
				return err
			}
			if ok {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("another replica has been seeding contacts for %v", seedWait)
			}
			if err := sleep(ctx, 100*time.Millisecond); err != nil {
				return err
			}
		}
		defer releaseLockScript.Run(context.WithoutCancel(ctx), db.slow, []string{lockKey}, token)
	}
	accounts := []string{accountID}
	if accountID == "" {
		var err error
		if accounts, err = db.slow.SMembers(ctx, db.key("contact-accounts")).Result(); err != nil {
			return err
		}
	}
	for _, acct := range accounts {
		if err := db.slow.Unlink(ctx, db.acctKey("contact-order", acct), db.acctKey("contact-data", acct),
			db.acctKey("contact-email", acct), db.acctKey("contact-phone", acct)).Err(); err != nil {
			return err
		}
		if err := db.slow.SRem(ctx, db.key("contact-accounts"), acct).Err(); err != nil {
			return err
		}
	}
	if accountID == "" {
		return db.slow.Unlink(ctx, db.key("contact-accounts"), db.key("contact-version")).Err()
	}
	return nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// hexPhone encodes a phoneNo for the phone index: hex digits never hold
// the index's ":" separator, so one phoneNo's range never takes in another.
func hexPhone(phone string) string {
	return hex.EncodeToString([]byte(phone))
}

// cloneContact is a copy of c that shares no pointer or slice with it.
func cloneContact(c *simulator.Contact) *simulator.Contact {
	out := *c
	if c.EmailOptStatus != nil {
		v := *c.EmailOptStatus
		out.EmailOptStatus = &v
	}
	if c.SMSOptStatus != nil {
		v := *c.SMSOptStatus
		out.SMSOptStatus = &v
	}
	out.Tag = slices.Clone(c.Tag)
	out.PlayerType = slices.Clone(c.PlayerType)
	return &out
}

func decodeContact(s string) (*simulator.Contact, error) {
	var c simulator.Contact
	if err := json.Unmarshal([]byte(s), &c); err != nil {
		return nil, fmt.Errorf("decode contact: %w", err)
	}
	return &c, nil
}

// page splits the {total, json...} reply of pageScript.
func page(cmd *redis.Cmd) (int, []string, error) {
	res, err := cmd.Slice()
	if err != nil {
		return 0, nil, err
	}
	if len(res) == 0 {
		return 0, nil, errors.New("empty reply")
	}
	total, ok := res[0].(int64)
	if !ok {
		return 0, nil, fmt.Errorf("unexpected total %T", res[0])
	}
	records := make([]string, 0, len(res)-1)
	for _, r := range res[1:] {
		s, ok := r.(string)
		if !ok {
			return 0, nil, fmt.Errorf("unexpected record %T", r)
		}
		records = append(records, s)
	}
	return int(total), records, nil
}

// lower is the email index key: the lower-cased email, as inmem compares.
func lower(email string) string { return strings.ToLower(email) }
