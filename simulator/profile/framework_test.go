package profile_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/partner-v3/conformance-kit/simulator/profile"
)

// TestOrderOf: the precedences a deployment showed make one order, each
// check placed; a pair no probe ordered keeps the simulator's order; a
// cycle is no order.
func TestOrderOf(t *testing.T) {
	p := func(a, b string) profile.Precedence { return profile.Precedence{First: a, Then: b} }
	tests := []struct {
		name string
		ps   []profile.Precedence
		want []string
	}{
		{"nothing shown: the simulator's", nil, profile.Checks()},
		{"a framework: the body, then the account, then the key", []profile.Precedence{
			p("json", "credentials"), p("fields", "credentials"), p("account", "credentials"), p("fields", "account"), p("json", "fields"),
		}, []string{"json", "fields", "account", "credentials"}},
		{"the fields before the JSON", []profile.Precedence{p("credentials", "json"), p("fields", "json")}, []string{"credentials", "account", "fields", "json"}},
		{"a cycle", []profile.Precedence{p("json", "fields"), p("fields", "credentials"), p("credentials", "json")}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := profile.OrderOf(tt.ps)
			if !slices.Equal(got, tt.want) || ok != (tt.want != nil) {
				t.Errorf("OrderOf = %v, %v; want %v", got, ok, tt.want)
			}
		})
	}
}

// TestCheck_Framework: Check holds the framework choices to what the
// simulator can play and the spec allows.
func TestCheck_Framework(t *testing.T) {
	tests := []struct {
		name string
		edit func(p *profile.Profile)
		want string // a problem Check must name; "" for none
	}{
		{"a problem list without a top message", func(p *profile.Profile) {
			p.Errors.Bodies.Value["422"] = profile.ErrorBody{Problems: &profile.Problems{Field: "detail", MessageField: "msg",
				Fields: []profile.Field{{Name: "loc", Type: "array", Format: profile.FormatTemplate, Example: json.RawMessage(`["body","{field}"]`)}}}}
		}, ""},
		{"a problem list whose items hold no message", func(p *profile.Profile) {
			p.Errors.Bodies.Value["422"] = profile.ErrorBody{Problems: &profile.Problems{Field: "detail"}}
		}, "errors.bodies.422.problems.messageField"},
		{"a template of another type", func(p *profile.Profile) {
			p.Errors.Bodies.Value["422"] = profile.ErrorBody{Problems: &profile.Problems{Field: "detail", MessageField: "msg",
				Fields: []profile.Field{{Name: "loc", Type: "string", Format: profile.FormatTemplate, Example: json.RawMessage(`["{field}"]`)}}}}
		}, "errors.bodies.422.problems.fields.loc.example"},
		{"an order missing a check", func(p *profile.Profile) { p.Auth.CheckOrder.Value = []string{"json", "fields", "account"} }, "auth.checkOrder"},
		{"an order credentialsFirst contradicts", func(p *profile.Profile) { p.Auth.CredentialsFirst.Value = false }, "auth.checkOrder"},
		{"a parse error served", func(p *profile.Profile) { p.RequestBody.MalformedJSON.Value = profile.Outcome{Status: 200} }, "requestBody.malformedJSON.status"},
		{"an integral float refused with 401", func(p *profile.Profile) {
			p.RequestBody.IntegralFloat.Value = profile.Outcome{Status: 401, Message: "x"}
		}, "requestBody.integralFloat.status"},
		{"a numeric id of 8 digits", func(p *profile.Profile) { p.Contact.ID.Value = profile.IDFormat{Kind: profile.IDNumeric, Digits: 8} }, ""},
		{"hex digits without a prefix", func(p *profile.Profile) {
			p.Contact.ID.Value = profile.IDFormat{Kind: profile.IDPrefixed, Digits: 24, Alphabet: profile.AlphabetHex}
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := profile.Default()
			tt.edit(p)
			err := p.Check()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Check: %v, want none", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Check: %v, want a problem at %s", err, tt.want)
			}
		})
	}
}

// TestRender_ParseError: a parse error's template says where the body a
// client sent stopped being JSON.
func TestRender_ParseError(t *testing.T) {
	got := profile.Render("at offset {offset} (column {position}): '{char}' {parseError}", profile.Request{Offset: 9, Char: "]", ParseError: "own"})
	if want := "at offset 9 (column 10): ']' own"; got != want {
		t.Errorf("Render = %q, want %q", got, want)
	}
}

// TestParse_WithoutFrameworkChoices: a profile written before the
// framework choices reads, each of them unknown (the simulator plays
// default.json's).
func TestParse_WithoutFrameworkChoices(t *testing.T) {
	p, err := profile.Parse([]byte(`{"profileVersion": 1, "auth": {"credentialsFirst": {"value": false}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if p.Auth.CheckOrder.Known() || p.RequestBody.MalformedJSON.Known() || p.RequestBody.IntegralFloat.Known() {
		t.Errorf("the new choices are known: %+v %+v", p.Auth.CheckOrder, p.RequestBody)
	}
	if got := profile.CheckOrderOf(p.Auth.CredentialsFirst.Value); !profile.Before(got, profile.CheckFields, profile.CheckCredentials) {
		t.Errorf("credentialsFirst false plays %v: the body before the credentials", got)
	}
}
