package partnerapi_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/gavv/httpexpect/v2"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/sim"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// TestOutage_EveryKindOfAccount takes the Redis down under a simulator and
// sends a request as each kind of account: a configured one (the accounts
// file), a throwaway one (POST /accounts) and a key nobody has. A store
// that cannot answer is spec §7's 500 "Internal server error" for each,
// never §5 rule 1's 401, which is for a wrong key or secret only: a
// configured account's key with a wrong secret is still a 401 (the
// configured accounts are in memory, so that answer needs no Redis). The
// same holds through a breach of §5 that decorates the account store. A
// 500 is no finding of the client's: its report stays clean of it.
func TestOutage_EveryKindOfAccount(t *testing.T) {
	for _, violations := range [][]string{nil, {"auth-secret-ignored"}, {"auth-key-prefix"}} {
		t.Run(fmt.Sprintf("violations %v", violations), func(t *testing.T) {
			m := miniredis.RunT(t)
			h := MustOpenServer(t, sim.Config{RedisURL: "redis://" + m.Addr() + "/0", Violations: violations})
			tmp := h.createAccount(nil)
			h.as(&tmp.Account).POST("/" + spec.PathCampaignList).WithJSON(map[string]any{"limit": 1, "page": 1}).
				Expect().Status(http.StatusOK)
			m.Close()

			alpha := h.alpha
			tests := []struct {
				name              string
				key, secret, acct string
				status            int
				message           string
			}{
				{"a configured account", alpha.APIKey, alpha.APISecret, alpha.AccountID, http.StatusInternalServerError, spec.MsgInternal},
				{"a throwaway account", tmp.APIKey, tmp.APISecret, tmp.AccountID, http.StatusInternalServerError, spec.MsgInternal},
				{"a throwaway key with a wrong secret", tmp.APIKey, "wrong", tmp.AccountID, http.StatusInternalServerError, spec.MsgInternal},
				{"a key no account has", "key-nobody-has", "secret", alpha.AccountID, http.StatusInternalServerError, spec.MsgInternal},
				{"a configured key with a wrong secret", alpha.APIKey, "wrong", alpha.AccountID, http.StatusUnauthorized, spec.MsgInvalidCredentials},
			}
			for _, tt := range tests {
				if tt.status == http.StatusUnauthorized && len(violations) > 0 {
					// The breach's rule might accept what the faithful
					// store refuses, and it needs every account to tell,
					// which the store cannot list: the honest answer is
					// the 500.
					tt.status, tt.message = http.StatusInternalServerError, spec.MsgInternal
				}
				t.Run(tt.name, func(t *testing.T) {
					resp := h.anon().POST("/"+spec.PathCampaignList).
						WithHeader(spec.HeaderAPIKey, tt.key).WithHeader(spec.HeaderAPISecret, tt.secret).WithHeader(spec.HeaderAccountID, tt.acct).
						WithJSON(map[string]any{"limit": 1, "page": 1}).Expect()
					expectError(resp, tt.status, tt.message)
				})
			}
			if len(violations) > 0 {
				return
			}
			// Only the 401 is the client's mistake.
			rep := h.report(alpha)
			if got, want := findingsByKey(rep), 1; len(got) != want || got[simulator.FindingWrongCredentials+"/"].Count != 1 {
				t.Errorf("alpha's report during the outage: findings %+v, want one %s", rep.Findings, simulator.FindingWrongCredentials)
			}
		})
	}
}

// TestOutage_ControlAPIAccounts: with the Redis down, the control API's
// account calls answer 500 rather than an answer they could not know: no
// 404 for a throwaway account that exists, no 400 for a fault scoped to
// it, no 409 for a new one. The configured accounts, kept in memory, are
// still found.
func TestOutage_ControlAPIAccounts(t *testing.T) {
	m := miniredis.RunT(t)
	h := MustOpenServer(t, sim.Config{RedisURL: "redis://" + m.Addr() + "/0"})
	tmp := h.createAccount(nil)
	m.Close()

	e := h.admin()
	e.GET("/accounts/" + h.alpha.AccountID).Expect().Status(http.StatusOK)
	for _, tt := range []struct {
		name string
		resp func() *httpexpect.Response
	}{
		{"GET a throwaway account", func() *httpexpect.Response { return e.GET("/accounts/" + tmp.AccountID).Expect() }},
		{"GET an unknown account", func() *httpexpect.Response { return e.GET("/accounts/acc_tmp_nobody").Expect() }},
		{"DELETE a throwaway account", func() *httpexpect.Response { return e.DELETE("/accounts/" + tmp.AccountID).Expect() }},
		{"POST /accounts", func() *httpexpect.Response { return e.POST("/accounts").Expect() }},
		{"GET /accounts", func() *httpexpect.Response { return e.GET("/accounts").Expect() }},
		{"POST /faults for a throwaway account", func() *httpexpect.Response {
			return e.POST("/faults").WithJSON(map[string]any{"operation": spec.PathCampaignList, "kind": "error", "accountId": tmp.AccountID}).Expect()
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			expectError(tt.resp(), http.StatusInternalServerError, spec.MsgInternal)
		})
	}
}
