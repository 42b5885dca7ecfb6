// Package control is the suite's client of the simulator's control API (its
// own listener, a bearer token, JSON bodies). The runner uses it to reset
// the simulator and learn its limits, the pacer to reset a spent budget, and
// the @simulator scenarios to inject faults and read stored contacts. A
// foreign target has no control API: the runner then has no Client.
package control

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/partner-v3/conformance-kit/steps/internal/mask"
)

// ErrUnreachable wraps a control request that got no HTTP answer at all.
var ErrUnreachable = errors.New("control API unreachable")

// Client calls one simulator's control API.
type Client struct {
	// BaseURL is the control API's address, e.g. https://127.0.0.1:8444.
	BaseURL string
	// Token is its bearer token.
	Token string
	// HTTP sends the requests. Required.
	HTTP *http.Client
	// Secrets hides the run's secrets (its token among them) in the errors
	// the client returns, which quote the control API's answers and end up
	// in reports. May be nil.
	Secrets *mask.Secrets
}

// do sends one control request; in, when not nil, is the JSON body, and out,
// when not nil, receives the JSON answer.
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("encode control request: %w", err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(c.BaseURL, "/")+path, body)
	if err != nil {
		return fmt.Errorf("build control request %s %s: %w", method, path, err)
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %s %s: %w", ErrUnreachable, method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return fmt.Errorf("read control answer %s %s: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("control API %s %s: status %d: %s", method, path, resp.StatusCode, c.Secrets.String(strings.TrimSpace(string(b))))
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("decode control answer %s %s: %w", method, path, err)
		}
	}
	return nil
}

// Reset returns the simulator to its start state (contacts, counters,
// faults, clock).
func (c *Client) Reset(ctx context.Context) error {
	return c.do(ctx, http.MethodPost, "/reset", struct{}{}, nil)
}

// ResetRate clears one account's rate counter.
func (c *Client) ResetRate(ctx context.Context, accountID string) error {
	return c.do(ctx, http.MethodPost, "/rate-limit/reset", map[string]string{"accountId": accountID}, nil)
}

// Advance moves one account's clock forward, so its rate-limit window
// passes without waiting; other accounts' clocks, which other runs sharing
// the simulator may rely on, stay where they are.
func (c *Client) Advance(ctx context.Context, accountID string, d time.Duration) error {
	return c.do(ctx, http.MethodPost, "/clock", map[string]string{"accountId": accountID, "advance": d.String()}, nil)
}

// Fail makes the next count requests of operation by accountID answer
// 500; another account's requests (another run's) are not touched.
func (c *Client) Fail(ctx context.Context, accountID, operation string, count int) error {
	return c.do(ctx, http.MethodPost, "/faults", map[string]any{"accountId": accountID, "operation": operation, "kind": "error", "count": count}, nil)
}

// Account is a throwaway account's credentials (spec §5).
type Account struct {
	APIKey    string `json:"apiKey"`
	APISecret string `json:"apiSecret"`
	AccountID string `json:"accountId"`
}

// CreateAccount makes a throwaway account with the simulator's own seed
// and campaign count.
func (c *Client) CreateAccount(ctx context.Context, name string) (Account, error) {
	var a Account
	err := c.do(ctx, http.MethodPost, "/accounts", map[string]string{"name": name}, &a)
	return a, err
}

// DeleteAccount removes a throwaway account with everything it left: its
// contacts, budget and faults.
func (c *Client) DeleteAccount(ctx context.Context, accountID string) error {
	return c.do(ctx, http.MethodDelete, "/accounts/"+url.PathEscape(accountID), nil, nil)
}

// Contacts lists the contacts stored for an account.
func (c *Client) Contacts(ctx context.Context, accountID string) ([]map[string]any, error) {
	var out struct {
		Contacts []map[string]any `json:"contacts"`
	}
	err := c.do(ctx, http.MethodGet, "/contacts?accountId="+url.QueryEscape(accountID), nil, &out)
	return out.Contacts, err
}

// RateConfig reads the simulator's rate limit and window.
func (c *Client) RateConfig(ctx context.Context) (int, time.Duration, error) {
	var out struct {
		RateLimit  int    `json:"rateLimit"`
		RateWindow string `json:"rateWindow"`
	}
	if err := c.do(ctx, http.MethodGet, "/config", nil, &out); err != nil {
		return 0, 0, err
	}
	w, err := time.ParseDuration(out.RateWindow)
	if err != nil {
		return 0, 0, fmt.Errorf("control API /config: rateWindow %q: %w", out.RateWindow, err)
	}
	return out.RateLimit, w, nil
}
