package simulator

import "context"

type contextKey int

const accountContextKey = contextKey(iota + 1)

// NewContextWithAccount returns a copy of ctx carrying the authenticated
// account.
func NewContextWithAccount(ctx context.Context, a *Account) context.Context {
	return context.WithValue(ctx, accountContextKey, a)
}

// AccountFromContext returns the authenticated account, or nil when the
// request was not authenticated.
func AccountFromContext(ctx context.Context) *Account {
	a, _ := ctx.Value(accountContextKey).(*Account)
	return a
}

// IsAccountKey reports whether key is the one AccountFromContext asks a
// context's Value for. A context type that keeps the account in a state of
// its own (the server's one state value per request, filled in place
// rather than layered with NewContextWithAccount and a copy of the
// request) answers that key with the *Account.
func IsAccountKey(key any) bool { return key == accountContextKey }
