package suite

import (
	"net/http"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/internal/mask"
	"github.com/partner-v3/conformance-kit/steps/internal/record"
	"github.com/partner-v3/conformance-kit/steps/result"
)

// The credentials of the hand-built results: no report may show them.
const (
	testAPIKey    = "key-7f3a9c2e51d84b6f"
	testAPISecret = "secret-0d9e8c7b6a5f4e3d2c1b"
	testAccountID = "acct-ENC-4b1d9f7e2a6c"
)

// credentialHeader is a request header as the suite sends it, secrets in.
func credentialHeader() http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("X-Api-Key", testAPIKey)
	h.Set("X-Api-Secret", testAPISecret)
	h.Set("X-Account-Id", testAccountID)
	return h
}

// sampleResult is a judged result of two features: a passed scenario, a
// failed one with its exchange, a skipped one, an outline row, and a
// passed scenario with warnings. Judging it fills the section table as a
// real run does.
func sampleResult(t testing.TB) *Result {
	t.Helper()
	started := time.Date(2025, 3, 14, 9, 26, 53, 589_000_000, time.UTC)
	base := "https://partner.example.test/v3/partner/webhook"
	failure := &result.Exchange{
		Method:         "POST",
		URL:            base + "/campaign/list",
		RequestHeader:  mask.Header(credentialHeader()),
		RequestBody:    `{"limit":50,"page":1}`,
		Status:         200,
		ResponseHeader: http.Header{"Content-Type": {"application/json"}},
		ResponseBody:   `{"pageNo":1,"pageSize":50,"campaigns":[{"Id":"12","statusColor":"green"}]}`,
		Duration:       183 * time.Millisecond,
	}
	r := &Result{
		SuiteVersion: "v1.4.0-3-gabc1234",
		SpecVersion:  spec.Version,
		Spec:         "Partner Contact and Campaign Service, API v3",
		Target:       base,
		Tags:         DefaultTags,
		Started:      started,
		Ended:        started.Add(2*time.Minute + 7*time.Second),
		Duration:     2*time.Minute + 7*time.Second,
		RateLimit:    spec.RateLimit,
		RateWindow:   spec.RateWindow.String(),
		Requests:     412,
		Waited:       61 * time.Second,
		BudgetWaits: []result.BudgetWait{{
			Account: "primary", Reason: "Retry-After: 12", Duration: 12 * time.Second, At: started.Add(3 * time.Second),
		}},
		TLS: []TLSSession{{
			Version: "TLS 1.3", Protocol: "HTTP/2.0", Verified: true,
			Chain: []string{"9f2c4a1be07d3c55aa10e2f6b8c4d7e19a0b3c5d6e7f8091a2b3c4d5e6f70812", "1e0d2c3b4a59687766554433221100ffeeddccbbaa99887766554433221100ff"},
		}},
		Digests: Digests{
			Scenarios: "4c1f0e9d8b7a69584736251403f2e1d0c9b8a7968574635241302f1e0d0c0b0a",
			Steps:     "0a0b0c0d1e2f302142536475869708a9b0c1d2e3f405162738495a6b7c8d9eaf",
		},
		Scenarios: []*result.ScenarioResult{
			{
				Name: "Campaign List answers a POST with a JSON body", Feature: "1-transport.feature",
				FeatureName: "Transport, JSON and the versioned base address",
				Tags:        []string{"@normative", "@spec-1"}, Sections: []string{"1"},
				Status: result.StatusPassed, Requests: 1, Duration: 212 * time.Millisecond,
			},
			{
				Name: "<operation> refuses the <header> header when it is <fault>", Feature: "2-auth.feature",
				Example:     "operation=Campaign Stats, header=x-api-secret, fault=missing",
				FeatureName: "Authentication with key, secret and account identifier",
				Tags:        []string{"@normative", "@spec-5"}, Sections: []string{"5"},
				Status: result.StatusPassed, Requests: 1, Duration: 95 * time.Millisecond,
			},
			{
				Name: "Campaigns carry the fields of §2.2", Feature: "4-campaign-list.feature",
				FeatureName: "Campaign List and pagination",
				Tags:        []string{"@normative", "@spec-2.2", "@spec-4.2"}, Sections: []string{"2.2", "4.2"},
				Status: result.StatusFailed, Step: `the field "Id" of every campaign should be an integer`,
				Message: "campaigns[0].Id is the string \"12\", want an integer\n<script>alert(1)</script>",
				Failure: &result.Finding{
					Level: result.LevelFailure, Sections: []string{"2.2"},
					Message:  "campaigns[0].Id is the string \"12\", want an integer\n<script>alert(1)</script>",
					Exchange: failure,
				},
				Requests: 1, Duration: 183 * time.Millisecond,
			},
			{
				Name: "Campaign statuses are colour codes", Feature: "4-campaign-list.feature",
				FeatureName: "Campaign List and pagination",
				Tags:        []string{"@normative", "@spec-2.2"}, Sections: []string{"2.2"},
				Status: result.StatusPassed, Requests: 2, Duration: 301 * time.Millisecond,
				Warnings: []result.Finding{{
					Level: result.LevelWarning, Sections: []string{"2.2"}, Count: 3,
					Message: "scheduledTimeZone \"XYZ\" is not a time zone abbreviation the suite knows",
				}},
			},
			{
				Name: "The second account is served with its own credentials", Feature: "2-auth.feature",
				FeatureName: "Authentication with key, secret and account identifier",
				Tags:        []string{"@normative", "@spec-5"}, Sections: []string{"5"},
				Status: result.StatusSkipped, Step: "a second account",
				Message: "no second account was given (--second-api-key)",
			},
		},
		Caveats: []string{},
		entries: []record.Entry{
			{
				Scenario: "Campaigns carry the fields of §2.2", Started: started.Add(40 * time.Second),
				Duration: 183 * time.Millisecond, Method: "POST", URL: base + "/campaign/list?trace=1",
				Proto: "HTTP/1.1", RequestHeader: mask.Header(credentialHeader()),
				RequestBody: []byte(`{"limit":50,"page":1}`), Status: 200, ResponseProto: "HTTP/2.0",
				// As the recorder keeps it: a secret the target echoed, masked.
				ResponseHeader: mask.Header(http.Header{"Content-Type": {"application/json; charset=utf-8"}, "X-Api-Secret": {testAPISecret}}),
				ResponseBody:   []byte(`{"pageNo":1,"campaigns":[]}`),
			},
			{
				Scenario: "The base address uses HTTPS", Started: started.Add(41 * time.Second),
				Duration: 5 * time.Second, Method: "POST", URL: base + "/contact/add",
				Proto: "HTTP/1.1", RequestHeader: mask.Header(credentialHeader()),
				RequestBody: []byte(`{"email":"a@example.test"}`),
				Err:         "dial tcp 192.0.2.1:443: i/o timeout",
			},
		},
	}
	r.judge(Config{SuiteVersion: r.SuiteVersion, Tags: DefaultTags}, spec.RateLimit, spec.RateWindow)
	return r
}

// notRunResult is a run that stopped at the preflight.
func notRunResult() *Result {
	return &Result{
		SuiteVersion: "v1.4.0", SpecVersion: spec.Version, Spec: "Partner Contact and Campaign Service, API v3",
		Target: "https://partner.example.test/v3/partner/webhook", Tags: DefaultTags,
		Verdict: VerdictNotRun, NotRun: "preflight: connection error: dial tcp: lookup partner.example.test: no such host",
		Scenarios: []*result.ScenarioResult{}, Caveats: []string{},
	}
}
