package partnerapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/gavv/httpexpect/v2"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/seed"
	"github.com/partner-v3/conformance-kit/simulator/sim"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// createAccount makes a throwaway account through the control API and
// returns it as answered (with its secret).
func (h *harness) createAccount(spec map[string]any) *simulator.CreatedAccount {
	var a simulator.CreatedAccount
	req := h.admin().POST("/accounts")
	if spec != nil { // else an empty body, which the contract allows
		req = req.WithJSON(spec)
	}
	resp := req.Expect().Status(http.StatusCreated)
	resp.JSON().Decode(&a)
	resp.Header("Location").IsEqual("/accounts/" + a.AccountID)
	return &a
}

func (h *harness) budget(id string) simulator.Budget {
	var b simulator.Budget
	h.admin().GET("/accounts/" + id + "/budget").Expect().Status(http.StatusOK).JSON().Decode(&b)
	return b
}

// TestAccounts_Lifecycle: a throwaway account made through the control
// API serves the three operations of spec §4 with its own credentials
// (§5) and its own budget (§8), and once deleted answers 401 (§5 rule 1).
func TestAccounts_Lifecycle(t *testing.T) {
	h := MustOpenServer(t, sim.Config{})
	a := h.createAccount(map[string]any{"name": "ci job 17", "campaigns": 5, "seed": 99})

	for _, c := range []struct{ name, value, prefix string }{
		{"accountId", a.AccountID, simulator.ThrowawayIDPrefix},
		{"apiKey", a.APIKey, simulator.ThrowawayKeyPrefix},
		{"apiSecret", a.APISecret, simulator.ThrowawaySecretPrefix},
	} {
		if !strings.HasPrefix(c.value, c.prefix) {
			t.Fatalf("%s %q does not start with %q", c.name, c.value, c.prefix)
		}
	}
	if got, want := len(a.AccountID), len(simulator.ThrowawayIDPrefix)+22; got != want {
		t.Fatalf("accountId %q has %d characters, want %d", a.AccountID, got, want)
	}
	if got, want := len(a.APIKey), len(simulator.ThrowawayKeyPrefix)+24; got != want {
		t.Fatalf("apiKey has %d characters, want %d", got, want)
	}
	if got, want := len(a.APISecret), len(simulator.ThrowawaySecretPrefix)+32; got != want {
		t.Fatalf("apiSecret has %d characters, want %d", got, want)
	}
	if a.Name != "ci job 17" || a.Campaigns != 5 || a.Seed != 99 || a.CreatedAt.IsZero() {
		t.Fatalf("created %+v", a)
	}

	// The three operations with the new credentials.
	h.as(&a.Account).POST("/contact/add").WithJSON(map[string]string{"email": "tmp@example.com"}).
		Expect().Status(http.StatusOK).JSON().Object().HasValue("status", "success")
	list := h.as(&a.Account).POST("/campaign/list").WithJSON(map[string]int{"limit": spec.MaxPageSize, "page": 1}).
		Expect().Status(http.StatusOK).JSON().Object()
	list.HasValue("totalRecords", 5)
	// The campaigns are seed.Campaigns of the account: the same on every replica.
	want := seed.ThrowawayCampaigns(99, a.AccountID, 5)
	campaigns := list.Value("campaigns").Array()
	campaigns.Length().IsEqual(len(want))
	for i, c := range want {
		campaigns.Value(i).Object().HasValue("Id", c.ID).HasValue("campaignName", c.CampaignName)
	}
	h.as(&a.Account).POST("/campaign/stats").WithJSON(map[string]int64{"campaignId": want[0].ID}).
		Expect().Status(http.StatusOK).JSON().Object().ContainsKey("emailStat")
	// Its campaign is not another account's.
	h.as(h.alpha).POST("/campaign/stats").WithJSON(map[string]int64{"campaignId": want[0].ID}).Expect().Status(http.StatusNotFound)
	// §5 rule 2: its key and secret with another account id.
	h.anon().POST("/campaign/list").WithJSON(map[string]int{"limit": 1, "page": 1}).
		WithHeader("x-api-key", a.APIKey).WithHeader("x-api-secret", a.APISecret).WithHeader("x-account-id", h.alpha.AccountID).
		Expect().Status(http.StatusForbidden)

	// §8: three requests counted (the 403 is not); alpha's budget is its own.
	if got, want := h.budget(a.AccountID), (simulator.Budget{AccountID: a.AccountID, Limit: 100, Window: "1m0s", Used: 3, Remaining: 97}); got != want {
		t.Fatalf("budget = %+v, want %+v", got, want)
	}
	if got := h.budget(h.alpha.AccountID); got.Used != 1 {
		t.Fatalf("alpha's budget = %+v, want 1 used", got)
	}
	// Reading the budget takes nothing from it.
	if got := h.budget(a.AccountID); got.Used != 3 {
		t.Fatalf("budget read again = %+v, want 3 used", got)
	}
	// At the simulator's clock: a minute later the window is empty.
	h.admin().POST("/clock").WithJSON(map[string]string{"advance": "60s"}).Expect().Status(http.StatusOK)
	if got := h.budget(a.AccountID); got.Used != 0 || got.Remaining != 100 {
		t.Fatalf("budget a minute later = %+v, want 0 used", got)
	}

	// At the account's own clock too: its window passes alone.
	for range 2 {
		h.as(&a.Account).POST("/campaign/list").WithJSON(map[string]int{"limit": 1, "page": 1}).Expect().Status(http.StatusOK)
	}
	if got := h.budget(a.AccountID); got.Used != 2 {
		t.Fatalf("budget after two requests = %+v, want 2 used", got)
	}
	h.admin().POST("/clock").WithJSON(map[string]string{"accountId": a.AccountID, "advance": "60s"}).Expect().Status(http.StatusOK)
	if got := h.budget(a.AccountID); got.Used != 0 {
		t.Fatalf("budget after the account's own minute = %+v, want 0 used", got)
	}
	// Its report counts its five requests and the 403 its key was sent with.
	h.admin().GET("/accounts/"+a.AccountID+"/report").Expect().Status(http.StatusOK).
		JSON().Object().HasValue("requests", 6)

	// Listed after the configured accounts, never with its secret.
	accounts := h.admin().GET("/accounts").Expect().Status(http.StatusOK).JSON().Object().Value("accounts").Array()
	accounts.Length().IsEqual(len(h.sim.Accounts) + 1)
	for i, c := range h.sim.Accounts {
		accounts.Value(i).Object().HasValue("accountId", c.AccountID).HasValue("throwaway", false).NotContainsKey("apiSecret")
	}
	last := accounts.Value(len(h.sim.Accounts)).Object()
	last.IsEqual(map[string]any{"accountId": a.AccountID, "apiKey": a.APIKey, "name": "ci job 17", "throwaway": true,
		"seed": 99, "campaigns": 5, "createdAt": a.CreatedAt.Format("2006-01-02T15:04:05Z07:00")})
	h.admin().GET("/accounts/"+a.AccountID).Expect().Status(http.StatusOK).JSON().Object().
		HasValue("accountId", a.AccountID).HasValue("throwaway", true).NotContainsKey("apiSecret")

	// A fault scoped to it, and one of alpha's.
	h.addFault(map[string]any{"operation": "*", "kind": "error", "accountId": a.AccountID})
	h.addFault(map[string]any{"operation": "*", "kind": "error", "accountId": h.alpha.AccountID})

	h.admin().DELETE("/accounts/" + a.AccountID).Expect().Status(http.StatusOK).JSON().Object().
		IsEqual(map[string]any{"status": "deleted", "accountId": a.AccountID})

	expectError(h.as(&a.Account).POST("/campaign/list").WithJSON(map[string]int{"limit": 1, "page": 1}).Expect(),
		http.StatusUnauthorized, spec.MsgInvalidCredentials)
	if got := h.contactCount(&a.Account); got != 0 {
		t.Fatalf("%d contacts of the deleted account kept", got)
	}
	if got := h.faults("accountId", a.AccountID); len(got) != 0 {
		t.Fatalf("faults of the deleted account kept: %v", got)
	}
	if got := h.faults("accountId", h.alpha.AccountID); len(got) != 1 {
		t.Fatalf("alpha's fault went with the deleted account: %v", got)
	}
	if off, err := h.sim.Control.AccountOffset(context.Background(), a.AccountID); err != nil || off != 0 {
		t.Fatalf("the deleted account's clock offset = %v (%v), want forgotten", off, err)
	}
	notFound := "No account " + a.AccountID
	expectError(h.admin().GET("/accounts/"+a.AccountID+"/report").Expect(), http.StatusNotFound, notFound)
	expectError(h.admin().GET("/accounts/"+a.AccountID).Expect(), http.StatusNotFound, notFound)
	expectError(h.admin().GET("/accounts/"+a.AccountID+"/budget").Expect(), http.StatusNotFound, notFound)
	expectError(h.admin().DELETE("/accounts/"+a.AccountID).Expect(), http.StatusNotFound, notFound)
	h.admin().GET("/accounts").Expect().Status(http.StatusOK).JSON().Object().Value("accounts").Array().
		Length().IsEqual(len(h.sim.Accounts))
}

// TestAccounts_Defaults: an empty body makes an account whose campaigns
// come from the simulator's own --seed and --campaigns.
func TestAccounts_Defaults(t *testing.T) {
	h := MustOpenServer(t, sim.Config{CampaignsPerAccount: 12})
	a := h.createAccount(nil)
	if a.Seed != seed.DefaultSeed || a.Campaigns != 12 || a.Name != "" {
		t.Fatalf("created %+v, want seed %d and 12 campaigns", a, seed.DefaultSeed)
	}
	h.admin().GET("/accounts/"+h.alpha.AccountID).Expect().Status(http.StatusOK).JSON().Object().
		HasValue("seed", seed.DefaultSeed).HasValue("campaigns", 12).HasValue("throwaway", false).NotContainsKey("createdAt")
	h.as(&a.Account).POST("/campaign/list").WithJSON(map[string]int{"limit": spec.MaxPageSize, "page": 1}).
		Expect().Status(http.StatusOK).JSON().Object().HasValue("totalRecords", 12)

	none := h.createAccount(map[string]any{"campaigns": 0})
	h.as(&none.Account).POST("/campaign/list").WithJSON(map[string]int{"limit": spec.MaxPageSize, "page": 1}).
		Expect().Status(http.StatusOK).JSON().Object().HasValue("totalRecords", 0)

	// Two accounts are two sets of credentials: one's secret is not the other's.
	expectError(h.anon().POST("/campaign/list").WithJSON(map[string]int{"limit": 1, "page": 1}).
		WithHeader("x-api-key", a.APIKey).WithHeader("x-api-secret", none.APISecret).WithHeader("x-account-id", a.AccountID).
		Expect(), http.StatusUnauthorized, spec.MsgInvalidCredentials)

	// POST /reset keeps throwaway accounts (other CI jobs may hold them).
	h.admin().POST("/reset").Expect().Status(http.StatusOK)
	h.as(&a.Account).POST("/campaign/list").WithJSON(map[string]int{"limit": 1, "page": 1}).Expect().Status(http.StatusOK)
}

// TestAccounts_BadRequests: a bad call answers a 4xx JSON error naming
// what is wrong, and changes nothing.
func TestAccounts_BadRequests(t *testing.T) {
	h := MustOpenServer(t, sim.Config{})
	tests := []struct {
		name    string
		call    func(e *httpexpect.Expect) *httpexpect.Response
		status  int
		message string // "" when only the status is checked
	}{
		{"a negative campaign count is refused", func(e *httpexpect.Expect) *httpexpect.Response {
			return e.POST("/accounts").WithJSON(map[string]any{"campaigns": -1}).Expect()
		}, http.StatusBadRequest, "Control API: campaigns must be a whole number from 0 to 10000"},
		{"more than 10000 campaigns are refused", func(e *httpexpect.Expect) *httpexpect.Response {
			return e.POST("/accounts").WithJSON(map[string]any{"campaigns": 10001}).Expect()
		}, http.StatusBadRequest, "Control API: campaigns must be a whole number from 0 to 10000"},
		{"a name over 200 bytes is refused", func(e *httpexpect.Expect) *httpexpect.Response {
			return e.POST("/accounts").WithJSON(map[string]any{"name": strings.Repeat("é", 101)}).Expect()
		}, http.StatusBadRequest, "Control API: name must be valid UTF-8 of at most 200 bytes"},
		{"a name that is not UTF-8 is refused", func(e *httpexpect.Expect) *httpexpect.Response {
			return e.POST("/accounts").WithBytes([]byte("{\"name\":\"\xff\"}")).WithHeader("Content-Type", "application/json").Expect()
		}, http.StatusBadRequest, ""},
		{"an unknown field is refused", func(e *httpexpect.Expect) *httpexpect.Response {
			return e.POST("/accounts").WithJSON(map[string]any{"campaign": 3}).Expect()
		}, http.StatusBadRequest, ""},
		{"a campaign count that is not a whole number is refused", func(e *httpexpect.Expect) *httpexpect.Response {
			return e.POST("/accounts").WithJSON(map[string]any{"campaigns": 2.5}).Expect()
		}, http.StatusBadRequest, ""},
		{"a body that is not an object is refused", func(e *httpexpect.Expect) *httpexpect.Response {
			return e.POST("/accounts").WithJSON([]int{1}).Expect()
		}, http.StatusBadRequest, ""},
		{"a configured account cannot be deleted", func(e *httpexpect.Expect) *httpexpect.Response {
			return e.DELETE("/accounts/" + h.alpha.AccountID).Expect()
		}, http.StatusConflict, "Account " + h.alpha.AccountID + " is configured (accounts file), not throwaway: it cannot be deleted"},
		{"an unknown account is not found", func(e *httpexpect.Expect) *httpexpect.Response {
			return e.GET("/accounts/acc_tmp_nobody").Expect()
		}, http.StatusNotFound, "No account acc_tmp_nobody"},
		{"an unknown account has no budget", func(e *httpexpect.Expect) *httpexpect.Response {
			return e.GET("/accounts/acc_tmp_nobody/budget").Expect()
		}, http.StatusNotFound, "No account acc_tmp_nobody"},
		{"an unknown account cannot be deleted", func(e *httpexpect.Expect) *httpexpect.Response {
			return e.DELETE("/accounts/acc_tmp_nobody").Expect()
		}, http.StatusNotFound, "No account acc_tmp_nobody"},
		{"a wrong method is 405", func(e *httpexpect.Expect) *httpexpect.Response {
			return e.PUT("/accounts").Expect()
		}, http.StatusMethodNotAllowed, ""},
		{"no bearer token is 401", func(*httpexpect.Expect) *httpexpect.Response {
			return h.expect(h.sim.AdminURL()).POST("/accounts").Expect()
		}, http.StatusUnauthorized, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := tt.call(h.admin())
			resp.Status(tt.status).HasContentType("application/json")
			if tt.message != "" {
				expectError(resp, tt.status, tt.message)
			} else {
				resp.JSON().Object().Value("error").String().NotEmpty()
			}
			h.admin().GET("/accounts").Expect().Status(http.StatusOK).JSON().Object().Value("accounts").Array().
				Length().IsEqual(len(h.sim.Accounts))
		})
	}
	// The configured account still works.
	h.as(h.alpha).POST("/campaign/list").WithJSON(map[string]int{"limit": 1, "page": 1}).Expect().Status(http.StatusOK)
}

// TestAccounts_Violations: with breaches of the spec on, the control API
// still makes throwaway accounts, and a breach applies to them as to the
// configured ones (a run with --ephemeral-accounts must still catch it).
func TestAccounts_Violations(t *testing.T) {
	h := MustOpenServer(t, sim.Config{Violations: []string{"auth-secret-ignored", "rate-global"}})
	a := h.createAccount(map[string]any{"campaigns": 3})
	h.as(&a.Account).POST("/campaign/list").WithJSON(map[string]int{"limit": spec.MaxPageSize, "page": 1}).
		Expect().Status(http.StatusOK).JSON().Object().HasValue("totalRecords", 3)
	// §5 rule 1 broken: a wrong secret passes for the throwaway account too.
	h.anon().POST("/campaign/list").WithJSON(map[string]int{"limit": 1, "page": 1}).
		WithHeader("x-api-key", a.APIKey).WithHeader("x-api-secret", "wrong").WithHeader("x-account-id", a.AccountID).
		Expect().Status(http.StatusOK)
	h.admin().GET("/accounts/" + a.AccountID + "/budget").Expect().Status(http.StatusOK)
	h.admin().DELETE("/accounts/" + a.AccountID).Expect().Status(http.StatusOK)
	expectError(h.as(&a.Account).POST("/campaign/list").WithJSON(map[string]int{"limit": 1, "page": 1}).Expect(),
		http.StatusUnauthorized, spec.MsgInvalidCredentials)
}
