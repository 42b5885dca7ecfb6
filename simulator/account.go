// Package simulator holds the domain of the Partner Contact and Campaign
// Service, API v3: accounts, contacts, campaigns and their statistics, the
// application error type and the simulator's own messages, and the
// interfaces of the stores and the rate counter that the backends (inmem,
// redisstore) implement. It imports nothing but the standard library and
// simulator/spec, where the spec's messages, paths and limits are stated.
package simulator

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"time"
	"unicode/utf8"
)

// Account is a partner's credentials (spec §5): the key and secret issued on
// registration and the encrypted account identifier that must accompany them.
type Account struct {
	APIKey    string `json:"apiKey"`
	APISecret string `json:"apiSecret"`
	AccountID string `json:"accountId"`
	Name      string `json:"name,omitempty"`
	// ProfileDigest names the deployment profile a throwaway account
	// plays (issue 20), stored once under it (AccountRegistry.StoreProfile);
	// empty for an account that plays the simulator's own.
	ProfileDigest string `json:"profileDigest,omitempty"`
}

// AccountStore finds the account that owns a set of credentials.
//
// EUNAUTHORIZED and ENOTFOUND are answers: the store looked and found no
// such account. A store that cannot look (its shared state is down)
// returns any other error, which the server answers 500 "Internal server
// error" (spec §7), whatever the credentials: never 401, which spec §5
// keeps for a wrong key or secret.
type AccountStore interface {
	// Authenticate returns the account whose key and secret both match.
	// Returns EUNAUTHORIZED (spec.MsgInvalidCredentials) when none does,
	// and only then. Implementations compare in constant time.
	Authenticate(ctx context.Context, apiKey, apiSecret string) (*Account, error)

	// LookupAccount returns the account that credentials name, without
	// proving them (the secret is not compared): the account whose key is
	// the first of l.APIKeys that is an account's key, else the one whose
	// identifier is the first of l.AccountIDs that is an account's. Empty
	// strings name nothing. Returns ENOTFOUND when nothing names an
	// account. Its cost does not grow with the number of accounts.
	LookupAccount(ctx context.Context, l AccountLookup) (*Account, error)

	// Accounts returns every account, in a stable order.
	Accounts(ctx context.Context) ([]*Account, error)
}

// AccountLookup is what LookupAccount looks an account up by: the values
// of a request's x-api-key and x-account-id headers (spec §5), each sent
// once or more.
type AccountLookup struct {
	APIKeys    []string
	AccountIDs []string
}

// NoSuchAccount is the ENOTFOUND of a LookupAccount that named no account.
func NoSuchAccount() *Error {
	return &Error{Code: ENOTFOUND, Message: "No account has that key or identifier"}
}

// ReadAccounts decodes and validates an accounts file: a JSON array of
// objects with apiKey, apiSecret, accountId and an optional name. Keys and
// account identifiers must be unique, and no field may be empty.
func ReadAccounts(r io.Reader) ([]*Account, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var accounts []*Account
	if err := dec.Decode(&accounts); err != nil {
		return nil, fmt.Errorf("decode accounts: %w", err)
	}
	if len(accounts) == 0 {
		return nil, fmt.Errorf("decode accounts: the file holds no account")
	}
	keys := make(map[string]bool)
	ids := make(map[string]bool)
	for i, a := range accounts {
		if a == nil {
			return nil, fmt.Errorf("account %d: null", i)
		}
		switch {
		case a.APIKey == "":
			return nil, fmt.Errorf("account %d: apiKey is empty", i)
		case a.APISecret == "":
			return nil, fmt.Errorf("account %d: apiSecret is empty", i)
		case a.AccountID == "":
			return nil, fmt.Errorf("account %d: accountId is empty", i)
		case keys[a.APIKey]:
			return nil, fmt.Errorf("account %d: apiKey is used by an earlier account", i)
		case ids[a.AccountID]:
			return nil, fmt.Errorf("account %d: accountId %q is used by an earlier account", i, a.AccountID)
		case a.ProfileDigest != "":
			// Only POST /accounts stores a profile for an account to name.
			return nil, fmt.Errorf("account %d: profileDigest is set by the control API's POST /accounts only", i)
		}
		keys[a.APIKey], ids[a.AccountID] = true, true
	}
	return accounts, nil
}

// AccountSpec is what the control API's POST /accounts takes to make a
// throwaway account; every field is optional.
type AccountSpec struct {
	// Name is shown in the journal and the reports. Empty means none.
	Name string `json:"name,omitempty"`
	// Campaigns is how many campaigns are generated for the account. Nil
	// means the simulator's own count (--campaigns); 0 means none.
	Campaigns *int `json:"campaigns,omitempty"`
	// Seed drives the account's generated campaigns. Zero means the
	// simulator's own seed (--seed).
	Seed int64 `json:"seed,omitempty"`
	// Profile is a deployment profile (simulator/profile's file format)
	// the account plays instead of the simulator's (issue 20). Empty
	// means the simulator's own.
	Profile json.RawMessage `json:"profile,omitempty"`
}

// CreatedAccount is a throwaway account: the credentials of spec §5 the
// control API issued, and what its campaigns were generated from. The
// secret is shown only in the answer to POST /accounts.
type CreatedAccount struct {
	Account
	Seed      int64     `json:"seed"`
	Campaigns int       `json:"campaigns"`
	CreatedAt time.Time `json:"createdAt"`
}

// Budget is an account's standing against the rate limit of spec §8, as the
// control API's GET /accounts/{accountId}/budget reports it, at the
// simulator's clock.
type Budget struct {
	AccountID string `json:"accountId"`
	Limit     int    `json:"limit"`
	// Window is a Go duration, e.g. "1m0s".
	Window string `json:"window"`
	// Used is the number of requests counted in the window; Remaining is
	// Limit-Used, never below zero.
	Used      int `json:"used"`
	Remaining int `json:"remaining"`
}

// ECONFLICT is the code of a control API call that the state refuses
// (409): a configured account cannot be deleted, a throwaway account's
// key or identifier is already used.
const ECONFLICT = "conflict"

// Throwaway credentials (issue 12): the control API's POST /accounts makes
// them from crypto/rand, with these prefixes, so a log or a journal tells
// a throwaway account at a glance.
const (
	ThrowawayIDPrefix     = "acc_tmp_"    // + 22 base64url characters (128 bits)
	ThrowawayKeyPrefix    = "tmp-key-"    // + 24 hex digits (96 bits)
	ThrowawaySecretPrefix = "tmp-secret-" // + 32 hex digits (128 bits)
)

// Bounds of an AccountSpec: enough for any test, small enough that a bad
// spec cannot make a replica generate millions of campaigns.
const (
	MaxAccountCampaigns   = 10000
	MaxAccountNameBytes   = 200
	maxAccountNameMessage = "name must be valid UTF-8 of at most 200 bytes"
)

// AccountDefaults are what the configured accounts' campaigns were
// generated from (--seed, --campaigns), and what a throwaway account gets
// when its AccountSpec leaves Seed or Campaigns out.
type AccountDefaults struct {
	Seed      int64
	Campaigns int
}

// Validate reports the first field of s out of bounds, as an EINVALID
// naming it.
func (s AccountSpec) Validate() error {
	switch {
	case len(s.Name) > MaxAccountNameBytes || !utf8.ValidString(s.Name):
		return Errorf(EINVALID, "Control API: %s", maxAccountNameMessage)
	case s.Campaigns != nil && (*s.Campaigns < 0 || *s.Campaigns > MaxAccountCampaigns):
		return Errorf(EINVALID, "Control API: campaigns must be a whole number from 0 to %d", MaxAccountCampaigns)
	}
	return nil
}

// NewThrowawayAccount validates spec and makes a throwaway account of it,
// with new random credentials and the defaults d for what spec leaves out,
// created at now. Returns EINVALID for a bad spec.
func NewThrowawayAccount(spec AccountSpec, d AccountDefaults, now time.Time) (*CreatedAccount, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	var id [16]byte
	var key [12]byte
	var secret [16]byte
	for _, b := range [][]byte{id[:], key[:], secret[:]} {
		if _, err := rand.Read(b); err != nil {
			return nil, fmt.Errorf("new throwaway account: %w", err)
		}
	}
	a := &CreatedAccount{
		Account: Account{
			// 16 bytes are 22 base64url characters without padding.
			AccountID: ThrowawayIDPrefix + base64.RawURLEncoding.EncodeToString(id[:]),
			APIKey:    ThrowawayKeyPrefix + hex.EncodeToString(key[:]),
			APISecret: ThrowawaySecretPrefix + hex.EncodeToString(secret[:]),
			Name:      spec.Name,
		},
		Seed:      cmp.Or(spec.Seed, d.Seed),
		Campaigns: d.Campaigns,
		CreatedAt: now.UTC(),
	}
	if spec.Campaigns != nil {
		a.Campaigns = *spec.Campaigns
	}
	return a, nil
}

// AccountInfo is one account as the control API lists it (GET /accounts,
// GET /accounts/{accountId}): never the secret.
type AccountInfo struct {
	AccountID string `json:"accountId"`
	APIKey    string `json:"apiKey"`
	Name      string `json:"name"`
	// Throwaway is false for an account of the accounts file.
	Throwaway bool `json:"throwaway"`
	// Seed and Campaigns drive the account's generated campaigns; for a
	// configured account they are the simulator's --seed and --campaigns
	// (with --campaigns-file, what a throwaway account would get).
	Seed      int64 `json:"seed"`
	Campaigns int   `json:"campaigns"`
	// CreatedAt is when a throwaway account was made; absent for a
	// configured one, which every replica loads at its own start.
	CreatedAt time.Time `json:"createdAt,omitzero"`
	// ProfileDigest names the profile a throwaway account plays (issue
	// 20); absent when it plays the simulator's.
	ProfileDigest string `json:"profileDigest,omitempty"`
}

// Info returns a's listing: a throwaway account without its secret.
func (a *CreatedAccount) Info() *AccountInfo {
	return &AccountInfo{AccountID: a.AccountID, APIKey: a.APIKey, Name: a.Name, Throwaway: true,
		Seed: a.Seed, Campaigns: a.Campaigns, CreatedAt: a.CreatedAt, ProfileDigest: a.ProfileDigest}
}

// ConfiguredInfo returns the listing of a configured account a.
func ConfiguredInfo(a *Account, d AccountDefaults) *AccountInfo {
	return &AccountInfo{AccountID: a.AccountID, APIKey: a.APIKey, Name: a.Name, Seed: d.Seed, Campaigns: d.Campaigns}
}

// AccountRegistry is an AccountStore that also keeps throwaway accounts
// (issue 12), made and deleted through the control API, beside the
// configured ones (the accounts file), which it never changes.
// Authenticate, LookupAccount and Accounts cover both kinds; Accounts
// lists the configured accounts first, then the throwaway ones oldest
// first.
type AccountRegistry interface {
	AccountStore

	// AccountDefaults returns the defaults the registry was made with.
	AccountDefaults() AccountDefaults

	// CreateAccount stores a throwaway account, whose every field the
	// caller set (NewThrowawayAccount). Returns ECONFLICT when its key or
	// identifier is already an account's.
	CreateAccount(ctx context.Context, a *CreatedAccount) error

	// FindAccount returns the account with that identifier, configured or
	// throwaway. Returns ENOTFOUND when there is none.
	FindAccount(ctx context.Context, accountID string) (*AccountInfo, error)

	// ListAccounts returns every account as Accounts orders them.
	ListAccounts(ctx context.Context) ([]*AccountInfo, error)

	// CountThrowawayAccounts returns how many throwaway accounts exist,
	// at a cost that does not grow with them (the metrics read it at
	// every scrape).
	CountThrowawayAccounts(ctx context.Context) (int, error)

	// DeleteAccount removes a throwaway account: its credentials answer
	// EUNAUTHORIZED from then on. Returns ENOTFOUND when there is no such
	// account and ECONFLICT (ConfiguredAccount) for a configured one.
	DeleteAccount(ctx context.Context, accountID string) error

	// StoreProfile keeps a deployment profile's bytes under its digest
	// (issue 20), for every replica sharing the registry: accounts name
	// it by ProfileDigest. Storing the same digest again changes nothing.
	StoreProfile(ctx context.Context, digest string, data []byte) error

	// FindProfile returns the bytes stored under digest. Returns ENOTFOUND
	// when there are none.
	FindProfile(ctx context.Context, digest string) ([]byte, error)
}

// NotFoundAccount is the ENOTFOUND of an unknown account identifier.
func NotFoundAccount(accountID string) *Error {
	return Errorf(ENOTFOUND, "No account %s", accountID)
}

// ConfiguredAccount is the ECONFLICT of deleting a configured account.
func ConfiguredAccount(accountID string) *Error {
	return Errorf(ECONFLICT, "Account %s is configured (accounts file), not throwaway: it cannot be deleted", accountID)
}

// MatchAccount returns the account of accounts whose key and secret both
// match, or nil. It compares with every account in constant time, so the
// time taken tells nothing about which part was wrong or how much of it
// matched.
func MatchAccount(accounts []*Account, apiKey, apiSecret string) *Account {
	var found *Account
	for _, a := range accounts {
		k := subtle.ConstantTimeCompare([]byte(a.APIKey), []byte(apiKey))
		p := subtle.ConstantTimeCompare([]byte(a.APISecret), []byte(apiSecret))
		if k&p == 1 && found == nil {
			found = a
		}
	}
	return found
}
