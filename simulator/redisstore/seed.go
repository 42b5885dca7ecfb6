package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/partner-v3/conformance-kit/simulator"
)

const (
	// seedTimeout bounds each command of a seeding instead of DB.Timeout:
	// deleting a million contacts or writing a large batch may take longer
	// than the short timeout that keeps requests from hanging.
	seedTimeout = 30 * time.Second
	// seedWait bounds how long a replica waits for another one's seeding.
	seedWait = 5 * time.Minute
	// seedLockTTL is how long the seed lock outlives its holder's last
	// batch: a replica that dies while seeding does not block the others
	// for longer.
	seedLockTTL = 30 * time.Second
	// seedBatch is how many contacts one pipeline writes.
	seedBatch = 1000
)

// releaseLockScript deletes the lock only if the caller holds it.
var releaseLockScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`)

// SeedContacts stores contacts once per version for every replica on the
// DB: when Redis holds no contact version, the first replica to take the
// seed lock deletes every contact, writes these in pipelined batches (with
// their indexes, oldest first, as UpsertContact would) and records the
// version; the others wait for it and store nothing. It reports whether
// this call stored. When Redis holds another version it returns a
// *VersionError: replicas started differently must not share contacts.
//
// Every contact must be new and distinct by email within its account
// (seed.Contacts makes them so): none is looked up.
func (s *ContactStore) SeedContacts(ctx context.Context, version string, contacts iter.Seq[*simulator.Contact]) (bool, error) {
	db := s.db
	client := db.slow
	verKey, lockKey := db.key("contact-version"), db.key("contact-seed-lock")
	token := db.uniqueMember()
	deadline := time.Now().Add(seedWait)
	for {
		stored, err := client.Get(ctx, verKey).Result()
		switch {
		case err == nil && stored == version:
			return false, nil
		case err == nil:
			return false, &VersionError{What: "contacts", Key: verKey, Stored: stored, Own: version}
		case !errors.Is(err, redis.Nil):
			return false, fmt.Errorf("seed contacts: %w", err)
		}
		locked, err := client.SetNX(ctx, lockKey, token, seedLockTTL).Result()
		if err != nil {
			return false, fmt.Errorf("seed contacts: %w", err)
		}
		if locked {
			break
		}
		if time.Now().After(deadline) {
			return false, fmt.Errorf("seed contacts: another replica has held %s for %v", lockKey, seedWait)
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return false, fmt.Errorf("seed contacts: %w", err)
		}
	}
	defer releaseLockScript.Run(context.WithoutCancel(ctx), client, []string{lockKey}, token)

	// Between the version check and the lock another replica may have
	// finished: check again, holding the lock.
	if stored, err := client.Get(ctx, verKey).Result(); err == nil {
		if stored == version {
			return false, nil
		}
		return false, &VersionError{What: "contacts", Key: verKey, Stored: stored, Own: version}
	} else if !errors.Is(err, redis.Nil) {
		return false, fmt.Errorf("seed contacts: %w", err)
	}
	if err := s.deleteContacts(ctx, "", token); err != nil {
		return false, fmt.Errorf("seed contacts: %w", err)
	}
	batch := make([]*simulator.Contact, 0, seedBatch)
	for c := range contacts {
		batch = append(batch, c)
		if len(batch) == seedBatch {
			if err := s.writeBatch(ctx, client, batch, lockKey); err != nil {
				return false, fmt.Errorf("seed contacts: %w", err)
			}
			batch = batch[:0]
		}
	}
	if err := s.writeBatch(ctx, client, batch, lockKey); err != nil {
		return false, fmt.Errorf("seed contacts: %w", err)
	}
	if err := client.Set(ctx, verKey, version, 0).Err(); err != nil {
		return false, fmt.Errorf("seed contacts: %w", err)
	}
	return true, nil
}

// writeBatch stores new contacts and their indexes in one pipeline, with
// the next sequence numbers, and extends the seed lock.
func (s *ContactStore) writeBatch(ctx context.Context, client redis.UniversalClient, batch []*simulator.Contact, lockKey string) error {
	if len(batch) == 0 {
		return nil
	}
	db := s.db
	end, err := client.IncrBy(ctx, db.key("contact-seq"), int64(len(batch))).Result()
	if err != nil {
		return err
	}
	type accountArgs struct {
		data, email []any
		order       []redis.Z
		phone       []redis.Z
	}
	by := map[string]*accountArgs{}
	var accounts []string
	var global []redis.Z
	for i, c := range batch {
		seq := end - int64(len(batch)) + int64(i) + 1
		b, err := json.Marshal(c)
		if err != nil {
			return err
		}
		a := by[c.AccountID]
		if a == nil {
			a = &accountArgs{}
			by[c.AccountID] = a
			accounts = append(accounts, c.AccountID)
		}
		a.data = append(a.data, c.ID, b)
		a.order = append(a.order, redis.Z{Score: float64(seq), Member: c.ID})
		global = append(global, redis.Z{Score: float64(seq), Member: c.AccountID + "\n" + c.ID})
		if c.Email != "" {
			a.email = append(a.email, lower(c.Email), c.ID)
		}
		if c.PhoneNo != "" {
			s := strconv.FormatInt(seq, 10)
			a.phone = append(a.phone, redis.Z{Member: hexPhone(c.PhoneNo) + ":" + zeros[:20-len(s)] + s + ":" + c.ID})
		}
	}
	pipe := client.Pipeline()
	for _, acct := range accounts {
		a := by[acct]
		pipe.HSet(ctx, db.acctKey("contact-data", acct), a.data...)
		pipe.ZAdd(ctx, db.acctKey("contact-order", acct), a.order...)
		if len(a.email) > 0 {
			pipe.HSet(ctx, db.acctKey("contact-email", acct), a.email...)
		}
		if len(a.phone) > 0 {
			pipe.ZAdd(ctx, db.acctKey("contact-phone", acct), a.phone...)
		}
		pipe.SAdd(ctx, db.key("contact-accounts"), acct)
	}
	if !db.sharded {
		pipe.ZAdd(ctx, db.key("contact-order"), global...)
	}
	pipe.PExpire(ctx, lockKey, seedLockTTL)
	_, err = pipe.Exec(ctx)
	return err
}

const zeros = "00000000000000000000"
