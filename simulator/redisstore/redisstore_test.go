package redisstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/redisstore"
	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/simulator/storetest"
)

// The real-Redis tests run when SIM_REDIS_ADDR names a Redis (host:port);
// with REQUIRE_REDIS=1 (set by .ci/run) a missing or unreachable Redis fails
// them instead of skipping.
const (
	envRedisAddr    = "SIM_REDIS_ADDR"
	envRequireRedis = "REQUIRE_REDIS"
)

func requireRedis() bool { return os.Getenv(envRequireRedis) == "1" }

// MustOpenDB opens a DB on url with a prefix unique to the test, and closes
// it and deletes the test's keys in cleanup.
func MustOpenDB(tb testing.TB, url string) *redisstore.DB {
	tb.Helper()
	return mustOpenDBVia(tb, url, url)
}

// mustOpenDBVia is MustOpenDB for a DB on url that is another way to the
// Redis at direct (a proxy), which the cleanup deletes the keys through.
func mustOpenDBVia(tb testing.TB, url, direct string) *redisstore.DB {
	tb.Helper()
	db := redisstore.NewDB(url)
	db.Prefix = uniquePrefix(tb)
	if err := db.Open(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		deleteKeys(tb, direct, db.Prefix)
		if err := db.Close(); err != nil {
			tb.Error(err)
		}
	})
	return db
}

func uniquePrefix(tb testing.TB) string {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		tb.Fatal(err)
	}
	name := strings.NewReplacer(" ", "_", "/", ".").Replace(tb.Name())
	return "simtest:" + name + ":" + hex.EncodeToString(b[:]) + ":"
}

// realRedisURL returns the URL of the Redis named by SIM_REDIS_ADDR, after
// checking that it answers; it skips or fails the test as documented above.
func realRedisURL(tb testing.TB) string {
	tb.Helper()
	addr := os.Getenv(envRedisAddr)
	if addr == "" {
		if requireRedis() {
			tb.Fatalf("%s=1 but %s is not set: start a redis-server on loopback and set %s=127.0.0.1:PORT", envRequireRedis, envRedisAddr, envRedisAddr)
		}
		tb.Skipf("set %s=127.0.0.1:PORT to run against a real redis-server (e.g. redis-server --bind 127.0.0.1 --port 6390 --save \"\" --appendonly no)", envRedisAddr)
	}
	url := "redis://" + addr + "/0"
	db := redisstore.NewDB(url)
	if err := db.Open(); err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := db.Ping(ctx); err != nil {
		// The variable asks for this Redis: unreachable is a failure.
		tb.Fatalf("%s=%s: %v", envRedisAddr, addr, err)
	}
	return url
}

// deleteKeys removes the keys under prefix, so tests leave a shared Redis
// as they found it.
func deleteKeys(tb testing.TB, url, prefix string) {
	tb.Helper()
	if strings.HasPrefix(url, "redis-cluster://") {
		deleteClusterKeys(tb, url, prefix)
		return
	}
	opts, err := redis.ParseURL(url)
	if err != nil {
		tb.Error(err)
		return
	}
	opts.MaxRetries = -1
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	pattern := globEscaper.Replace(prefix) + "*"
	iter := rdb.Scan(ctx, 0, pattern, 1000).Iterator()
	var keys []string
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		// The Redis of an outage test may be gone already.
		tb.Logf("delete test keys under %q: %v", prefix, err)
		return
	}
	if len(keys) > 0 {
		if err := rdb.Del(ctx, keys...).Err(); err != nil {
			tb.Logf("delete test keys under %q: %v", prefix, err)
		}
	}
}

var globEscaper = strings.NewReplacer(`\`, `\\`, "*", `\*`, "?", `\?`, "[", `\[`, "]", `\]`)

func backend(db *redisstore.DB) storetest.Backend {
	return storetest.Backend{
		Contacts: redisstore.NewContactStore(db),
		Control:  redisstore.NewControlStore(db),
		NewRateCounter: func(limit int, window time.Duration) simulator.RateCounter {
			return redisstore.NewRateCounter(db, limit, window)
		},
		NewGate: func(limit int, window time.Duration) (simulator.Gate, simulator.RateCounter) {
			return redisstore.NewGate(db, limit, window), redisstore.NewRateCounter(db, limit, window)
		},
		NewAccounts: func(configured []*simulator.Account, d simulator.AccountDefaults) simulator.AccountRegistry {
			return redisstore.NewAccountStore(db, configured, d)
		},
	}
}

func TestStore_Miniredis(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Backend {
		m := miniredis.RunT(t)
		b := backend(MustOpenDB(t, "redis://"+m.Addr()+"/0"))
		b.Outage = func(*testing.T) { m.Close() }
		return b
	})
}

// The real Redis is shared: each test reaches it through a proxy of its
// own, which its outage cuts (its keys are deleted past the proxy).
func TestStore_RedisServer(t *testing.T) {
	url := realRedisURL(t)
	storetest.Run(t, func(t *testing.T) storetest.Backend {
		p := startCutProxy(t, strings.TrimSuffix(strings.TrimPrefix(url, "redis://"), "/0"))
		db := mustOpenDBVia(t, "redis://"+p.Addr()+"/0", url)
		b := backend(db)
		b.Outage = func(*testing.T) { p.Cut() }
		return b
	})
}

// Two DBs on one Redis with different prefixes share nothing; with the same
// prefix (replicas) they share everything.
func TestDB_Prefix(t *testing.T) {
	m := miniredis.RunT(t)
	url := "redis://" + m.Addr() + "/0"
	a, b := MustOpenDB(t, url), MustOpenDB(t, url)
	replica := redisstore.NewDB(url)
	replica.Prefix = a.Prefix
	if err := replica.Open(); err != nil {
		t.Fatal(err)
	}
	defer replica.Close()

	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if d, err := redisstore.NewRateCounter(a, 1, time.Minute).Take(ctx, "acc", now); err != nil || !d.Allowed {
		t.Fatalf("Take on a = %+v, %v, want allowed", d, err)
	}
	if d, err := redisstore.NewRateCounter(b, 1, time.Minute).Take(ctx, "acc", now); err != nil || !d.Allowed {
		t.Errorf("Take on b = %+v, %v, want allowed: another prefix shares nothing", d, err)
	}
	if d, err := redisstore.NewRateCounter(replica, 1, time.Minute).Take(ctx, "acc", now); err != nil || d.Allowed {
		t.Errorf("Take on a's replica = %+v, %v, want refused: the same prefix shares the counter", d, err)
	}
}

func TestDB_Open(t *testing.T) {
	tests := []struct {
		name string
		url  string
	}{
		{"an empty URL", ""},
		{"another scheme", "http://127.0.0.1:6379"},
		{"a malformed URL", "redis://127.0.0.1:6379/notanumber"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := redisstore.NewDB(tt.url).Open(); err == nil || !strings.HasPrefix(err.Error(), "open redis: ") {
				t.Errorf("Open(%q) = %v, want an open redis error", tt.url, err)
			}
		})
	}
}

// Two connection pools stand for two simulator processes: hammering one
// account through both at once lets exactly the limit through (spec §8:
// one shared counter per account), with no Count seen twice.
func TestRateCounter_TwoPools(t *testing.T) {
	tests := []struct {
		name string
		url  func(t *testing.T) string
	}{
		{"miniredis", func(t *testing.T) string { return "redis://" + miniredis.RunT(t).Addr() + "/0" }},
		{"redis-server", func(t *testing.T) string { return realRedisURL(t) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := tt.url(t)
			a := MustOpenDB(t, u)
			b := redisstore.NewDB(u)
			b.Prefix = a.Prefix
			if err := b.Open(); err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			counters := []simulator.RateCounter{
				redisstore.NewRateCounter(a, spec.RateLimit, spec.RateWindow),
				redisstore.NewRateCounter(b, spec.RateLimit, spec.RateWindow),
			}
			var (
				wg     sync.WaitGroup
				mu     sync.Mutex
				counts = map[int]int{}
				errs   []error
			)
			for g := range 40 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range 5 {
						d, err := counters[g%2].Take(context.Background(), "acc", now)
						mu.Lock()
						if err != nil {
							errs = append(errs, err)
						} else if d.Allowed {
							counts[d.Count]++
						}
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			if len(errs) > 0 {
				t.Fatalf("Take: %d errors, first: %v", len(errs), errs[0])
			}
			if got, want := len(counts), spec.RateLimit; got != want {
				t.Errorf("distinct counts allowed = %d, want %d", got, want)
			}
			for n, times := range counts {
				if times != 1 || n < 1 || n > spec.RateLimit {
					t.Errorf("count %d allowed %d times, want once, within 1..%d", n, times, spec.RateLimit)
				}
			}
		})
	}
}

// The gate names an account's counter for ResetAll only when it creates
// the counter (issue 21: one SADD saved per request), so ResetAll must
// still clear every counter the gate made: the first, one made again
// after Reset dropped it, and one another account's first request made.
func TestGate_ResetAllClearsTheCountersItCreated(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, r := range redisURLs {
		t.Run(r.name, func(t *testing.T) {
			db := MustOpenDB(t, r.url(t))
			g := redisstore.NewGate(db, 10, time.Minute)
			counter := redisstore.NewRateCounter(db, 10, time.Minute)
			admit := func(acct string) {
				t.Helper()
				if _, err := g.Admit(ctx, simulator.Arrival{AccountID: acct, Real: now}); err != nil {
					t.Fatal(err)
				}
			}
			admit("a")
			admit("a")
			if err := counter.Reset(ctx, "a"); err != nil {
				t.Fatal(err)
			}
			admit("a")
			admit("a")
			admit("b")
			if err := counter.ResetAll(ctx); err != nil {
				t.Fatal(err)
			}
			for _, acct := range []string{"a", "b"} {
				if n, err := counter.Count(ctx, acct, now); err != nil || n != 0 {
					t.Errorf("Count(%q) after ResetAll = %d, %v; want 0", acct, n, err)
				}
			}
		})
	}
}
