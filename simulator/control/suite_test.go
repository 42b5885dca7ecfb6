package control_test

// What the conformance suite needs of the client besides every call (its
// runs share a simulator through their own accounts, and its errors end up
// in reports): one account's clock, errors that hide secrets, an error that
// says no answer came, one credentials type.

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/simulator/simtest"
)

// One account's clock moves its rate-limit window (spec §8) alone.
func TestAccountClock(t *testing.T) {
	t.Parallel()
	s := simtest.New(t, simtest.WithRateLimit(1, time.Hour))
	c, ctx := s.Control, context.Background()
	alpha, bravo := s.Accounts[0], s.Accounts[1]
	for _, a := range []simulator.Account{alpha, bravo} {
		list(t, s, a)
		if got := list(t, s, a); got != http.StatusTooManyRequests {
			t.Fatalf("%s: second request %d, want 429", a.AccountID, got)
		}
	}

	adv, err := c.AdvanceAccountClock(ctx, alpha.AccountID, time.Hour+time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if adv.AccountID != alpha.AccountID || adv.AccountOffset != time.Hour+time.Second || adv.Offset != 0 {
		t.Fatalf("AdvanceAccountClock = %+v: want alpha's offset of 1h0m1s on a real-time simulator", adv)
	}
	if got := list(t, s, alpha); got != http.StatusOK {
		t.Errorf("alpha after its window: %d, want 200", got)
	}
	if got := list(t, s, bravo); got != http.StatusTooManyRequests {
		t.Errorf("bravo, whose clock did not move: %d, want still 429", got)
	}

	got, err := c.AccountClock(ctx, alpha.AccountID)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Until(got.Now) - adv.AccountOffset; got.AccountOffset != adv.AccountOffset || d < -5*time.Second || d > time.Second {
		t.Errorf("AccountClock = %+v: want now plus alpha's offset", got)
	}
	sim, err := c.Clock(ctx)
	if err != nil || sim.AccountID != "" || sim.AccountOffset != 0 || time.Since(sim.Now) > 5*time.Second {
		t.Errorf("Clock = %+v, %v: want the simulator's, unmoved", sim, err)
	}

	back, err := c.ResetAccountClock(ctx, alpha.AccountID)
	if err != nil || back.AccountOffset != 0 || back.AccountID != alpha.AccountID {
		t.Fatalf("ResetAccountClock = %+v, %v: want alpha's offset gone", back, err)
	}
	if _, err := c.AccountClock(ctx, "acc_none"); !control.IsNotFound(err) {
		t.Errorf("AccountClock(unknown): %v, want 404", err)
	}
	if _, err := c.AdvanceAccountClock(ctx, "acc_none", time.Second); !control.IsNotFound(err) {
		t.Errorf("AdvanceAccountClock(unknown): %v, want 404", err)
	}
}

// Redact rewrites every error the client returns, the answer it quotes
// included, and errors.As and errors.Is still see through it.
func TestRedact(t *testing.T) {
	t.Parallel()
	s := simtest.New(t)
	ctx := context.Background()
	const secret = "acc_secret_value_42"
	hide := func(text string) string { return strings.ReplaceAll(text, secret, "****") }
	c := &control.Client{BaseURL: s.AdminURL, Token: s.AdminToken, HTTP: s.HTTPClient(), Redact: hide}

	// The 404 quotes the unknown account id it was given.
	_, err := c.Account(ctx, secret)
	var cerr *control.Error
	if !errors.As(err, &cerr) || cerr.Status != http.StatusNotFound || !control.IsNotFound(err) {
		t.Fatalf("Account(unknown): %v, want a 404 *control.Error", err)
	}
	if strings.Contains(err.Error(), secret) || strings.Contains(cerr.Message, secret) {
		t.Errorf("error %q (message %q) shows the secret", err, cerr.Message)
	}
	if !strings.Contains(err.Error(), "****") || !strings.HasPrefix(err.Error(), "control: GET /accounts/") {
		t.Errorf("error %q: want the call and the redacted id", err)
	}

	// Without Redact, the same error shows it: the test above can fail.
	if _, err := s.Control.Account(ctx, secret); !strings.Contains(err.Error(), secret) {
		t.Fatalf("unredacted error %q does not quote the id", err)
	}

	// A transport error quoting the address is redacted too.
	down := &control.Client{BaseURL: "https://127.0.0.1:1/" + secret, Token: "x", HTTP: s.HTTPClient(), Redact: hide}
	err = down.Reset(ctx)
	if !errors.Is(err, control.ErrUnreachable) || strings.Contains(err.Error(), secret) {
		t.Errorf("Reset of nothing: %v, want ErrUnreachable with the secret hidden", err)
	}
}

// ErrUnreachable tells "no answer" from an answer, even a 5xx.
func TestErrUnreachable(t *testing.T) {
	t.Parallel()
	s := simtest.New(t)
	ctx := context.Background()

	down := &control.Client{BaseURL: "https://127.0.0.1:1", Token: "x", HTTP: s.HTTPClient()}
	if err := down.Reset(ctx); !errors.Is(err, control.ErrUnreachable) || !strings.HasPrefix(err.Error(), "control: POST /reset: unreachable: ") {
		t.Errorf("Reset of nothing: %v, want ErrUnreachable naming the call", err)
	}
	// A TLS failure (a client that does not trust the simulator) is no
	// answer either.
	untrusting := &control.Client{BaseURL: s.AdminURL, Token: s.AdminToken, HTTP: &http.Client{}}
	if _, err := untrusting.Config(ctx); !errors.Is(err, control.ErrUnreachable) {
		t.Errorf("Config over an untrusted certificate: %v, want ErrUnreachable", err)
	}
	// An answer, even an error, is not.
	bad := &control.Client{BaseURL: s.AdminURL, Token: "wrong", HTTP: s.HTTPClient()}
	if err := bad.Reset(ctx); err == nil || errors.Is(err, control.ErrUnreachable) {
		t.Errorf("Reset with a wrong token: %v, want a 401 that is not ErrUnreachable", err)
	}
	if _, err := s.Control.DeleteFault(ctx, "flt_none"); errors.Is(err, control.ErrUnreachable) {
		t.Errorf("DeleteFault of no fault: %v, want a 404 that is not ErrUnreachable", err)
	}
}

// The credentials of a throwaway account, as the suite holds them, work
// against the partner API (spec §5).
func TestCredentials(t *testing.T) {
	t.Parallel()
	s := simtest.New(t)
	created, err := s.Control.CreateAccount(context.Background(), simulator.AccountSpec{Name: "credentials"})
	if err != nil {
		t.Fatal(err)
	}
	cred := control.CredentialsOf(created.Account)
	if !cred.Complete() || cred.IsZero() || cred.APISecret != created.APISecret || cred.AccountID != created.AccountID || cred.APIKey != created.APIKey {
		t.Fatalf("CredentialsOf(%+v) = %+v", created.Account, cred)
	}
	acc := simulator.Account{APIKey: cred.APIKey, APISecret: cred.APISecret, AccountID: cred.AccountID}
	if got := list(t, s, acc); got != http.StatusOK {
		t.Errorf("campaign/list with the credentials: %d, want 200", got)
	}

	tests := []struct {
		name           string
		c              control.Credentials
		zero, complete bool
	}{
		{"none", control.Credentials{}, true, false},
		{"no secret", control.Credentials{APIKey: "k", AccountID: "a"}, false, false},
		{"all three", control.Credentials{APIKey: "k", APISecret: "s", AccountID: "a"}, false, true},
	}
	for _, tt := range tests {
		if tt.c.IsZero() != tt.zero || tt.c.Complete() != tt.complete {
			t.Errorf("%s: IsZero %v, Complete %v; want %v, %v", tt.name, tt.c.IsZero(), tt.c.Complete(), tt.zero, tt.complete)
		}
	}
}

// FaultSpec.Request sends only the fields a spec sets: the control API
// refuses a kind's field on another kind.
func TestFaultSpecRequest(t *testing.T) {
	t.Parallel()
	r := control.FaultSpec{Operation: "*", Kind: simulator.FaultRateLimit, RetryAfter: 1500 * time.Millisecond}.Request()
	if r.Status != nil || r.Delay != nil || r.Count != nil || r.AccountID != nil || r.Probability != nil || r.RetryAfter == nil || *r.RetryAfter != 2 {
		t.Errorf("Request = %+v: want retryAfter 2 (rounded up) and nothing else", r)
	}
}
