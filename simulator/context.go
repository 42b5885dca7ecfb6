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
