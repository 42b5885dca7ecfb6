package steps

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/partner-v3/conformance-kit/steps/result"

	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/matrix"
)

var testAccount = control.Credentials{APIKey: "k-primary-0001", APISecret: "s-primary-0001", AccountID: "acc-primary-0001"}

// answer is an exchange of op (a path of §4) and what came back.
func answer(method, path string, header http.Header, status int, ct, body string) *exchange {
	rh := http.Header{}
	if ct != "" {
		rh.Set("Content-Type", ct)
	}
	return &exchange{method: method, url: "https://t.example/v3/partner/webhook/" + path, header: header, status: status, rheader: rh, rbody: []byte(body)}
}

// TestAnswerProblem: the rules every answer is held to, by the whole-run
// observer: the condition of rule every-answer an answer breaks, its
// sections and its tier; nothing where the spec is silent (a missing
// header's refusal, a 422, an empty 204).
func TestAnswerProblem(t *testing.T) {
	full := credentialHeaders(testAccount)
	noSecret := full.Clone()
	noSecret.Del(spec.HeaderAPISecret)
	const js = "application/json"
	campaign := `{"Id":1,"campaignName":"n","campaignType":0,"campaignChannel":"email","status":"Sent","statusColor":"#fff","active":1,"scheduledOn":"2026-01-01T00:00:00.000Z","scheduledTimeZone":"UTC","offset":"%s","autoResend":0,"broadcastOn":"2026-01-01T00:00:00.000Z","broadcast":1,"createdAt":"2026-01-01T00:00:00.000Z","updatedAt":"2026-01-01T00:00:00.000Z","reason":null}`
	page := `{"pageNo":1,"pageSize":1,"totalPages":1,"totalRecords":1,"filteredRecords":1,"campaigns":[` + campaign + `]}`
	tests := []struct {
		name     string
		x        *exchange
		cond     string
		sections string
		level    result.Level
	}{
		{"a good page holds", answer("POST", spec.PathCampaignList, full, 200, js, strings.Replace(page, "%s", "+05:30", 1)), "", "", ""},
		{"a page with an offset out of format breaks §2.2", answer("POST", spec.PathCampaignList, full, 200, js, strings.Replace(page, "%s", "+0530", 1)), matrix.AnswerOK, "2.2", result.LevelFailure},
		{"an HTML page breaks §1 rule 3", answer("POST", spec.PathCampaignStats, full, 502, "text/html", "<html>Bad Gateway</html>"), matrix.AnswerJSON, "1", result.LevelFailure},
		{"JSON labelled text/plain breaks §1 rule 3", answer("POST", spec.PathContactAdd, full, 400, "text/plain", `{"error":"x"}`), matrix.AnswerJSON, "1", result.LevelFailure},
		{"an HTML answer to a GET is a warning", answer("GET", spec.PathCampaignList, full, 405, "text/html", "<html>405</html>"), matrix.AnswerJSON, "1", result.LevelWarning},
		{"a HEAD has no body to judge", answer("HEAD", spec.PathCampaignList, full, 405, "", ""), "", "", ""},
		{"the exact 429 body holds", answer("POST", spec.PathContactAdd, full, 429, js, `{"error": "Rate limit exceeded. Try again later."}`), "", "", ""},
		{"another 429 body breaks §7", answer("POST", spec.PathContactAdd, full, 429, js, `{"error": "Too many requests"}`), matrix.Answer429, "7", result.LevelFailure},
		{"a 429 body with one more field breaks §7", answer("POST", spec.PathContactAdd, full, 429, js, `{"error": "Rate limit exceeded. Try again later.", "retryIn": 3}`), matrix.Answer429, "7", result.LevelFailure},
		{"a 401 anywhere in the body holds", answer("POST", spec.PathCampaignList, full, 401, js, `{"detail":{"message":"Invalid API credentials"}}`), "", "", ""},
		{"a 401 with another message breaks §5", answer("POST", spec.PathCampaignList, full, 401, js, `{"error":"Unauthorized"}`), matrix.Answer401, "5,7", result.LevelFailure},
		{"a 403 with another message breaks §5", answer("POST", spec.PathCampaignStats, full, 403, js, `{"error":"Forbidden"}`), matrix.Answer403, "5,7", result.LevelFailure},
		{"a 403 without x-api-secret may say anything (§5: not shown)", answer("POST", spec.PathCampaignStats, noSecret, 403, js, `{"detail":"Not authenticated"}`), "", "", ""},
		{"FastAPI's 422 for a missing header holds", answer("POST", spec.PathCampaignStats, noSecret, 422, js, `{"detail":[{"type":"missing","loc":["header","x-api-secret"],"msg":"Field required","input":null}]}`), "", "", ""},
		{"a contactId that is a number breaks §4.1", answer("POST", spec.PathContactAdd, full, 200, js, `{"status":"success","contactId":7}`), matrix.AnswerOK, "4.1", result.LevelFailure},
		{"a count that is a string breaks §2.3", answer("POST", spec.PathCampaignStats, full, 200, js, `{"emailStat":{"Sent":"1","Opened":0,"Delivered":0,"Hardbounce":0,"Softbounce":0,"Failed":0,"Clicked":0,"Unsubscribe":0,"Complained":0},"smsStat":{"Sent":0,"Delivered":0,"Failed":0}}`), matrix.AnswerOK, "2.3", result.LevelFailure},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cond, secs, problem, level := answerProblem(tt.x)
			if cond != tt.cond || strings.Join(secs, ",") != tt.sections || level != tt.level {
				t.Fatalf("answerProblem = %q, %v, %s (%q), want %q, %s, %s", cond, secs, level, problem, tt.cond, tt.sections, tt.level)
			}
			if (problem == "") != (tt.cond == "") {
				t.Fatalf("problem %q for condition %q", problem, cond)
			}
		})
	}
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
			s := &scenario{lib: lib, env: &lib.env, result: &result.ScenarioResult{Sections: []string{"5", "7"}}}
			cell := cellOf("auth-secret", spec.OpCampaignList, matrix.Primary, tt.cond)
			h := credentialHeaders(testAccount)
			h.Del(spec.HeaderAPISecret)
			s.pending = s.cells("auth-secret")
			s.cellXs = []cellExchange{{cell, answer("POST", spec.PathCampaignList, h, tt.status, tt.ct, tt.body)}}
			err := s.everyAnswerIs(http.StatusUnauthorized, spec.MsgInvalidCredentials)
			if (err != nil) != tt.failed {
				t.Errorf("failed: %v, want %v", err, tt.failed)
			}
			if got := len(s.result.Warnings) > 0; got != tt.warning {
				t.Errorf("warned: %v (%v), want %v", got, s.result.Warnings, tt.warning)
			}
		})
	}
}

// TestObserverReportsOnce: an answer a scenario's check failed on is that
// scenario's to report, not the observer's again; an earlier attempt of
// the same request (a 429 the pacer sent it again after, which the
// scenario never read) and the preflight's answers are the observer's.
func TestObserverReportsOnce(t *testing.T) {
	o := NewObserver(testAccount, control.Credentials{}, nil)
	lib := New(Env{Observer: o})
	const js = "application/json"
	full := credentialHeaders(testAccount)
	res := &result.ScenarioResult{Name: "a scenario", Status: result.StatusFailed}
	x := &exchange{}
	ctx := withSender(context.Background(), res, x)
	o.observe(ctx, 1, answer("POST", spec.PathCampaignList, full, 429, js, `{"error":"Too many requests"}`))
	o.observe(ctx, 2, answer("POST", spec.PathCampaignList, full, 401, js, `{"error":"Unauthorized"}`))
	o.observe(context.Background(), 3, answer("POST", spec.PathCampaignList, full, 403, js, `{"error":"Forbidden"}`))
	x.markJudged() // the scenario's check failed on the answer it read: the second attempt
	var got []int
	for _, ob := range lib.unreported(nil, true) {
		got = append(got, ob.seq)
	}
	if want := []int{1, 3}; !slices.Equal(got, want) {
		t.Fatalf("reported requests %v, want %v", got, want)
	}
	o.observe(ctx, 4, answer("POST", spec.PathCampaignList, full, 429, js, `{}`))
	if obs := lib.unreported(nil, true); len(obs) != 0 {
		t.Fatalf("an answer after the run was judged was held: %v", obs)
	}
}
