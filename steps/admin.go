package steps

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// adminClient calls the simulator's control API (its own listener, bearer
// token, JSON). Only @simulator scenarios and the pacer use it, and only when
// Config names it.
type adminClient struct {
	base   string
	token  string
	client *http.Client
}

// do sends one control request; in, when not nil, is the JSON body, and out,
// when not nil, receives the JSON answer.
func (a *adminClient) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("encode control request: %w", err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(a.base, "/")+path, body)
	if err != nil {
		return fmt.Errorf("build control request %s %s: %w", method, path, err)
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := a.client.Do(req)
	if err != nil {
		return fmt.Errorf("%w: control API %s %s: %w%s", ErrConnection, method, path, err, tlsHint(err))
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return fmt.Errorf("read control answer %s %s: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("control API %s %s: status %d: %s", method, path, resp.StatusCode, strings.TrimSpace(string(b)))
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("decode control answer %s %s: %w", method, path, err)
		}
	}
	return nil
}

// reset returns the simulator to its start state (contacts, counters,
// faults, clock).
func (a *adminClient) reset(ctx context.Context) error {
	return a.do(ctx, http.MethodPost, "/reset", struct{}{}, nil)
}

// resetRate clears one account's rate counter.
func (a *adminClient) resetRate(ctx context.Context, accountID string) error {
	return a.do(ctx, http.MethodPost, "/rate-limit/reset", map[string]string{"accountId": accountID}, nil)
}

// advance moves the simulator's clock forward, so a rate-limit window passes
// without waiting.
func (a *adminClient) advance(ctx context.Context, d time.Duration) error {
	return a.do(ctx, http.MethodPost, "/clock", map[string]string{"advance": d.String()}, nil)
}

// fail makes the next count requests of operation answer 500.
func (a *adminClient) fail(ctx context.Context, operation string, count int) error {
	return a.do(ctx, http.MethodPost, "/faults", map[string]any{"operation": operation, "kind": "error", "count": count}, nil)
}

// contacts lists the contacts stored for an account.
func (a *adminClient) contacts(ctx context.Context, accountID string) ([]map[string]any, error) {
	var out struct {
		Contacts []map[string]any `json:"contacts"`
	}
	err := a.do(ctx, http.MethodGet, "/contacts?accountId="+accountID, nil, &out)
	return out.Contacts, err
}

// rateConfig reads the simulator's rate limit and window.
func (a *adminClient) rateConfig(ctx context.Context) (int, time.Duration, error) {
	var out struct {
		RateLimit  int    `json:"rateLimit"`
		RateWindow string `json:"rateWindow"`
	}
	if err := a.do(ctx, http.MethodGet, "/config", nil, &out); err != nil {
		return 0, 0, err
	}
	w, err := time.ParseDuration(out.RateWindow)
	if err != nil {
		return 0, 0, fmt.Errorf("control API /config: rateWindow %q: %w", out.RateWindow, err)
	}
	return out.RateLimit, w, nil
}
