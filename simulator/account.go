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
