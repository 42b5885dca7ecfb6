package partnerapi

import (
	"encoding/json"
	"testing"

	"github.com/partner-v3/conformance-kit/simulator/profile"
)

// TestValidationClass: each class's probe value, on its probe field and on
// every field the class covers, is of that class; valid values and fields
// outside the class are of none (today's checks answer them).
func TestValidationClass(t *testing.T) {
	for _, vc := range profile.ValidationCases() {
		fields := vc.Fields
		if vc.Class == profile.ClassUnknownField {
			fields = []string{vc.Field}
		}
		want := vc.Class
		if want == profile.ClassContactTypeBeside {
			// The same values as email.type's: which of the two answers
			// depends on the other field (contactString), not the value.
			want = profile.ClassContactType
		}
		for _, f := range fields {
			if got := validationClass(f, json.RawMessage(vc.Value)); got != want {
				t.Errorf("%s on %s: class %q, want %q", vc.Value, f, got, want)
			}
		}
	}
	tests := []struct {
		name, field, value string
	}{
		{"a valid gender", "gender", `"female"`},
		{"a valid date", "dateOfBirth", `"1990-12-10"`},
		{"a valid opt status", "smsOptStatus", `1`},
		{"a list of strings", "tag", `["vip"]`},
		{"a country code", "country", `"UK"`},
		{"a valid email", "email", `"ada@example.com"`},
		{"null", "firstName", `null`},
		{"an empty gender, outside string.empty's fields", "gender", `""`},
		{"an empty email, which §4.1's own rule answers", "email", `""`},
		{"an object where a string is expected, outside string.type", "city", `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := validationClass(tt.field, json.RawMessage(tt.value)); got != "" {
				t.Errorf("class %q, want none", got)
			}
		})
	}
}
