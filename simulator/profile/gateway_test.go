package profile_test

import (
	"strings"
	"testing"

	"github.com/partner-v3/conformance-kit/simulator/profile"
)

// TestCheckGatewayChoices: Check refuses a rate-limit header class the
// simulator cannot write, and a request without Content-Type that is
// refused yet says how an empty body is read (issue 28).
func TestCheckGatewayChoices(t *testing.T) {
	for _, tc := range []struct{ name, path, value, want string }{
		{"a header nobody writes", "rateLimit.headerClasses", `{"value": {"unauthenticated": ["X-Rate-Quota"], "refused": []}}`, "rateLimit.headerClasses.unauthenticated"},
		{"Retry-After on a 400", "rateLimit.headerClasses", `{"value": {"unauthenticated": [], "refused": ["Retry-After"]}}`, "rateLimit.headerClasses.refused"},
		{"refused and read as {}", "http.missingContentType", `{"value": {"status": 415, "message": "x", "emptyAsObject": true}}`, "http.missingContentType"},
		{"401 for no Content-Type", "http.missingContentType", `{"value": {"status": 401, "message": "x"}}`, "http.missingContentType.status"},
		{"an empty body served", "http.missingContentType", `{"value": {"status": 200, "empty": {"status": 200}}}`, "http.missingContentType.empty.status"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := profile.Parse([]byte(edited(t, [2]string{tc.path, tc.value})))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse = %v, want an error naming %s", err, tc.want)
			}
		})
	}
	if _, err := profile.Parse([]byte(edited(t, [2]string{"http.missingContentType", `{"value": {"status": 200, "emptyAsObject": true}}`},
		[2]string{"rateLimit.headerClasses", `{"value": {"unauthenticated": ["ratelimit-limit"], "refused": null}}`}))); err != nil {
		t.Fatalf("a gateway's choices: %v", err)
	}
}

// TestCompareGatewayChoices: the header classes are sets (order, case and
// null against [] carry nothing), and a message template is the message
// it renders at the probe (issue 28).
func TestCompareGatewayChoices(t *testing.T) {
	a, b := profile.Default(), profile.Default()
	a.Rate.HeaderClasses.Value = profile.RateHeaderClasses{Unauthenticated: nil, Refused: []string{"Ratelimit-Reset", "Ratelimit-Limit"}}
	b.Rate.HeaderClasses.Value = profile.RateHeaderClasses{Unauthenticated: []string{}, Refused: []string{"ratelimit-limit", "RateLimit-Reset"}}
	a.HTTP.UnknownPath.Value = profile.Outcome{Status: 404, Message: `no route matches "{path}"`}
	b.HTTP.UnknownPath.Value = profile.Outcome{Status: 404, Message: `no route matches "/v3/partner/webhook/nothing/here"`}
	if d := profile.Compare(a, b).Differences(); len(d) != 0 {
		t.Fatalf("differences %+v, want none", d)
	}
	b.Rate.HeaderClasses.Value.Unauthenticated = []string{"Ratelimit-Limit"}
	b.HTTP.MissingContentType.Value = profile.NoContentType{Outcome: profile.Outcome{Status: 200}, EmptyAsObject: true}
	var got []string
	for _, r := range profile.Compare(a, b).Differences() {
		got = append(got, r.Choice)
	}
	if strings.Join(got, " ") != "rateLimit.headerClasses http.missingContentType" {
		t.Fatalf("differences %v, want rateLimit.headerClasses and http.missingContentType", got)
	}
}
