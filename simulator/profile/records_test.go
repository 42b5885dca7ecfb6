package profile_test

import (
	"encoding/json"
	"testing"

	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// TestCompareRecordFieldsAndIDFormats: fields inside records and an
// identifier field's format compare by name, type and format (the
// identifier's prefix, length and alphabet), never by the values seen.
func TestCompareRecordFieldsAndIDFormats(t *testing.T) {
	with := func(prefix string, digits int, example, updatedBy string) *profile.Profile {
		p := profile.Default()
		id := profile.IDFormat{Kind: profile.IDPrefixed, Prefix: prefix, Digits: digits, Alphabet: profile.AlphabetDecimal, Example: example}
		p.HTTP.SuccessFields.Value = map[string][]profile.Field{spec.PathCampaignList: {{Name: "requestId", Type: "string", Format: profile.FormatID, ID: &id}}}
		p.HTTP.RecordFields.Value = map[string]map[string][]profile.Field{
			spec.PathCampaignList:  {profile.RecordCampaigns: {{Name: "updatedBy", Type: "string", Example: json.RawMessage(updatedBy)}}},
			spec.PathCampaignStats: {},
		}
		if err := p.Check(); err != nil {
			t.Fatal(err)
		}
		return p
	}
	verdict := func(a, b *profile.Profile, choice string) string {
		for _, r := range profile.Compare(a, b).Rows {
			if r.Choice == choice {
				return r.Verdict
			}
		}
		t.Fatalf("no row %s", choice)
		return ""
	}
	a := with("req-", 19, "req-1732752000123456789", `"system"`)
	if v := verdict(a, with("req-", 19, "req-0000000000000000001", `"ops"`), "http.successFields"); v != profile.VerdictSame {
		t.Errorf("another requestId seen: %s, want same", v)
	}
	if v := verdict(a, with("req-", 19, "req-1", `"ops"`), "http.recordFields"); v != profile.VerdictSame {
		t.Errorf("another updatedBy seen, an operation adding nothing left out: %s, want same", v)
	}
	if v := verdict(a, with("req-", 12, "req-000000000001", `"system"`), "http.successFields"); v != profile.VerdictDiffer {
		t.Errorf("12 digits against 19: %s, want differ", v)
	}
	b := with("req-", 19, "", `"system"`)
	b.HTTP.RecordFields.Value[spec.PathCampaignList][profile.RecordCampaigns][0].Type = "null"
	if v := verdict(a, b, "http.recordFields"); v != profile.VerdictDiffer {
		t.Errorf("a field of another type: %s, want differ", v)
	}
}
