package answer

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/partner-v3/conformance-kit/steps/result"

	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/matrix"
)

var testAccount = control.Credentials{APIKey: "k-primary-0001", APISecret: "s-primary-0001", AccountID: "acc-primary-0001"}

// answer is a request to op (a path of §4) and what came back.
func answer(method, path string, header http.Header, status int, ct, body string) *Answer {
	rh := http.Header{}
	if ct != "" {
		rh.Set("Content-Type", ct)
	}
	return &Answer{Method: method, URL: "https://t.example/v3/partner/webhook/" + path, Header: header, Status: status, ResponseHeader: rh, ResponseBody: []byte(body)}
}

// credentialHeaders are the three headers of §5 with a's values.
func credentialHeaders(a control.Credentials) http.Header {
	h := http.Header{}
	h.Set(spec.HeaderAPIKey, a.APIKey)
	h.Set(spec.HeaderAPISecret, a.APISecret)
	h.Set(spec.HeaderAccountID, a.AccountID)
	return h
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
		x        *Answer
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
			cond, secs, problem, level := Problem(tt.x)
			if cond != tt.cond || strings.Join(secs, ",") != tt.sections || level != tt.level {
				t.Fatalf("Problem = %q, %v, %s (%q), want %q, %s, %s", cond, secs, level, problem, tt.cond, tt.sections, tt.level)
			}
			if (problem == "") != (tt.cond == "") {
				t.Fatalf("problem %q for condition %q", problem, cond)
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
	const js = "application/json"
	full := credentialHeaders(testAccount)
	res := &result.ScenarioResult{Name: "a scenario", Status: result.StatusFailed}
	var judged atomic.Bool
	ctx := WithSender(context.Background(), res, &judged)
	o.observe(ctx, 1, answer("POST", spec.PathCampaignList, full, 429, js, `{"error":"Too many requests"}`))
	o.observe(ctx, 2, answer("POST", spec.PathCampaignList, full, 401, js, `{"error":"Unauthorized"}`))
	o.observe(context.Background(), 3, answer("POST", spec.PathCampaignList, full, 403, js, `{"error":"Forbidden"}`))
	judged.Store(true) // the scenario's check failed on the answer it read: the second attempt
	var got []int
	_, fails := o.Unreported(true)
	for _, ob := range fails {
		got = append(got, ob.Seq)
	}
	if want := []int{1, 3}; !slices.Equal(got, want) {
		t.Fatalf("reported requests %v, want %v", got, want)
	}
	o.observe(ctx, 4, answer("POST", spec.PathCampaignList, full, 429, js, `{}`))
	if _, obs := o.Unreported(true); len(obs) != 0 {
		t.Fatalf("an answer after the run was judged was held: %v", obs)
	}
}
