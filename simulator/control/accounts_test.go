package control_test

// The calls issue 12 adds to the control API: throwaway accounts, their
// budget and report, the journal's account filter. The server side is
// built on another branch: these tests fail until the lead merges it.

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/simulator/simtest"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

func TestThrowawayAccountLifecycle(t *testing.T) {
	t.Parallel()
	s := simtest.New(t, simtest.WithSeed(5), simtest.WithCampaigns(7))
	c, ctx := s.Control, context.Background()

	three := 3
	created, err := c.CreateAccount(ctx, simulator.AccountSpec{Name: "ci job 42", Campaigns: &three})
	if err != nil {
		t.Fatal(err)
	}
	for field, re := range map[string]struct{ got, pattern string }{
		"accountId": {created.AccountID, `^acc_tmp_[A-Za-z0-9_-]{22}$`},
		"apiKey":    {created.APIKey, `^tmp-key-[0-9a-f]{24}$`},
		"apiSecret": {created.APISecret, `^tmp-secret-[0-9a-f]{32}$`},
	} {
		if !regexp.MustCompile(re.pattern).MatchString(re.got) {
			t.Errorf("%s %q does not match %s", field, re.got, re.pattern)
		}
	}
	if created.Name != "ci job 42" || created.Campaigns != 3 || created.Seed != 5 || time.Since(created.CreatedAt) > time.Minute {
		t.Errorf("created %+v: want the name, 3 campaigns, the simulator's seed 5, created now", created)
	}
	acc := created.Account

	// The credentials work at once (spec §5) and see the account's own
	// campaigns.
	if got := list(t, s, acc); got != http.StatusOK {
		t.Fatalf("campaign/list as the new account: %d", got)
	}

	all, err := c.Accounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 3 || all[0].AccountID != s.Accounts[0].AccountID || all[0].Throwaway || all[2].AccountID != acc.AccountID || !all[2].Throwaway {
		t.Fatalf("Accounts = %+v: want the two configured ones, then the throwaway one", all)
	}
	one, err := c.Account(ctx, acc.AccountID)
	if err != nil || *one != all[2] {
		t.Fatalf("Account = %+v, %v; want %+v", one, err, all[2])
	}
	// The secret is shown once only.
	if raw := rawGET(t, s, "/accounts"); strings.Contains(raw, acc.APISecret) || strings.Contains(raw, "apiSecret") {
		t.Errorf("GET /accounts shows a secret: %s", raw)
	}

	// Configured accounts cannot be deleted; unknown ones are 404.
	var cerr *control.Error
	err = c.DeleteAccount(ctx, s.Accounts[0].AccountID)
	if !errors.As(err, &cerr) || cerr.Status != http.StatusConflict ||
		cerr.Message != "Account "+s.Accounts[0].AccountID+" is configured (accounts file), not throwaway: it cannot be deleted" {
		t.Errorf("DeleteAccount(configured): %v, want the 409", err)
	}
	if _, err := c.Account(ctx, "acc_tmp_none"); !control.IsNotFound(err) || !strings.Contains(err.Error(), "No account acc_tmp_none") {
		t.Errorf("Account(unknown): %v, want 404 No account acc_tmp_none", err)
	}

	if err := c.DeleteAccount(ctx, acc.AccountID); err != nil {
		t.Fatal(err)
	}
	if got := list(t, s, acc); got != http.StatusUnauthorized {
		t.Errorf("campaign/list after DeleteAccount: %d, want 401 (spec §5)", got)
	}
	if err := c.DeleteAccount(ctx, acc.AccountID); !control.IsNotFound(err) {
		t.Errorf("second DeleteAccount: %v, want 404", err)
	}
	if _, err := c.Budget(ctx, acc.AccountID); !control.IsNotFound(err) {
		t.Errorf("Budget of a deleted account: %v, want 404", err)
	}
}

func TestCreateAccountRefusesABadSpec(t *testing.T) {
	t.Parallel()
	s := simtest.New(t)
	tests := []struct {
		name  string
		spec  simulator.AccountSpec
		field string
	}{
		{"a negative campaign count", simulator.AccountSpec{Campaigns: ptr(-1)}, "campaigns"},
		{"more than 10000 campaigns", simulator.AccountSpec{Campaigns: ptr(10001)}, "campaigns"},
		{"a name over 200 bytes", simulator.AccountSpec{Name: strings.Repeat("n", 201)}, "name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Control.CreateAccount(context.Background(), tt.spec)
			var cerr *control.Error
			if !errors.As(err, &cerr) || cerr.Status != http.StatusBadRequest || !strings.Contains(cerr.Message, tt.field) {
				t.Fatalf("CreateAccount: %v, want a 400 naming %s", err, tt.field)
			}
		})
	}
	if all, err := s.Control.Accounts(context.Background()); err != nil || len(all) != 2 {
		t.Errorf("after refused specs: %d accounts, %v; want the two configured", len(all), err)
	}
}

// The budget of spec §8 is per account, at the simulator's clock.
func TestBudget(t *testing.T) {
	t.Parallel()
	s := simtest.New(t, simtest.WithRateLimit(5, time.Minute))
	c, ctx := s.Control, context.Background()
	alpha := s.Accounts[0]
	list(t, s, alpha)
	list(t, s, alpha)
	b, err := c.Budget(ctx, alpha.AccountID)
	if err != nil {
		t.Fatal(err)
	}
	if want := (simulator.Budget{AccountID: alpha.AccountID, Limit: 5, Window: "1m0s", Used: 2, Remaining: 3}); *b != want {
		t.Errorf("Budget = %+v, want %+v", *b, want)
	}
	if _, err := c.AdvanceClock(ctx, 61*time.Second); err != nil {
		t.Fatal(err)
	}
	if b, err := c.Budget(ctx, alpha.AccountID); err != nil || b.Used != 0 || b.Remaining != 5 {
		t.Errorf("a window later: %+v, %v; want all 5 back", b, err)
	}
	if _, err := c.Budget(ctx, "acc_none"); !control.IsNotFound(err) {
		t.Errorf("Budget(unknown): %v, want 404", err)
	}
}

func TestJournalFiltersByAccount(t *testing.T) {
	t.Parallel()
	s := simtest.New(t)
	c, ctx := s.Control, context.Background()
	tmp, err := c.CreateAccount(ctx, simulator.AccountSpec{})
	if err != nil {
		t.Fatal(err)
	}
	list(t, s, s.Accounts[0])
	list(t, s, tmp.Account)
	list(t, s, s.Accounts[0])
	list(t, s, tmp.Account)

	entries, err := c.Journal(ctx, control.JournalFilter{AccountID: tmp.AccountID})
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Fatalf("Journal(tmp) = %d entries, want its 2", len(entries))
	}
	for _, e := range entries {
		if e.AccountID != tmp.AccountID {
			t.Errorf("entry of %s in the tmp account's journal", e.AccountID)
		}
	}
	if one, err := c.Journal(ctx, control.JournalFilter{AccountID: tmp.AccountID, Limit: 1}); err != nil || len(one) != 1 || one[0].RequestID != entries[0].RequestID {
		t.Errorf("Journal(tmp, limit 1) = %+v, %v; want the newest", one, err)
	}
}

func TestReport(t *testing.T) {
	t.Parallel()
	s := simtest.New(t)
	c, ctx := s.Control, context.Background()
	tmp, err := c.CreateAccount(ctx, simulator.AccountSpec{Name: "report"})
	if err != nil {
		t.Fatal(err)
	}
	list(t, s, tmp.Account)
	// A Campaign List without page: a body the spec's §4.2 table refuses.
	partner(t, s, tmp.Account, spec.PathCampaignList, `{"limit": 10}`)

	r, err := c.Report(ctx, tmp.AccountID)
	if err != nil {
		t.Fatal(err)
	}
	if r.AccountID != tmp.AccountID || r.Requests != 2 || r.Findings == nil || r.Clean != (len(r.Findings) == 0) {
		t.Errorf("Report = %+v: want the account, its 2 requests, findings never nil", r)
	}
	md, err := c.ReportMarkdown(ctx, tmp.AccountID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md, tmp.AccountID) || strings.HasPrefix(strings.TrimSpace(md), "{") {
		t.Errorf("ReportMarkdown is not the account's Markdown report:\n%s", md)
	}
	if _, err := c.Report(ctx, "acc_none"); !control.IsNotFound(err) {
		t.Errorf("Report(unknown): %v, want 404", err)
	}
	if _, err := c.ReportMarkdown(ctx, "acc_none"); !control.IsNotFound(err) {
		t.Errorf("ReportMarkdown(unknown): %v, want 404", err)
	}
}

func ptr(n int) *int { return &n }

// rawGET returns a control API answer as text, to check what it leaves out.
func rawGET(t *testing.T, s *simtest.Simulator, path string) string {
	t.Helper()
	_, b := call(t, s, http.MethodGet, path, nil)
	if !json.Valid(b) {
		t.Fatalf("GET %s: not JSON: %s", path, b)
	}
	return string(b)
}
