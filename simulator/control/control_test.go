package control_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/simulator/internal/apitest"
	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/simulator/simtest"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// The tests run against a real simulator over HTTPS (sim.New on
// 127.0.0.1:0, through simtest). Those of the calls issue 12 adds
// (accounts, budget, report, the journal's account filter) are in
// accounts_test.go.

// partner sends one partner request (spec §4) as acc and returns the
// status.
func partner(t *testing.T, s *simtest.Simulator, acc simulator.Account, op, body string) int {
	t.Helper()
	status, _ := apitest.Post(t, s.HTTPClient(), s.URL, &acc, op, body)
	return status
}

func list(t *testing.T, s *simtest.Simulator, acc simulator.Account) int {
	t.Helper()
	return partner(t, s, acc, spec.PathCampaignList, `{"limit": 1, "page": 1}`)
}

func TestErrorIsTypedAndNamesTheCall(t *testing.T) {
	t.Parallel()
	s := simtest.New(t)
	ctx := context.Background()
	_, err := s.Control.InjectFault(ctx, control.FaultSpec{Operation: "nope", Kind: simulator.FaultError})
	var cerr *control.Error
	if !errors.As(err, &cerr) {
		t.Fatalf("InjectFault of an unknown operation: %v, want a *control.Error", err)
	}
	if cerr.Status != http.StatusBadRequest || !strings.HasPrefix(cerr.Message, "operation must be one of") {
		t.Errorf("error %+v, want 400 naming the operation field", cerr)
	}
	if !strings.HasPrefix(err.Error(), "control: POST /faults: 400 operation must be one of") {
		t.Errorf("error text %q does not name the call", err)
	}

	_, err = s.Control.DeleteFault(ctx, "flt_none")
	if !control.IsNotFound(err) {
		t.Errorf("DeleteFault of no fault: %v, want a 404", err)
	}

	bad := &control.Client{BaseURL: s.AdminURL, Token: "wrong", HTTP: s.HTTPClient()}
	if err := bad.Reset(ctx); !errors.As(err, &cerr) || cerr.Status != http.StatusUnauthorized {
		t.Errorf("Reset with a wrong token: %v, want a 401 *control.Error", err)
	}
	// Health needs no token.
	if err := bad.Health(ctx); err != nil {
		t.Errorf("Health with a wrong token: %v", err)
	}

	// No answer at all is no *control.Error.
	down := &control.Client{BaseURL: "https://127.0.0.1:1", Token: "x", HTTP: s.HTTPClient()}
	if err := down.Reset(ctx); err == nil || errors.As(err, &cerr) || !strings.HasPrefix(err.Error(), "control: POST /reset: ") {
		t.Errorf("Reset of nothing: %v, want a wrapped transport error", err)
	}
}

func TestConfigAndVersion(t *testing.T) {
	t.Parallel()
	s := simtest.New(t, simtest.WithSeed(11), simtest.WithCampaigns(4), simtest.WithContacts(1), simtest.WithRateLimit(7, 3*time.Second))
	ctx := context.Background()
	cfg, err := s.Control.Config(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := control.Config{RateLimit: 7, RateWindow: 3 * time.Second, BasePath: spec.BasePath, Version: "dev",
		Seed: 11, CampaignsPerAccount: 4, ContactsPerAccount: 1, Profile: defaultProfileInfo(t)}
	if cfg.MaxBodyBytes <= 0 || len(cfg.Violations) != 0 {
		t.Errorf("Config = %+v: want a body cap and no violation", cfg)
	}
	cfg.MaxBodyBytes, cfg.Violations = 0, nil
	if fmt.Sprint(*cfg) != fmt.Sprint(want) {
		t.Errorf("Config = %+v, want %+v", *cfg, want)
	}
	if v, err := s.Control.Version(ctx); err != nil || v != "dev" {
		t.Errorf("Version = %q, %v; want dev", v, err)
	}
}

func TestClock(t *testing.T) {
	t.Parallel()
	s := simtest.New(t)
	c, ctx := s.Control, context.Background()
	at := time.Date(2030, 1, 2, 3, 4, 5, 6_000_000, time.UTC)

	set, err := c.SetClock(ctx, at)
	if err != nil {
		t.Fatal(err)
	}
	if d := set.Now.Sub(at); d < 0 || d > 5*time.Second || set.Frozen {
		t.Fatalf("SetClock(%v) = %+v", at, set)
	}
	frozen, err := c.FreezeClock(ctx, true)
	if err != nil || !frozen.Frozen {
		t.Fatalf("FreezeClock(true) = %+v, %v", frozen, err)
	}
	adv, err := c.AdvanceClock(ctx, 61*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := adv.Now, frozen.Now.Add(61*time.Second); !got.Equal(want) || !adv.Frozen {
		t.Fatalf("AdvanceClock(61s) on a frozen clock: now %v, want %v", got, want)
	}
	if got, err := c.Clock(ctx); err != nil || !got.Now.Equal(adv.Now) {
		t.Fatalf("Clock = %+v, %v; want it still at %v", got, err, adv.Now)
	}
	running, err := c.FreezeClock(ctx, false)
	if err != nil || running.Frozen {
		t.Fatalf("FreezeClock(false) = %+v, %v", running, err)
	}
	real, err := c.ResetClock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(real.Now); real.Frozen || real.Offset != 0 || d < -time.Second || d > 5*time.Second {
		t.Fatalf("ResetClock = %+v, want real time", real)
	}
	if _, err := c.AdvanceClock(ctx, -time.Second); !strings.Contains(fmt.Sprint(err), "400 advance must be") {
		t.Errorf("AdvanceClock(-1s): %v, want a 400", err)
	}
}

// The rate limit of spec §8 is per account: ResetBudget gives one account
// its requests back and leaves the other's spent.
func TestResetBudget(t *testing.T) {
	t.Parallel()
	s := simtest.New(t, simtest.WithRateLimit(1, time.Hour))
	ctx := context.Background()
	alpha, bravo := s.Accounts[0], s.Accounts[1]
	for _, a := range []simulator.Account{alpha, bravo} {
		list(t, s, a)
		if got := list(t, s, a); got != http.StatusTooManyRequests {
			t.Fatalf("%s: second request %d, want 429", a.AccountID, got)
		}
	}
	if err := s.Control.ResetBudget(ctx, alpha.AccountID); err != nil {
		t.Fatal(err)
	}
	if got := list(t, s, alpha); got != http.StatusOK {
		t.Errorf("reset account: %d, want 200", got)
	}
	if got := list(t, s, bravo); got != http.StatusTooManyRequests {
		t.Errorf("other account: %d, want still 429", got)
	}
	if err := s.Control.ResetBudget(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if got := list(t, s, bravo); got != http.StatusOK {
		t.Errorf("after resetting every account: %d, want 200", got)
	}
}

func TestFaults(t *testing.T) {
	t.Parallel()
	s := simtest.New(t)
	c, ctx := s.Control, context.Background()
	alpha, bravo := s.Accounts[0], s.Accounts[1]

	tests := []struct {
		name string
		spec control.FaultSpec
		want simulator.Fault
	}{
		{"an error fault defaults to one 500 for every account",
			control.FaultSpec{Operation: spec.PathCampaignList, Kind: simulator.FaultError},
			simulator.Fault{Operation: spec.PathCampaignList, Kind: simulator.FaultError, Remaining: 1, Status: 500, Probability: 1}},
		{"a rate-limit fault keeps its Retry-After in whole seconds",
			control.FaultSpec{Operation: "*", Kind: simulator.FaultRateLimit, AccountID: alpha.AccountID, Count: 3, RetryAfter: 2500 * time.Millisecond},
			simulator.Fault{Operation: "*", Kind: simulator.FaultRateLimit, AccountID: alpha.AccountID, Remaining: 3, RetryAfter: 3 * time.Second, Probability: 1}},
		{"a delay fault keeps its delay and probability",
			control.FaultSpec{Operation: spec.PathContactAdd, Kind: simulator.FaultDelay, AccountID: bravo.AccountID, Delay: 1500 * time.Millisecond, Probability: 0.5},
			simulator.Fault{Operation: spec.PathContactAdd, Kind: simulator.FaultDelay, AccountID: bravo.AccountID, Remaining: 1, Delay: 1500 * time.Millisecond, Probability: 0.5}},
		{"an error fault takes another 5xx",
			control.FaultSpec{Operation: spec.PathCampaignStats, Kind: simulator.FaultError, AccountID: alpha.AccountID, Status: 502},
			simulator.Fault{Operation: spec.PathCampaignStats, Kind: simulator.FaultError, AccountID: alpha.AccountID, Remaining: 1, Status: 502, Probability: 1}},
	}
	var ids []string
	for _, tt := range tests {
		got, err := c.InjectFault(ctx, tt.spec)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if !strings.HasPrefix(got.ID, "flt_") {
			t.Errorf("%s: id %q", tt.name, got.ID)
		}
		ids = append(ids, got.ID)
		tt.want.ID = got.ID
		if *got != tt.want {
			t.Errorf("%s: stored %+v, want %+v", tt.name, *got, tt.want)
		}
	}

	all, err := c.Faults(ctx, "")
	if err != nil || len(all) != 4 || all[0].ID != ids[0] || all[3].ID != ids[3] {
		t.Fatalf("Faults(\"\") = %+v, %v; want the four, oldest first", all, err)
	}
	mine, err := c.Faults(ctx, alpha.AccountID)
	if err != nil || len(mine) != 2 || mine[0].ID != ids[1] || mine[1].ID != ids[3] {
		t.Fatalf("Faults(alpha) = %+v, %v; want alpha's two", mine, err)
	}

	// The injected 500 answers the first campaign/list of any account
	// (spec §7's 500), then is spent.
	if got := list(t, s, bravo); got != http.StatusInternalServerError {
		t.Errorf("first campaign/list: %d, want the injected 500", got)
	}
	if _, err := c.DeleteFault(ctx, ids[0]); !control.IsNotFound(err) {
		t.Errorf("DeleteFault of a spent fault: %v, want a 404", err)
	}

	deleted, err := c.DeleteFault(ctx, ids[2])
	if err != nil || deleted.ID != ids[2] || deleted.Delay != 1500*time.Millisecond {
		t.Fatalf("DeleteFault = %+v, %v; want the delay fault as it was", deleted, err)
	}
	if err := c.ClearFaults(ctx, alpha.AccountID); err != nil {
		t.Fatal(err)
	}
	if left, err := c.Faults(ctx, ""); err != nil || len(left) != 0 {
		t.Fatalf("after deleting bravo's and clearing alpha's: %+v, %v", left, err)
	}
	if _, err := c.InjectFault(ctx, control.FaultSpec{Operation: "*", Kind: simulator.FaultDrop}); err != nil {
		t.Fatal(err)
	}
	if err := c.ClearFaults(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if left, err := c.Faults(ctx, ""); err != nil || len(left) != 0 {
		t.Fatalf("after ClearFaults(\"\"): %+v, %v", left, err)
	}
}

func TestJournalContactsAndReset(t *testing.T) {
	t.Parallel()
	s := simtest.New(t)
	c, ctx := s.Control, context.Background()
	alpha := s.Accounts[0]
	for i := range 3 {
		if got := partner(t, s, alpha, spec.PathContactAdd, fmt.Sprintf(`{"email": "c%d@example.com"}`, i)); got != http.StatusOK {
			t.Fatalf("contact/add: %d", got)
		}
	}
	list(t, s, alpha)

	entries, err := c.Journal(ctx, control.JournalFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 4 || entries[0].Operation != spec.PathCampaignList || entries[1].Operation != spec.PathContactAdd {
		t.Fatalf("Journal = %+v, want four entries, newest first", entries)
	}
	e := entries[0]
	if e.Path != spec.BasePath+"/campaign/list" || e.Status != http.StatusOK || e.AccountID != alpha.AccountID || e.RequestID == "" || e.APIKey == alpha.APIKey {
		t.Errorf("newest entry %+v: want the request, its account, a masked key", e)
	}
	if two, err := c.Journal(ctx, control.JournalFilter{Limit: 2}); err != nil || len(two) != 2 || two[0].RequestID != e.RequestID {
		t.Errorf("Journal(limit 2) = %+v, %v", two, err)
	}
	// The newest request in full: its body as sent, the secret nowhere.
	d, err := c.JournalDetail(ctx, entries[1].RequestID)
	if err != nil || d.Entry == nil || d.Entry.RequestID != entries[1].RequestID || !strings.Contains(d.Request.Body, "c2@example.com") ||
		d.Answer.Body == "" || strings.Contains(fmt.Sprint(d), alpha.APISecret) {
		t.Errorf("JournalDetail(%s) = %+v, %v; want the contact/add in full, no secret", entries[1].RequestID, d, err)
	}
	var ce *control.Error
	if _, err := c.JournalDetail(ctx, "no-such-request"); !errors.As(err, &ce) || ce.Status != http.StatusNotFound {
		t.Errorf("JournalDetail of an unknown id: %v, want a 404 *control.Error", err)
	}

	contacts, total, err := c.Contacts(ctx, control.ContactFilter{AccountID: alpha.AccountID, Offset: 1, Limit: 1})
	if err != nil || total != 3 || len(contacts) != 1 || contacts[0].Email != "c1@example.com" || contacts[0].ID == "" {
		t.Fatalf("Contacts(offset 1, limit 1) = %+v, %d, %v; want the second of three", contacts, total, err)
	}
	if _, total, err := c.Contacts(ctx, control.ContactFilter{AccountID: s.Accounts[1].AccountID}); err != nil || total != 0 {
		t.Errorf("the other account's contacts: %d, %v; want none", total, err)
	}

	if err := c.ClearJournal(ctx); err != nil {
		t.Fatal(err)
	}
	if entries, err := c.Journal(ctx, control.JournalFilter{}); err != nil || len(entries) != 0 {
		t.Fatalf("after ClearJournal: %d entries, %v", len(entries), err)
	}

	list(t, s, alpha)
	if _, err := c.AdvanceClock(ctx, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := c.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	_, total, err = c.Contacts(ctx, control.ContactFilter{})
	entries, jerr := c.Journal(ctx, control.JournalFilter{})
	clock, cerr := c.Clock(ctx)
	if err != nil || jerr != nil || cerr != nil || total != 0 || len(entries) != 0 || clock.Offset != 0 {
		t.Fatalf("after Reset: %d contacts, %d entries, clock %+v (%v, %v, %v); want none, none, real time", total, len(entries), clock, err, jerr, cerr)
	}
}

// defaultProfileInfo is how GET /config names the default profile: its
// source's name and the digest of its canonical JSON.
func defaultProfileInfo(t *testing.T) control.ProfileInfo {
	t.Helper()
	p := profile.Default()
	data, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return control.ProfileInfo{Name: p.Source.Name, Digest: profile.Digest(data)}
}
