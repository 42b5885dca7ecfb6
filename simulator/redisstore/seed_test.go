package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/redisstore"
)

// fakeContacts yields n contacts per account, distinct by email.
func fakeContacts(accounts []string, n int) iter.Seq[*simulator.Contact] {
	return func(yield func(*simulator.Contact) bool) {
		at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		for _, a := range accounts {
			for i := range n {
				c := &simulator.Contact{
					ID: fmt.Sprintf("%s-%d", a, i), AccountID: a, Email: fmt.Sprintf("user%d@example.com", i),
					PhoneNo: fmt.Sprintf("+1555%06d", i%50), CreatedAt: at, UpdatedAt: at,
				}
				if !yield(c) {
					return
				}
			}
		}
	}
}

// replicaOf opens another DB with db's prefix: another process.
func replicaOf(t *testing.T, url string, db *redisstore.DB) *redisstore.DB {
	t.Helper()
	r := redisstore.NewDB(url)
	r.Prefix = db.Prefix
	if err := r.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// Replicas started alike store the seeded contacts once, whatever their
// number, in order and indexed: an upsert merges into a seeded contact by
// email or phoneNo. A reset seeds again; another version is refused.
func TestContactStore_SeedContacts(t *testing.T) {
	m := miniredis.RunT(t)
	testSeedContacts(t, "redis://"+m.Addr()+"/0", m.FlushAll)
}

// The same on a Redis Cluster, where every account's contacts are in a
// slot of their own and the order of every contact is theirs merged.
func TestContactStore_SeedContacts_Cluster(t *testing.T) {
	c := startRedisCluster(t)
	testSeedContacts(t, c.URL, func() {
		addrs := strings.Split(strings.TrimPrefix(c.URL, "redis-cluster://"), ",")
		rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
		defer rdb.Close()
		if err := rdb.ForEachMaster(context.Background(), func(ctx context.Context, node *redis.Client) error {
			return node.FlushAll(ctx).Err()
		}); err != nil {
			t.Fatal(err)
		}
	})
}

func testSeedContacts(t *testing.T, url string, flushAll func()) {
	ctx := context.Background()
	db := MustOpenDB(t, url)
	accounts := []string{"acc_a", "acc_b"}
	const n = 2500 // several pipelined batches

	// Four replicas at once: exactly one stores.
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		stored int
		errs   []error
	)
	for range 4 {
		s := redisstore.NewContactStore(replicaOf(t, url, db))
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := s.SeedContacts(ctx, "v1", fakeContacts(accounts, n))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
			} else if ok {
				stored++
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 || stored != 1 {
		t.Fatalf("four replicas seeding: %d stored, errors %v; want exactly one", stored, errs)
	}
	s := redisstore.NewContactStore(db)
	cs, total, err := s.FindContacts(ctx, simulator.ContactFilter{AccountID: "acc_b", Offset: 1, Limit: 2})
	if err != nil || total != n || len(cs) != 2 || cs[0].ID != "acc_b-1" || cs[1].ID != "acc_b-2" {
		t.Fatalf("FindContacts = %d contacts, total %d, %v; want acc_b-1, acc_b-2 of %d", len(cs), total, err, n)
	}
	if _, total, err := s.FindContacts(ctx, simulator.ContactFilter{Limit: 1}); err != nil || total != 2*n {
		t.Errorf("total over every account = %d, %v, want %d", total, err, 2*n)
	}
	// Oldest first across the accounts: the last of acc_a, then acc_b's first.
	if cs, _, err := s.FindContacts(ctx, simulator.ContactFilter{Offset: n - 1, Limit: 2}); err != nil || len(cs) != 2 ||
		cs[0].ID != fmt.Sprintf("acc_a-%d", n-1) || cs[1].ID != "acc_b-0" {
		t.Errorf("every account's contacts from %d: %v, %v; want acc_a-%d, acc_b-0", n-1, contactIDs(cs), err, n-1)
	}
	at := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	byEmail := &simulator.Contact{ID: "new1", AccountID: "acc_a", Email: "USER7@example.com", City: "Oslo", CreatedAt: at, UpdatedAt: at}
	if got, created, err := s.UpsertContact(ctx, byEmail); err != nil || created || got.ID != "acc_a-7" || got.City != "Oslo" {
		t.Errorf("upsert by a seeded email = %+v, %v, %v; want a merge into acc_a-7", got, created, err)
	}
	byPhone := &simulator.Contact{ID: "new2", AccountID: "acc_a", PhoneNo: "+1555000003", CreatedAt: at, UpdatedAt: at}
	if got, created, err := s.UpsertContact(ctx, byPhone); err != nil || created || got.ID != "acc_a-3" {
		t.Errorf("upsert by a seeded phoneNo = %+v, %v, %v; want a merge into acc_a-3 (the oldest)", got, created, err)
	}

	// The same version again stores nothing; another is refused by name.
	if ok, err := s.SeedContacts(ctx, "v1", fakeContacts(accounts, n)); err != nil || ok {
		t.Errorf("SeedContacts v1 again = %v, %v; want false, nil", ok, err)
	}
	var verr *redisstore.VersionError
	if _, err := s.SeedContacts(ctx, "v2", fakeContacts(accounts, 1)); !errors.As(err, &verr) ||
		!strings.Contains(err.Error(), "v1") || !strings.Contains(err.Error(), "v2") {
		t.Errorf("SeedContacts v2 = %v; want a VersionError naming v1 and v2", err)
	}

	// Deleting every contact forgets the version: the next seeding stores
	// the seeded contacts as they were (the merge is gone).
	if err := s.DeleteContacts(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.SeedContacts(ctx, "v1", fakeContacts(accounts, n)); err != nil || !ok {
		t.Fatalf("SeedContacts after DeleteContacts = %v, %v; want stored", ok, err)
	}
	if cs, total, err := s.FindContacts(ctx, simulator.ContactFilter{AccountID: "acc_a", Offset: 7, Limit: 1}); err != nil || total != n || cs[0].City != "" {
		t.Errorf("after reseeding: total %d, contact 7 = %+v; want %d, the seeded one", total, cs[0], n)
	}

	// A flushed Redis (restarted without persistence) is seeded by the next
	// replica that starts.
	flushAll()
	if ok, err := redisstore.NewContactStore(replicaOf(t, url, db)).SeedContacts(ctx, "v1", fakeContacts(accounts, 3)); err != nil || !ok {
		t.Errorf("SeedContacts on a flushed Redis = %v, %v; want stored", ok, err)
	}
}

// Seeding many contacts outlasts the short timeout that keeps requests
// from hanging: it has its own.
func TestContactStore_SeedOutlastsTheRequestTimeout(t *testing.T) {
	m := miniredis.RunT(t)
	db := redisstore.NewDB("redis://" + m.Addr() + "/0")
	db.Timeout = 50 * time.Millisecond
	if err := db.Open(); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s := redisstore.NewContactStore(db)
	start := time.Now()
	if _, err := s.SeedContacts(context.Background(), "v1", fakeContacts([]string{"a", "b"}, 10000)); err != nil {
		t.Fatalf("SeedContacts: %v after %v", err, time.Since(start))
	}
	t.Logf("seeded 20000 contacts in %v", time.Since(start))
	if err := s.DeleteContacts(context.Background(), ""); err != nil {
		t.Fatalf("DeleteContacts of 20000: %v", err)
	}
}

// Replicas must serve the same campaigns: the first records its version,
// an alike one agrees, another is refused with both versions named.
func TestDB_AgreeCampaigns(t *testing.T) {
	ctx := context.Background()
	m := miniredis.RunT(t)
	url := "redis://" + m.Addr() + "/0"
	db := MustOpenDB(t, url)
	if first, err := db.AgreeCampaigns(ctx, "aaaa"); err != nil || !first {
		t.Fatalf("first AgreeCampaigns = %v, %v; want recorded", first, err)
	}
	replica := replicaOf(t, url, db)
	if first, err := replica.AgreeCampaigns(ctx, "aaaa"); err != nil || first {
		t.Errorf("alike replica = %v, %v; want agreed, not recorded", first, err)
	}
	_, err := replica.AgreeCampaigns(ctx, "bbbb")
	var verr *redisstore.VersionError
	if !errors.As(err, &verr) || verr.Stored != "aaaa" || verr.Own != "bbbb" ||
		!strings.Contains(err.Error(), "aaaa") || !strings.Contains(err.Error(), "bbbb") || !strings.Contains(err.Error(), "--redis-prefix") {
		t.Errorf("another version = %v; want a VersionError naming both and the fix", err)
	}
}

func contactIDs(cs []*simulator.Contact) []string {
	ids := make([]string, len(cs))
	for i, c := range cs {
		ids[i] = c.ID
	}
	return ids
}
