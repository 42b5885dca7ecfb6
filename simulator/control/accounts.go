package control

import (
	"context"
	"net/http"

	"github.com/partner-v3/conformance-kit/simulator"
)

// CreateAccount calls POST /accounts: a throwaway account with credentials
// of its own (spec §5), its own rate budget (spec §8) and its own
// campaigns. The answer is the only time its secret is shown. Returns a
// 400 *Error naming the field for a spec the control API refuses.
func (c *Client) CreateAccount(ctx context.Context, spec simulator.AccountSpec) (*simulator.CreatedAccount, error) {
	var out simulator.CreatedAccount
	if _, err := c.do(ctx, request{method: http.MethodPost, path: "/accounts", in: spec}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Accounts calls GET /accounts: the configured accounts, then the
// throwaway ones, oldest first.
func (c *Client) Accounts(ctx context.Context) ([]simulator.AccountInfo, error) {
	var out AccountsResponse
	if _, err := c.do(ctx, request{method: http.MethodGet, path: "/accounts"}, &out); err != nil {
		return nil, err
	}
	list := make([]simulator.AccountInfo, 0, len(out.Accounts))
	for _, a := range out.Accounts {
		if a != nil {
			list = append(list, *a)
		}
	}
	return list, nil
}

// Account calls GET /accounts/{accountID}. Returns a 404 *Error for an
// unknown account.
func (c *Client) Account(ctx context.Context, accountID string) (*simulator.AccountInfo, error) {
	var out simulator.AccountInfo
	if _, err := c.do(ctx, request{method: http.MethodGet, path: accountPath(accountID, "")}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteAccount calls DELETE /accounts/{accountID}: the throwaway account
// and everything it left (contacts, rate budget, faults, report state) go;
// its credentials answer 401 at once. Returns a 404 *Error for an unknown
// account and a 409 one for a configured account, which cannot be deleted.
func (c *Client) DeleteAccount(ctx context.Context, accountID string) error {
	_, err := c.do(ctx, request{method: http.MethodDelete, path: accountPath(accountID, "")}, nil)
	return err
}

// Report calls GET /accounts/{accountID}/report: what the simulator saw
// the account's client do, judged against the spec. Returns a 404 *Error
// for an unknown account.
func (c *Client) Report(ctx context.Context, accountID string) (*simulator.ClientReport, error) {
	var out simulator.ClientReport
	if _, err := c.do(ctx, request{method: http.MethodGet, path: accountPath(accountID, "/report")}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ReportMarkdown is Report as Markdown (Accept: text/markdown), to print
// in a test's log or a CI summary.
func (c *Client) ReportMarkdown(ctx context.Context, accountID string) (string, error) {
	b, err := c.do(ctx, request{method: http.MethodGet, path: accountPath(accountID, "/report"),
		header: map[string]string{"Accept": "text/markdown"}}, nil)
	return string(b), err
}
