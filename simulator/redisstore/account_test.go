package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/redisstore"
)

// roundTripStore is a store on miniredis with one configured account
// (key-a, secret-a, acc_a) and one throwaway account, and a hook that
// counts the round trips made after it.
func roundTripStore(t *testing.T) (*redisstore.AccountStore, *simulator.CreatedAccount, *redisstore.RoundTrips) {
	t.Helper()
	db := MustOpenDB(t, "redis://"+miniredis.RunT(t).Addr()+"/0")
	configured := []*simulator.Account{{APIKey: "key-a", APISecret: "secret-a", AccountID: "acc_a"}}
	s := redisstore.NewAccountStore(db, configured, simulator.AccountDefaults{Seed: 1, Campaigns: 2})
	tmp, err := simulator.NewThrowawayAccount(simulator.AccountSpec{}, s.AccountDefaults(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateAccount(context.Background(), tmp); err != nil {
		t.Fatal(err)
	}
	hook := &redisstore.RoundTrips{}
	db.AddHook(hook)
	return s, tmp, hook
}

// TestAccountStore_RoundTrips: a configured account authenticates in
// memory, without a round trip (issue 10's one round trip per request
// stays); a throwaway or unknown key costs one lookup.
func TestAccountStore_RoundTrips(t *testing.T) {
	ctx := context.Background()
	s, tmp, hook := roundTripStore(t)

	tests := []struct {
		name        string
		key, secret string
		ok          bool
		roundTrips  int64
	}{
		{"a configured account costs none", "key-a", "secret-a", true, 0},
		// No throwaway account has a configured key: a wrong secret is
		// known wrong in memory, so it answers 401 while Redis is down.
		{"a configured key with a wrong secret costs none", "key-a", "wrong", false, 0},
		{"a throwaway account costs one lookup", tmp.APIKey, tmp.APISecret, true, 1},
		{"a throwaway key with a wrong secret costs one lookup", tmp.APIKey, "wrong", false, 1},
		{"an unknown key costs one lookup", "nobody", "secret-a", false, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := hook.Count()
			_, err := s.Authenticate(ctx, tt.key, tt.secret)
			if got := err == nil; got != tt.ok {
				t.Fatalf("Authenticate ok = %v (%v), want %v", got, err, tt.ok)
			}
			if got := hook.Count() - before; got != tt.roundTrips {
				t.Fatalf("%d round trips, want %d", got, tt.roundTrips)
			}
		})
	}
}

// TestAccountStore_LookupRoundTrips: naming a refused request's account
// (simulator.AccountStore.LookupAccount) costs no round trip for a
// configured account's key or identifier, and one (both hashes, HMGET)
// for any other, however many keys and identifiers the request sent:
// never a read of the whole registry.
func TestAccountStore_LookupRoundTrips(t *testing.T) {
	ctx := context.Background()
	s, tmp, hook := roundTripStore(t)
	tests := []struct {
		name       string
		lookup     simulator.AccountLookup
		want       string
		roundTrips int64
	}{
		{"a configured key costs none", simulator.AccountLookup{APIKeys: []string{"key-a"}, AccountIDs: []string{tmp.AccountID}}, "acc_a", 0},
		{"a configured identifier costs none", simulator.AccountLookup{AccountIDs: []string{"acc_a"}}, "acc_a", 0},
		{"a throwaway key costs one", simulator.AccountLookup{APIKeys: []string{tmp.APIKey}}, tmp.AccountID, 1},
		{"unknown keys and a throwaway identifier cost one", simulator.AccountLookup{APIKeys: []string{"k1", "k2"}, AccountIDs: []string{"x", tmp.AccountID}}, tmp.AccountID, 1},
		{"an unknown key before a configured identifier costs one", simulator.AccountLookup{APIKeys: []string{"k1"}, AccountIDs: []string{"acc_a"}}, "acc_a", 1},
		{"nothing known costs one", simulator.AccountLookup{APIKeys: []string{"k1"}, AccountIDs: []string{"x"}}, "", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := hook.Count()
			a, err := s.LookupAccount(ctx, tt.lookup)
			got := ""
			if err == nil {
				got = a.AccountID
			} else if simulator.ErrorCode(err) != simulator.ENOTFOUND {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("LookupAccount = %q, want %q", got, tt.want)
			}
			if n := hook.Count() - before; n != tt.roundTrips {
				t.Fatalf("%d round trips, want %d", n, tt.roundTrips)
			}
		})
	}
}

// TestAccountStore_Replicas: two stores on one Redis and prefix (two
// replicas) share the throwaway accounts, each with its own copy of the
// configured ones.
func TestAccountStore_Replicas(t *testing.T) {
	ctx := context.Background()
	url := "redis://" + miniredis.RunT(t).Addr() + "/0"
	db := MustOpenDB(t, url)
	other := redisstore.NewDB(url)
	other.Prefix = db.Prefix
	if err := other.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	d := simulator.AccountDefaults{Seed: 1, Campaigns: 2}
	a, b := redisstore.NewAccountStore(db, nil, d), redisstore.NewAccountStore(other, nil, d)
	tmp, err := simulator.NewThrowawayAccount(simulator.AccountSpec{Name: "shared"}, d, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := a.CreateAccount(ctx, tmp); err != nil {
		t.Fatal(err)
	}
	if got, err := b.Authenticate(ctx, tmp.APIKey, tmp.APISecret); err != nil || got.AccountID != tmp.AccountID {
		t.Fatalf("the other replica: Authenticate = %v, %v", got, err)
	}
	if err := b.DeleteAccount(ctx, tmp.AccountID); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Authenticate(ctx, tmp.APIKey, tmp.APISecret); simulator.ErrorCode(err) != simulator.EUNAUTHORIZED {
		t.Fatalf("deleted through the other replica: Authenticate = %v, want EUNAUTHORIZED", err)
	}
}
