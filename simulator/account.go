// Package simulator holds the domain of the Partner Contact and Campaign
// Service, API v3: accounts, contacts, campaigns and their statistics, the
// application error type and the spec's messages, and the interfaces of the
// stores and the rate counter that the backends (inmem, redisstore)
// implement. It imports nothing but the standard library.
package simulator

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// Account is a partner's credentials (spec §5): the key and secret issued on
// registration and the encrypted account identifier that must accompany them.
type Account struct {
	APIKey    string `json:"apiKey"`
	APISecret string `json:"apiSecret"`
	AccountID string `json:"accountId"`
	Name      string `json:"name,omitempty"`
}

// AccountStore finds the account that owns a set of credentials.
type AccountStore interface {
	// Authenticate returns the account whose key and secret both match.
	// Returns EUNAUTHORIZED (MsgInvalidCredentials) when none does.
	// Implementations compare in constant time.
	Authenticate(ctx context.Context, apiKey, apiSecret string) (*Account, error)

	// Accounts returns every account, in a stable order.
	Accounts(ctx context.Context) ([]*Account, error)
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
