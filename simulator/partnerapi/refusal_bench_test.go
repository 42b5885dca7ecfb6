package partnerapi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/internal/apitest"
	"github.com/partner-v3/conformance-kit/simulator/sim"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// BenchmarkRefusal measures a request refused before it authenticated
// (spec §5 rule 1: 401) on a simulator that keeps many throwaway accounts,
// as parallel CI jobs leave them: the journal and the client report
// attribute the refusal to the account its x-api-key or x-account-id names
// (GET /journal?accountId=), and that lookup must not grow with the number
// of accounts. In memory, and on the Redis of SIM_REDIS_ADDR (skipped when
// it is not set).
//
//	go test -run '^$' -bench BenchmarkRefusal -benchtime=2s ./simulator/partnerapi
func BenchmarkRefusal(b *testing.B) {
	backends := []struct{ name, url string }{{"inmem", ""}}
	if addr := os.Getenv("SIM_REDIS_ADDR"); addr != "" {
		backends = append(backends, struct{ name, url string }{"redis", "redis://" + addr + "/0"})
	}
	for _, be := range backends {
		for _, n := range []int{0, 10000} {
			b.Run(fmt.Sprintf("%s/accounts=%d", be.name, n), func(b *testing.B) {
				s, last := newRefusalSim(b, be.url, n)
				h := s.Handler()
				cases := []struct {
					name              string
					key, secret, acct string
				}{
					// Nobody's key, a throwaway account's identifier (the
					// newest, or a configured one when there is none): the
					// refusal is attributed by the identifier.
					{"unknown-key", "key-nobody-has", "wrong", last.AccountID},
					// An account's key with a wrong secret: attributed by
					// the key.
					{"wrong-secret", last.APIKey, "wrong", last.AccountID},
				}
				for _, c := range cases {
					b.Run(c.name, func(b *testing.B) {
						b.ReportAllocs()
						for b.Loop() {
							req := httptest.NewRequest(http.MethodPost, spec.BasePath+"/"+spec.PathCampaignList, strings.NewReader(`{"limit":1,"page":1}`))
							apitest.SetCredentials(req.Header, &simulator.Account{APIKey: c.key, APISecret: c.secret, AccountID: c.acct})
							w := httptest.NewRecorder()
							h.ServeHTTP(w, req)
							if w.Code != http.StatusUnauthorized {
								b.Fatalf("status %d, want 401: %s", w.Code, w.Body)
							}
						}
					})
				}
			})
		}
	}
}

// newRefusalSim is a simulator on redisURL ("" in memory) with n throwaway
// accounts made straight in its registry, and the newest of them (the
// first configured account when n is 0).
func newRefusalSim(b *testing.B, redisURL string, n int) (*sim.Simulator, *simulator.Account) {
	b.Helper()
	cfg := sim.Config{Addr: "127.0.0.1:0", Insecure: true, DataDir: b.TempDir(), RateLimit: 1 << 30,
		CampaignsPerAccount: 1, RedisURL: redisURL}
	if redisURL != "" {
		cfg.RedisPrefix = fmt.Sprintf("simbench:refusal:%d:", time.Now().UnixNano())
	}
	s, err := sim.New(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		s.Close()
		if redisURL != "" {
			deletePrefix(b, redisURL, cfg.RedisPrefix)
		}
	})
	last := s.Accounts[0]
	for i := range n {
		a, err := simulator.NewThrowawayAccount(simulator.AccountSpec{Name: fmt.Sprint("job ", i)}, s.Registry.AccountDefaults(), time.Now())
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Registry.CreateAccount(context.Background(), a); err != nil {
			b.Fatal(err)
		}
		last = &a.Account
	}
	return s, last
}

// deletePrefix removes the keys under prefix from the Redis at url.
func deletePrefix(tb testing.TB, url, prefix string) {
	tb.Helper()
	opts, err := redis.ParseURL(url)
	if err != nil {
		tb.Fatal(err)
	}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	ctx := context.Background()
	iter := rdb.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	var keys []string
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		tb.Error(err)
	}
	if len(keys) > 0 {
		if err := rdb.Del(ctx, keys...).Err(); err != nil {
			tb.Error(err)
		}
	}
}
