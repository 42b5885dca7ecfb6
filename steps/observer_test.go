package steps

import (
	"net/http"
	"testing"

	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/matrix"
	"github.com/partner-v3/conformance-kit/steps/result"
	"github.com/partner-v3/conformance-kit/steps/session"
)

var testAccount = control.Credentials{APIKey: "k-primary-0001", APISecret: "s-primary-0001", AccountID: "acc-primary-0001"}

// reply is an exchange of op (a path of §4) and what came back.
func reply(method, path string, header http.Header, status int, ct, body string) *session.Exchange {
	rh := http.Header{}
	if ct != "" {
		rh.Set("Content-Type", ct)
	}
	return &session.Exchange{Method: method, URL: "https://t.example/v3/partner/webhook/" + path, Header: header, Status: status, ResponseHeader: rh, ResponseBody: []byte(body)}
}

// TestMissingHeaderTiers: §5 says what an incorrect or mismatched header
// gets, not what a request without it gets. A client error there is at
// most a WARNING; serving it (§4: the headers are required), a server
// error or a body that is not JSON (§1 rule 3) stays a FAILURE.
func TestMissingHeaderTiers(t *testing.T) {
	const js = "application/json"
	fastAPI := `{"detail":[{"type":"missing","loc":["header","x-api-secret"],"msg":"Field required","input":null}]}`
	tests := []struct {
		name            string
		cond            string
		status          int
		ct, body        string
		failed, warning bool
	}{
		{"401 with the message passes", matrix.CondMissing, 401, js, `{"error":"Invalid API credentials"}`, false, false},
		{"FastAPI's 422 is a warning", matrix.CondMissing, 422, js, fastAPI, false, true},
		{"403 Not authenticated is a warning", matrix.CondMissing, 403, js, `{"detail":"Not authenticated"}`, false, true},
		{"401 without the message is a warning", matrix.CondMissing, 401, js, `{"detail":"Not authenticated"}`, false, true},
		{"a 422 that is not JSON fails (§1 rule 3)", matrix.CondMissing, 422, "text/plain", "Field required", true, false},
		{"served fails (§4: required)", matrix.CondMissing, 200, js, `{"pageNo":1}`, true, false},
		{"a server error fails", matrix.CondMissing, 500, js, `{"error":"Internal server error"}`, true, false},
		{"an empty secret answered 422 fails: an empty value is an incorrect one (§5 rule 1)", matrix.CondEmpty, 422, js, fastAPI, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lib := New(Env{})
			s := &scenario{Scenario: lib.run.NewScenario()}
			s.Result = &result.ScenarioResult{Sections: []string{"5", "7"}}
			cell := session.CellOf("auth-secret", spec.OpCampaignList, matrix.Primary, tt.cond)
			h := session.CredentialHeaders(testAccount)
			h.Del(spec.HeaderAPISecret)
			s.Pending = s.Cells("auth-secret")
			s.CellXs = []session.CellExchange{{Cell: cell, X: reply("POST", spec.PathCampaignList, h, tt.status, tt.ct, tt.body)}}
			err := s.everyAnswerIs(http.StatusUnauthorized, spec.MsgInvalidCredentials)
			if (err != nil) != tt.failed {
				t.Errorf("failed: %v, want %v", err, tt.failed)
			}
			if got := len(s.Result.Warnings) > 0; got != tt.warning {
				t.Errorf("warned: %v (%v), want %v", got, s.Result.Warnings, tt.warning)
			}
		})
	}
}
