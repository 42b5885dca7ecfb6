package control

import "github.com/partner-v3/conformance-kit/simulator"

// Credentials are the three values of spec §5 a partner sends with every
// request (x-api-key, x-api-secret, x-account-id): what a runner or a
// partner's test holds of an account. CreateAccount's answer carries them
// for a throwaway account (CredentialsOf), simtest's and container's
// Accounts for the configured ones.
type Credentials struct {
	APIKey    string
	APISecret string
	AccountID string
}

// IsZero reports whether no credential is set.
func (c Credentials) IsZero() bool { return c == Credentials{} }

// Complete reports whether all three credentials are set.
func (c Credentials) Complete() bool {
	return c.APIKey != "" && c.APISecret != "" && c.AccountID != ""
}

// CredentialsOf returns a's credentials: those of a configured account
// (simtest's Accounts) or of a throwaway one (CreateAccount's answer's
// Account).
func CredentialsOf(a simulator.Account) Credentials {
	return Credentials{APIKey: a.APIKey, APISecret: a.APISecret, AccountID: a.AccountID}
}
