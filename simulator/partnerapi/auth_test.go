package partnerapi_test

import (
	"net/http"
	"testing"

	"github.com/gavv/httpexpect/v2"

	"github.com/partner-v3/conformance-kit/simulator/sim"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// TestAuthentication covers spec §5 and the 401/403 rows of §7 on every
// operation.
func TestAuthentication(t *testing.T) {
	h := MustOpenServer(t, sim.Config{})
	a, b := h.alpha, h.bravo
	bodies := map[string]any{
		spec.PathContactAdd:    map[string]any{"email": "auth@example.com"},
		spec.PathCampaignList:  map[string]any{"limit": 1, "page": 1},
		spec.PathCampaignStats: map[string]any{"campaignId": 1},
	}
	tests := []struct {
		name                   string
		key, secret, accountID string
		omit                   string
		status                 int
		message                string
	}{
		{"a wrong key is refused", "nope", a.APISecret, a.AccountID, "", 401, spec.MsgInvalidCredentials},
		{"a wrong secret is refused", a.APIKey, "nope", a.AccountID, "", 401, spec.MsgInvalidCredentials},
		{"another account's secret is refused", a.APIKey, b.APISecret, a.AccountID, "", 401, spec.MsgInvalidCredentials},
		{"a missing key is refused", "", a.APISecret, a.AccountID, "x-api-key", 401, spec.MsgInvalidCredentials},
		{"a missing secret is refused", a.APIKey, "", a.AccountID, "x-api-secret", 401, spec.MsgInvalidCredentials},
		{"bad credentials win over a bad account", "nope", "nope", "nope", "", 401, spec.MsgInvalidCredentials},
		{"another account's id is forbidden", a.APIKey, a.APISecret, b.AccountID, "", 403, spec.MsgUnauthorizedAccount},
		{"an unknown account id is forbidden", a.APIKey, a.APISecret, "acc_nobody", "", 403, spec.MsgUnauthorizedAccount},
		{"a missing account id is forbidden", a.APIKey, a.APISecret, "", "x-account-id", 403, spec.MsgUnauthorizedAccount},
		{"the account id is compared exactly", a.APIKey, a.APISecret, a.AccountID + " ", "", 403, spec.MsgUnauthorizedAccount},
	}
	for _, tt := range tests {
		for op, body := range bodies {
			t.Run(tt.name+"/"+op, func(t *testing.T) {
				req := h.anon().POST("/" + op).WithJSON(body)
				for name, v := range map[string]string{"x-api-key": tt.key, "x-api-secret": tt.secret, "x-account-id": tt.accountID} {
					if name != tt.omit {
						req = req.WithHeader(name, v)
					}
				}
				expectError(req.Expect(), tt.status, tt.message)
			})
		}
	}
	t.Run("the right three headers pass", func(t *testing.T) {
		h.as(b).POST("/campaign/list").WithJSON(bodies[spec.PathCampaignList]).Expect().Status(http.StatusOK)
	})
	t.Run("refused requests do not spend the account's budget", func(t *testing.T) {
		// Only the one request above was counted for bravo.
		resp := h.as(b).POST("/campaign/list").WithJSON(bodies[spec.PathCampaignList]).Expect()
		resp.Status(http.StatusOK).Header("X-RateLimit-Remaining").IsEqual("98")
	})
}

func TestAdminAPI_RequiresToken(t *testing.T) {
	h := MustOpenServer(t, sim.Config{})
	for _, e := range []*httpexpect.Expect{
		h.expect(h.sim.AdminURL()),
		h.expect(h.sim.AdminURL()).Builder(func(r *httpexpect.Request) { r.WithHeader("Authorization", "Bearer wrong") }),
	} {
		e.POST("/reset").Expect().Status(http.StatusUnauthorized).JSON().Object().ContainsKey("error")
		e.GET("/journal").Expect().Status(http.StatusUnauthorized)
	}
	h.expect(h.sim.AdminURL()).GET("/healthz").Expect().Status(http.StatusOK).JSON().Object().HasValue("status", "ok")
	// The control API never answers under the partner base path.
	h.admin().POST(spec.BasePath + "/reset").Expect().Status(http.StatusNotFound)
	h.anon().POST("/reset").Expect().Status(http.StatusNotFound)
}
