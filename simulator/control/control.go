// Package control is a typed client of the simulator's control API: the
// listener of its own (--admin-addr), never under the partner base path of
// spec §1, where a test resets the simulator, moves its clock, injects
// faults, reads the journal of the requests it saw and makes throwaway
// accounts. Every call sends "Authorization: Bearer <Token>" and JSON.
//
// A non-2xx answer is returned as a *Error (use errors.As), wrapped with the
// call: "control: POST /faults: 400 kind must be one of ..."; no answer at
// all wraps ErrUnreachable. The bodies are this package's wire types
// (wire.go) and the domain types of package simulator, the very ones the
// server (simulator/controlapi) decodes and answers.
//
// It imports only the simulator package and the standard library, so a
// partner's test can use it against any running simulator: in-process
// (simulator/simtest), in a container (simulator/container) or a shared
// one. The conformance runner uses it too.
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
	"strconv"
	"strings"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
)

// maxAnswerBytes bounds what is read of one answer: a journal of 1000
// entries is a few hundred kilobytes.
const maxAnswerBytes = 16 << 20

// Client calls one simulator's control API. Its methods are safe for
// concurrent use.
type Client struct {
	// BaseURL is the control API's address, e.g. https://127.0.0.1:8444.
	BaseURL string
	// Token is the control API's bearer token (--admin-token).
	Token string
	// HTTP sends the requests. May be nil. If nil, http.DefaultClient,
	// which does not trust a simulator's self-signed certificate: give a
	// client that does (simtest's and container's HTTPClient).
	HTTP *http.Client
	// Redact, when set, rewrites the text of every error the client
	// returns, the control API's answer quoted in it included (an
	// *Error's Message too), so that a secret it holds (the token, an
	// account's credentials the answer echoes) never reaches a log or a
	// report. May be nil: errors are returned as they are. errors.Is and
	// errors.As still see through a redacted error.
	Redact func(string) string
}

// redactedError is an error whose text Client.Redact rewrote.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// redact applies c.Redact to err.
func (c *Client) redact(err error) error {
	if err == nil || c.Redact == nil {
		return err
	}
	if msg := c.Redact(err.Error()); msg != err.Error() {
		return &redactedError{msg: msg, err: err}
	}
	return err
}

// ErrUnreachable is wrapped by the error of a call that got no HTTP answer
// at all: the connection was refused or cut, TLS failed, the request timed
// out or its context ended. The simulator is down or not where BaseURL
// says; a simulator that answered, even 500, gives an *Error instead. Test
// with errors.Is.
var ErrUnreachable = errors.New("unreachable")

// Error is a non-2xx answer of the control API.
type Error struct {
	// Status is the HTTP status, e.g. 404.
	Status int
	// Message is the answer's {"error": "..."}, or its body as text when
	// it has no such field.
	Message string
}

// Error implements error.
func (e *Error) Error() string { return fmt.Sprintf("%d %s", e.Status, e.Message) }

// IsNotFound reports whether err is a control API 404 (an unknown account
// or fault).
func IsNotFound(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == http.StatusNotFound
}

// request is one control call.
type request struct {
	method, path string
	query        url.Values
	in           any               // JSON body when not nil
	header       map[string]string // extra request headers
}

// do sends r and decodes a 2xx JSON answer into out (when not nil); it
// returns the raw answer too.
func (c *Client) do(ctx context.Context, r request, out any) ([]byte, error) {
	b, err := c.send(ctx, r, out)
	return b, c.redact(err)
}

func (c *Client) send(ctx context.Context, r request, out any) ([]byte, error) {
	wrap := func(err error) error { return fmt.Errorf("control: %s %s: %w", r.method, r.path, err) }
	var body io.Reader
	if r.in != nil {
		b, err := json.Marshal(r.in)
		if err != nil {
			return nil, wrap(fmt.Errorf("encode body: %w", err))
		}
		body = bytes.NewReader(b)
	}
	u := strings.TrimSuffix(c.BaseURL, "/") + r.path
	if len(r.query) > 0 {
		u += "?" + r.query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u, body)
	if err != nil {
		return nil, wrap(err)
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	req.Header.Set("Accept", "application/json")
	if r.in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range r.header {
		req.Header.Set(k, v)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, wrap(fmt.Errorf("%w: %w", ErrUnreachable, err))
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes))
	if err != nil {
		return nil, wrap(fmt.Errorf("read answer: %w", err))
	}
	if resp.StatusCode/100 != 2 {
		var e struct {
			Error string `json:"error"`
		}
		msg := strings.TrimSpace(string(b))
		if json.Unmarshal(b, &e) == nil && e.Error != "" {
			msg = e.Error
		}
		if c.Redact != nil {
			msg = c.Redact(msg)
		}
		return nil, wrap(&Error{Status: resp.StatusCode, Message: msg})
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return nil, wrap(fmt.Errorf("decode answer: %w", err))
		}
	}
	return b, nil
}

// Health calls GET /healthz, the one call that needs no token. Returns an
// *Error with status 503 when the simulator's backends are unusable.
func (c *Client) Health(ctx context.Context) error {
	_, err := c.do(ctx, request{method: http.MethodGet, path: "/healthz"}, nil)
	return err
}

// Reset calls POST /reset: every account's contacts, rate budget, faults
// and journal go, the clock returns to real time. Campaigns stay as
// seeded; so do throwaway accounts.
func (c *Client) Reset(ctx context.Context) error {
	_, err := c.do(ctx, request{method: http.MethodPost, path: "/reset"}, nil)
	return err
}

// Config is what GET /config (and GET /version) report, with the rate
// window as a time.Duration.
type Config struct {
	// RateLimit requests per RateWindow per account: spec §8's 100 per
	// minute unless the simulator was started with others.
	RateLimit  int
	RateWindow time.Duration
	// MaxBodyBytes is the request body cap; BasePath the spec §1 prefix.
	MaxBodyBytes int64
	BasePath     string
	// Version is the build's version ("dev" for a build without one).
	Version string
	// Violations are the deliberate breaches of the spec switched on; none
	// for a faithful simulator.
	Violations []string
	// Seed and CampaignsPerAccount generated the campaigns (zero with a
	// campaigns file); ContactsPerAccount fake contacts were seeded.
	Seed                int64
	CampaignsPerAccount int
	ContactsPerAccount  int
	// Profile names the deployment profile the simulator plays (issue
	// 20); zero from a simulator that reports none.
	Profile ProfileInfo
}

func (c *Client) config(ctx context.Context, path string) (*Config, error) {
	var out ConfigResponse
	if _, err := c.do(ctx, request{method: http.MethodGet, path: path}, &out); err != nil {
		return nil, err
	}
	window, err := time.ParseDuration(out.RateWindow)
	if err != nil {
		return nil, c.redact(fmt.Errorf("control: GET %s: rateWindow %q: %w", path, out.RateWindow, err))
	}
	cfg := &Config{RateLimit: out.RateLimit, RateWindow: window, MaxBodyBytes: out.MaxBodyBytes, BasePath: out.BasePath}
	if out.Profile != nil {
		cfg.Profile = *out.Profile
	}
	if b := out.BuildInfo; b != nil {
		cfg.Version, cfg.Violations, cfg.ContactsPerAccount = b.Version, b.Violations, b.ContactsPerAccount
		if b.Seed != nil {
			cfg.Seed = *b.Seed
		}
		if b.CampaignsPerAccount != nil {
			cfg.CampaignsPerAccount = *b.CampaignsPerAccount
		}
	}
	return cfg, nil
}

// Config calls GET /config.
func (c *Client) Config(ctx context.Context) (*Config, error) { return c.config(ctx, "/config") }

// Version calls GET /version and returns the build's version.
func (c *Client) Version(ctx context.Context) (string, error) {
	cfg, err := c.config(ctx, "/version")
	if err != nil {
		return "", err
	}
	return cfg.Version, nil
}

// Clock is the simulator's clock as the control API reports it: the time
// it judges rate-limit windows (spec §8) and timestamps by.
type Clock struct {
	// Now is the simulated time, to the millisecond: one account's when
	// AccountID is set.
	Now time.Time
	// Offset is how far the simulator's clock is from real time (while not
	// frozen).
	Offset time.Duration
	// Frozen reports whether the clock stands still at Now.
	Frozen bool
	// AccountID is set for one account's clock (AccountClock,
	// AdvanceAccountClock, ResetAccountClock), and AccountOffset is how far
	// that account's clock runs ahead of the simulator's.
	AccountID     string
	AccountOffset time.Duration
}

func (c *Client) clock(ctx context.Context, method string, query url.Values, in *ClockRequest) (Clock, error) {
	r := request{method: method, path: "/clock", query: query}
	if in != nil {
		r.in = in
	}
	var out ClockResponse
	if _, err := c.do(ctx, r, &out); err != nil {
		return Clock{}, err
	}
	clock := Clock{Now: out.Now.Time, Frozen: out.Frozen, AccountID: out.AccountID}
	for _, d := range []struct {
		name, v string
		dst     *time.Duration
	}{{"offset", out.Offset, &clock.Offset}, {"accountOffset", out.AccountOffset, &clock.AccountOffset}} {
		if d.v == "" {
			continue
		}
		v, err := time.ParseDuration(d.v)
		if err != nil {
			return Clock{}, c.redact(fmt.Errorf("control: %s /clock: %s %q: %w", method, d.name, d.v, err))
		}
		*d.dst = v
	}
	return clock, nil
}

// Clock calls GET /clock.
func (c *Client) Clock(ctx context.Context) (Clock, error) {
	return c.clock(ctx, http.MethodGet, nil, nil)
}

// AdvanceClock moves the clock forward by d (POST /clock {"advance"}), so
// a rate-limit window passes without waiting. d must be positive.
func (c *Client) AdvanceClock(ctx context.Context, d time.Duration) (Clock, error) {
	return c.clock(ctx, http.MethodPost, nil, &ClockRequest{Advance: d.String()})
}

// SetClock sets the clock to t (POST /clock {"set"}), to the millisecond;
// it keeps running from there unless frozen.
func (c *Client) SetClock(ctx context.Context, t time.Time) (Clock, error) {
	return c.clock(ctx, http.MethodPost, nil, &ClockRequest{Set: &simulator.Timestamp{Time: t}})
}

// FreezeClock stops the clock at its present time (frozen true) or lets it
// run again from where it stands (false).
func (c *Client) FreezeClock(ctx context.Context, frozen bool) (Clock, error) {
	return c.clock(ctx, http.MethodPost, nil, &ClockRequest{Freeze: &frozen})
}

// ResetClock returns the clock to real time, running.
func (c *Client) ResetClock(ctx context.Context) (Clock, error) {
	return c.clock(ctx, http.MethodPost, nil, &ClockRequest{Reset: true})
}

// AccountClock calls GET /clock?accountId=: the clock accountID's requests
// are counted and stamped by, the simulator's plus the account's own
// offset. Returns a 404 *Error for an unknown account.
func (c *Client) AccountClock(ctx context.Context, accountID string) (Clock, error) {
	return c.clock(ctx, http.MethodGet, url.Values{"accountId": {accountID}}, nil)
}

// AdvanceAccountClock moves accountID's clock alone forward by d (POST
// /clock {"accountId","advance"}): its rate-limit window (spec §8) passes
// while every other account's, which other runs sharing the simulator may
// rely on, stays where it was. d must be positive.
func (c *Client) AdvanceAccountClock(ctx context.Context, accountID string, d time.Duration) (Clock, error) {
	return c.clock(ctx, http.MethodPost, nil, &ClockRequest{AccountID: accountID, Advance: d.String()})
}

// ResetAccountClock forgets accountID's own offset: its clock is the
// simulator's again.
func (c *Client) ResetAccountClock(ctx context.Context, accountID string) (Clock, error) {
	return c.clock(ctx, http.MethodPost, nil, &ClockRequest{AccountID: accountID, Reset: true})
}

// ResetBudget clears accountID's rate counter (POST /rate-limit/reset), so
// its next 100 requests in the window are served again (spec §8); an
// empty accountID clears every account's.
func (c *Client) ResetBudget(ctx context.Context, accountID string) error {
	_, err := c.do(ctx, request{method: http.MethodPost, path: "/rate-limit/reset",
		in: &RateResetRequest{AccountID: accountID}}, nil)
	return err
}

// Budget calls GET /accounts/{accountID}/budget: the account's standing
// against the rate limit at the simulator's clock. Returns a 404 *Error
// for an unknown account.
func (c *Client) Budget(ctx context.Context, accountID string) (*simulator.Budget, error) {
	var out simulator.Budget
	if _, err := c.do(ctx, request{method: http.MethodGet, path: accountPath(accountID, "/budget")}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// JournalFilter selects journal entries. Zero fields select everything
// the control API gives by default.
type JournalFilter struct {
	// AccountID keeps the entries of that account only; empty means all.
	AccountID string
	// Limit is the most entries returned; 0 means the control API's
	// default (100).
	Limit int
}

// Journal calls GET /journal: the latest partner requests the simulator
// saw, newest first, with masked keys and no secrets.
func (c *Client) Journal(ctx context.Context, f JournalFilter) ([]simulator.JournalEntry, error) {
	q := url.Values{}
	if f.AccountID != "" {
		q.Set("accountId", f.AccountID)
	}
	if f.Limit > 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	var out JournalResponse
	if _, err := c.do(ctx, request{method: http.MethodGet, path: "/journal", query: q}, &out); err != nil {
		return nil, err
	}
	return out.Entries, nil
}

// JournalDetail calls GET /journal/{requestId}: one of the latest
// requests in full, headers and bodies, credentials masked. A request no
// longer kept (or never seen) is an *Error with status 404.
func (c *Client) JournalDetail(ctx context.Context, requestID string) (simulator.JournalDetail, error) {
	var out simulator.JournalDetail
	_, err := c.do(ctx, request{method: http.MethodGet, path: "/journal/" + url.PathEscape(requestID)}, &out)
	return out, err
}

// ClearJournal calls DELETE /journal.
func (c *Client) ClearJournal(ctx context.Context) error {
	_, err := c.do(ctx, request{method: http.MethodDelete, path: "/journal"}, nil)
	return err
}

// ContactFilter selects stored contacts.
type ContactFilter struct {
	// AccountID keeps one account's contacts; empty means every account's.
	AccountID string
	// Offset skips that many, oldest first. Limit is the most returned; 0
	// means the control API's default (100).
	Offset, Limit int
}

// Contacts calls GET /contacts: the stored contacts that match, oldest
// first, and how many match in all.
func (c *Client) Contacts(ctx context.Context, f ContactFilter) ([]*simulator.Contact, int, error) {
	q := url.Values{}
	if f.AccountID != "" {
		q.Set("accountId", f.AccountID)
	}
	if f.Offset > 0 {
		q.Set("offset", strconv.Itoa(f.Offset))
	}
	if f.Limit > 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	var out ContactsResponse
	if _, err := c.do(ctx, request{method: http.MethodGet, path: "/contacts", query: q}, &out); err != nil {
		return nil, 0, err
	}
	return out.Contacts, out.Total, nil
}

// accountPath is /accounts/{id} plus suffix, the id escaped.
func accountPath(accountID, suffix string) string {
	return "/accounts/" + url.PathEscape(accountID) + suffix
}
