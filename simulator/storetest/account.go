package storetest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// configuredAccounts are the accounts file of the registry tests.
var configuredAccounts = []*simulator.Account{
	{APIKey: "key-alpha", APISecret: "secret-alpha", AccountID: "acc_alpha", Name: "Alpha"},
	{APIKey: "key-bravo", APISecret: "secret-bravo", AccountID: "acc_bravo"},
}

var registryDefaults = simulator.AccountDefaults{Seed: 42, Campaigns: 7}

// newThrowaway makes a throwaway account with the registry defaults.
func newThrowaway(t *testing.T, name string) *simulator.CreatedAccount {
	t.Helper()
	a, err := simulator.NewThrowawayAccount(simulator.AccountSpec{Name: name}, registryDefaults, t0)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func mustCreate(t *testing.T, r simulator.AccountRegistry, a *simulator.CreatedAccount) {
	t.Helper()
	if err := r.CreateAccount(context.Background(), a); err != nil {
		t.Fatalf("CreateAccount(%s): %v", a.AccountID, err)
	}
}

// mustCountThrowaway checks CountThrowawayAccounts: the configured accounts are
// never counted.
func mustCountThrowaway(t *testing.T, r simulator.AccountRegistry, want int) {
	t.Helper()
	got, err := r.CountThrowawayAccounts(context.Background())
	if err != nil {
		t.Fatalf("CountThrowawayAccounts: %v", err)
	}
	if got != want {
		t.Fatalf("CountThrowawayAccounts = %d, want %d", got, want)
	}
}

func listedIDs(t *testing.T, r simulator.AccountRegistry) []string {
	t.Helper()
	ctx := context.Background()
	infos, err := r.ListAccounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	accounts, err := r.Accounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i, a := range infos {
		ids = append(ids, a.AccountID)
		if i >= len(accounts) || accounts[i].AccountID != a.AccountID {
			t.Fatalf("ListAccounts and Accounts disagree at %d: %v", i, a.AccountID)
		}
	}
	if len(accounts) != len(infos) {
		t.Fatalf("Accounts lists %d accounts, ListAccounts %d", len(accounts), len(infos))
	}
	return ids
}

// testAccounts is the contract of simulator.AccountRegistry (issue 12).
func testAccounts(t *testing.T, open func(t *testing.T) Backend) {
	registry := func(t *testing.T) simulator.AccountRegistry {
		b := open(t)
		if b.NewAccounts == nil {
			t.Skip("the backend has no account registry")
		}
		return b.NewAccounts(configuredAccounts, registryDefaults)
	}
	ctx := context.Background()

	t.Run("a created account authenticates with its key and secret only", func(t *testing.T) {
		r := registry(t)
		a := newThrowaway(t, "job 1")
		mustCreate(t, r, a)
		got, err := r.Authenticate(ctx, a.APIKey, a.APISecret)
		if err != nil {
			t.Fatalf("Authenticate: %v", err)
		}
		if got.AccountID != a.AccountID || got.APIKey != a.APIKey || got.Name != "job 1" {
			t.Fatalf("Authenticate = %+v, want %+v", got, a.Account)
		}
		for _, c := range []struct{ key, secret string }{
			{a.APIKey, a.APISecret + "x"},
			{a.APIKey, ""},
			{a.APIKey, configuredAccounts[0].APISecret},
			{configuredAccounts[0].APIKey, a.APISecret},
			{a.APIKey + "x", a.APISecret},
		} {
			if _, err := r.Authenticate(ctx, c.key, c.secret); simulator.ErrorCode(err) != simulator.EUNAUTHORIZED ||
				simulator.ErrorMessage(err) != spec.MsgInvalidCredentials {
				t.Fatalf("Authenticate(%q, %q) = %v, want EUNAUTHORIZED %q", c.key, c.secret, err, spec.MsgInvalidCredentials)
			}
		}
		// The configured accounts still authenticate.
		for _, c := range configuredAccounts {
			if got, err := r.Authenticate(ctx, c.APIKey, c.APISecret); err != nil || got.AccountID != c.AccountID {
				t.Fatalf("Authenticate(configured %s) = %v, %v", c.AccountID, got, err)
			}
		}
	})

	t.Run("accounts list the configured ones first, then the throwaway ones oldest first", func(t *testing.T) {
		r := registry(t)
		if got, want := listedIDs(t, r), []string{"acc_alpha", "acc_bravo"}; !slices.Equal(got, want) {
			t.Fatalf("listed %v, want %v", got, want)
		}
		var want = []string{"acc_alpha", "acc_bravo"}
		for i := range 3 {
			a := newThrowaway(t, fmt.Sprint("job ", i))
			mustCreate(t, r, a)
			want = append(want, a.AccountID)
		}
		if got := listedIDs(t, r); !slices.Equal(got, want) {
			t.Fatalf("listed %v, want %v", got, want)
		}
		all, err := r.Accounts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// Accounts carries the secrets (the violation layer compares them).
		if all[2].APISecret == "" {
			t.Fatalf("Accounts lost a throwaway account's secret: %+v", all[2])
		}
	})

	t.Run("find answers both kinds and ENOTFOUND for an unknown id", func(t *testing.T) {
		r := registry(t)
		a := newThrowaway(t, "job")
		mustCreate(t, r, a)
		got, err := r.FindAccount(ctx, a.AccountID)
		if err != nil {
			t.Fatal(err)
		}
		want := a.Info()
		if got.AccountID != want.AccountID || got.APIKey != want.APIKey || got.Name != want.Name || !got.Throwaway ||
			got.Seed != want.Seed || got.Campaigns != want.Campaigns || !got.CreatedAt.Equal(want.CreatedAt) {
			t.Fatalf("FindAccount = %+v, want %+v", got, want)
		}
		c, err := r.FindAccount(ctx, "acc_alpha")
		if err != nil {
			t.Fatal(err)
		}
		if c.Throwaway || c.Name != "Alpha" || c.Seed != registryDefaults.Seed || c.Campaigns != registryDefaults.Campaigns || !c.CreatedAt.IsZero() {
			t.Fatalf("FindAccount(configured) = %+v", c)
		}
		if _, err := r.FindAccount(ctx, "acc_tmp_nobody"); simulator.ErrorCode(err) != simulator.ENOTFOUND {
			t.Fatalf("FindAccount(unknown) = %v, want ENOTFOUND", err)
		}
		if got := r.AccountDefaults(); got != registryDefaults {
			t.Fatalf("AccountDefaults = %+v, want %+v", got, registryDefaults)
		}
	})

	t.Run("a deleted account is refused, gone from the list, and deleted once", func(t *testing.T) {
		r := registry(t)
		a, b := newThrowaway(t, "a"), newThrowaway(t, "b")
		mustCountThrowaway(t, r, 0)
		mustCreate(t, r, a)
		mustCreate(t, r, b)
		mustCountThrowaway(t, r, 2)
		if err := r.DeleteAccount(ctx, a.AccountID); err != nil {
			t.Fatalf("DeleteAccount: %v", err)
		}
		mustCountThrowaway(t, r, 1)
		if _, err := r.Authenticate(ctx, a.APIKey, a.APISecret); simulator.ErrorCode(err) != simulator.EUNAUTHORIZED {
			t.Fatalf("Authenticate after delete = %v, want EUNAUTHORIZED", err)
		}
		if _, err := r.FindAccount(ctx, a.AccountID); simulator.ErrorCode(err) != simulator.ENOTFOUND {
			t.Fatalf("FindAccount after delete = %v, want ENOTFOUND", err)
		}
		if err := r.DeleteAccount(ctx, a.AccountID); simulator.ErrorCode(err) != simulator.ENOTFOUND {
			t.Fatalf("second DeleteAccount = %v, want ENOTFOUND", err)
		}
		if got, want := listedIDs(t, r), []string{"acc_alpha", "acc_bravo", b.AccountID}; !slices.Equal(got, want) {
			t.Fatalf("listed %v, want %v", got, want)
		}
		// The other one is untouched.
		if _, err := r.Authenticate(ctx, b.APIKey, b.APISecret); err != nil {
			t.Fatalf("Authenticate(other) after delete: %v", err)
		}
	})

	t.Run("a configured account cannot be deleted", func(t *testing.T) {
		r := registry(t)
		err := r.DeleteAccount(ctx, "acc_alpha")
		if got, want := simulator.ErrorMessage(err), "Account acc_alpha is configured (accounts file), not throwaway: it cannot be deleted"; simulator.ErrorCode(err) != simulator.ECONFLICT || got != want {
			t.Fatalf("DeleteAccount(configured) = %v, want ECONFLICT %q", err, want)
		}
		if _, err := r.Authenticate(ctx, "key-alpha", "secret-alpha"); err != nil {
			t.Fatalf("the configured account stopped authenticating: %v", err)
		}
	})

	t.Run("a taken key or id is refused and changes nothing", func(t *testing.T) {
		r := registry(t)
		a := newThrowaway(t, "first")
		mustCreate(t, r, a)
		tests := []struct {
			name   string
			change func(c *simulator.CreatedAccount)
		}{
			{"the same account again", func(*simulator.CreatedAccount) {}},
			{"another throwaway account's key", func(c *simulator.CreatedAccount) { c.AccountID += "2" }},
			{"another throwaway account's id", func(c *simulator.CreatedAccount) { c.APIKey += "2" }},
			{"a configured account's key", func(c *simulator.CreatedAccount) { c.AccountID += "3"; c.APIKey = "key-bravo" }},
			{"a configured account's id", func(c *simulator.CreatedAccount) { c.APIKey += "3"; c.AccountID = "acc_bravo" }},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				c := *a
				c.APISecret = "another-secret"
				tt.change(&c)
				if err := r.CreateAccount(ctx, &c); simulator.ErrorCode(err) != simulator.ECONFLICT {
					t.Fatalf("CreateAccount = %v, want ECONFLICT", err)
				}
				if got, want := listedIDs(t, r), []string{"acc_alpha", "acc_bravo", a.AccountID}; !slices.Equal(got, want) {
					t.Fatalf("listed %v, want %v", got, want)
				}
				if _, err := r.Authenticate(ctx, c.APIKey, "another-secret"); err == nil {
					t.Fatal("the refused account's secret authenticates")
				}
			})
		}
	})

	t.Run("concurrent creates all land, and one account is created once", func(t *testing.T) {
		r := registry(t)
		const n = 16
		made := make([]*simulator.CreatedAccount, n)
		for i := range made {
			made[i] = newThrowaway(t, fmt.Sprint("job ", i))
		}
		same := newThrowaway(t, "same")
		var wg sync.WaitGroup
		var mu sync.Mutex
		errs := make([]error, 0, n)
		var sameOK int
		for i := range n {
			wg.Add(2)
			go func() {
				defer wg.Done()
				if err := r.CreateAccount(ctx, made[i]); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}()
			go func() {
				defer wg.Done()
				c := *same
				err := r.CreateAccount(ctx, &c)
				mu.Lock()
				defer mu.Unlock()
				if err == nil {
					sameOK++
				} else if simulator.ErrorCode(err) != simulator.ECONFLICT {
					errs = append(errs, err)
				}
			}()
		}
		wg.Wait()
		if len(errs) > 0 {
			t.Fatalf("concurrent creates failed: %v", errs)
		}
		if sameOK != 1 {
			t.Fatalf("one account created concurrently %d times succeeded %d times, want 1", n, sameOK)
		}
		ids := listedIDs(t, r)
		if len(ids) != 2+n+1 {
			t.Fatalf("%d accounts listed, want %d", len(ids), 2+n+1)
		}
		for _, a := range append(made, same) {
			if _, err := r.Authenticate(ctx, a.APIKey, a.APISecret); err != nil {
				t.Fatalf("Authenticate(%s): %v", a.AccountID, err)
			}
		}
	})

	t.Run("a lookup names an account by its key first, then by its identifier, without its secret", func(t *testing.T) {
		r := registry(t)
		a, b := newThrowaway(t, "a"), newThrowaway(t, "b")
		mustCreate(t, r, a)
		mustCreate(t, r, b)
		alpha, bravo := configuredAccounts[0], configuredAccounts[1]
		tests := []struct {
			name       string
			keys, ids  []string
			want       string // "" for ENOTFOUND
			wantSecret string
		}{
			{"a configured key", []string{alpha.APIKey}, nil, alpha.AccountID, alpha.APISecret},
			{"a throwaway key", []string{a.APIKey}, nil, a.AccountID, a.APISecret},
			{"a configured identifier", nil, []string{bravo.AccountID}, bravo.AccountID, bravo.APISecret},
			{"a throwaway identifier", nil, []string{b.AccountID}, b.AccountID, b.APISecret},
			{"a key before an identifier", []string{a.APIKey}, []string{alpha.AccountID}, a.AccountID, a.APISecret},
			{"a configured key before a throwaway identifier", []string{bravo.APIKey}, []string{a.AccountID}, bravo.AccountID, bravo.APISecret},
			{"an unknown key, then an identifier", []string{"key-nobody"}, []string{b.AccountID}, b.AccountID, b.APISecret},
			{"the first key that names one, in the order given", []string{"key-nobody", b.APIKey, alpha.APIKey}, nil, b.AccountID, b.APISecret},
			{"a throwaway key before a configured one", []string{a.APIKey, alpha.APIKey}, nil, a.AccountID, a.APISecret},
			{"an identifier is not a key", []string{alpha.AccountID, a.AccountID}, nil, "", ""},
			{"a key is not an identifier", nil, []string{alpha.APIKey, a.APIKey}, "", ""},
			{"nothing known", []string{"key-nobody"}, []string{"acc_nobody"}, "", ""},
			{"empty values", []string{""}, []string{""}, "", ""},
			{"nothing given", nil, nil, "", ""},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, err := r.LookupAccount(ctx, simulator.AccountLookup{APIKeys: tt.keys, AccountIDs: tt.ids})
				if tt.want == "" {
					if simulator.ErrorCode(err) != simulator.ENOTFOUND {
						t.Fatalf("LookupAccount = %+v, %v, want ENOTFOUND", got, err)
					}
					return
				}
				if err != nil {
					t.Fatalf("LookupAccount: %v", err)
				}
				if got.AccountID != tt.want || got.APISecret != tt.wantSecret {
					t.Fatalf("LookupAccount = %s (secret %q), want %s (secret %q)", got.AccountID, got.APISecret, tt.want, tt.wantSecret)
				}
			})
		}
		if err := r.DeleteAccount(ctx, a.AccountID); err != nil {
			t.Fatal(err)
		}
		for _, l := range []simulator.AccountLookup{{APIKeys: []string{a.APIKey}}, {AccountIDs: []string{a.AccountID}}} {
			if got, err := r.LookupAccount(ctx, l); simulator.ErrorCode(err) != simulator.ENOTFOUND {
				t.Fatalf("LookupAccount(%+v) of a deleted account = %+v, %v, want ENOTFOUND", l, got, err)
			}
		}
	})

	t.Run("a store that cannot look answers an internal error, never that the credentials are wrong", func(t *testing.T) {
		b := open(t)
		if b.NewAccounts == nil {
			t.Skip("the backend has no account registry")
		}
		if b.Outage == nil {
			t.Skip("the backend has no state it could lose: its every answer is about the credentials")
		}
		r := b.NewAccounts(configuredAccounts, registryDefaults)
		a := newThrowaway(t, "before the outage")
		mustCreate(t, r, a)
		b.Outage(t)
		alpha := configuredAccounts[0]
		// Each call must fail with an internal error (spec §7's 500):
		// EUNAUTHORIZED would be a 401 (§5 rule 1), ENOTFOUND or
		// ECONFLICT an answer the store could not know.
		internal := []struct {
			name string
			call func() error
		}{
			{"Authenticate with a throwaway account's credentials", func() error {
				_, err := r.Authenticate(ctx, a.APIKey, a.APISecret)
				return err
			}},
			{"Authenticate with a throwaway key and a wrong secret", func() error {
				_, err := r.Authenticate(ctx, a.APIKey, "wrong")
				return err
			}},
			{"Authenticate with a key no account has", func() error {
				_, err := r.Authenticate(ctx, "key-nobody", "secret")
				return err
			}},
			{"LookupAccount of a throwaway key", func() error {
				_, err := r.LookupAccount(ctx, simulator.AccountLookup{APIKeys: []string{a.APIKey}})
				return err
			}},
			{"LookupAccount of an unknown key and identifier", func() error {
				_, err := r.LookupAccount(ctx, simulator.AccountLookup{APIKeys: []string{"key-nobody"}, AccountIDs: []string{"acc_nobody"}})
				return err
			}},
			{"FindAccount of a throwaway account", func() error {
				_, err := r.FindAccount(ctx, a.AccountID)
				return err
			}},
			{"FindAccount of an unknown identifier", func() error {
				_, err := r.FindAccount(ctx, "acc_tmp_nobody")
				return err
			}},
			{"DeleteAccount of a throwaway account", func() error { return r.DeleteAccount(ctx, a.AccountID) }},
			{"CreateAccount", func() error { return r.CreateAccount(ctx, newThrowaway(t, "during the outage")) }},
			{"ListAccounts", func() error {
				_, err := r.ListAccounts(ctx)
				return err
			}},
			{"Accounts", func() error {
				_, err := r.Accounts(ctx)
				return err
			}},
			{"CountThrowawayAccounts", func() error {
				_, err := r.CountThrowawayAccounts(ctx)
				return err
			}},
		}
		for _, c := range internal {
			if err := c.call(); err == nil || simulator.ErrorCode(err) != simulator.EINTERNAL {
				t.Errorf("%s during the outage = %v (code %q), want an internal error", c.name, err, simulator.ErrorCode(err))
			}
		}
		// A configured account's right credentials are not wrong, whether
		// the store answers them or fails.
		if _, err := r.Authenticate(ctx, alpha.APIKey, alpha.APISecret); err != nil && simulator.ErrorCode(err) != simulator.EINTERNAL {
			t.Errorf("Authenticate(configured) during the outage = %v, want the account or an internal error", err)
		}
		if got, err := r.LookupAccount(ctx, simulator.AccountLookup{AccountIDs: []string{alpha.AccountID}}); err != nil && simulator.ErrorCode(err) != simulator.EINTERNAL ||
			err == nil && got.AccountID != alpha.AccountID {
			t.Errorf("LookupAccount(configured) during the outage = %+v, %v, want the account or an internal error", got, err)
		}
	})

	t.Run("a created account keeps its creation time", func(t *testing.T) {
		r := registry(t)
		a := newThrowaway(t, "timed")
		a.CreatedAt = time.Date(2026, 5, 6, 7, 8, 9, 123000000, time.UTC)
		mustCreate(t, r, a)
		got, err := r.FindAccount(ctx, a.AccountID)
		if err != nil {
			t.Fatal(err)
		}
		if !got.CreatedAt.Equal(a.CreatedAt) {
			t.Fatalf("CreatedAt = %v, want %v", got.CreatedAt, a.CreatedAt)
		}
	})
}
