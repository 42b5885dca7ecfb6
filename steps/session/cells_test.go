package session

import (
	"errors"
	"strings"
	"testing"

	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// TestValidBodies: each operation's valid body, made of only the parts it
// needs, and a loud refusal of an operation the spec does not have. That
// every operation has a body is spec's TestEveryOperationHasABody.
func TestValidBodies(t *testing.T) {
	var read []string
	parts := bodyParts{
		email:      func() string { read = append(read, "email"); return "a@b.test" },
		campaignID: func() (int64, error) { read = append(read, "campaignID"); return 42, nil },
	}
	for _, tt := range []struct{ op, want, reads string }{
		{spec.OpAddContact, `{"email": "a@b.test", "firstName": "Conformance"}`, "email"},
		{spec.OpCampaignList, `{"limit": 1, "page": 1}`, ""},
		{spec.OpCampaignStats, `{"campaignId": 42}`, "campaignID"},
	} {
		read = nil
		got, err := validBodyOf(tt.op, parts)
		if err != nil || string(got) != tt.want {
			t.Errorf("validBodyOf(%s) = %s, %v, want %s", tt.op, got, err, tt.want)
		}
		if r := strings.Join(read, ","); r != tt.reads {
			t.Errorf("validBodyOf(%s) read %q, want %q", tt.op, r, tt.reads)
		}
	}
	boom := errors.New("boom")
	if _, err := validBodyOf(spec.OpCampaignStats, bodyParts{campaignID: func() (int64, error) { return 0, boom }}); !errors.Is(err, boom) {
		t.Errorf("a campaign that could not be read: err = %v, want %v", err, boom)
	}
	if _, err := validBodyOf("Contact Delete", parts); err == nil || !strings.Contains(err.Error(), spec.OpAddContact) {
		t.Errorf("an unknown operation: err = %v, want one naming the spec's", err)
	}
}
