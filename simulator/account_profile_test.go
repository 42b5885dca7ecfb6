package simulator_test

import (
	"strings"
	"testing"

	"github.com/partner-v3/conformance-kit/simulator"
)

// TestReadAccounts_ProfileDigest: an accounts file cannot name a profile
// (issue 20): only POST /accounts stores one for an account to name, so a
// digest there would name nothing.
func TestReadAccounts_ProfileDigest(t *testing.T) {
	tests := []struct {
		name, file, wantErr string
	}{
		{"without a digest", `[{"apiKey":"k","apiSecret":"s","accountId":"a"}]`, ""},
		{"with a digest", `[{"apiKey":"k","apiSecret":"s","accountId":"a","profileDigest":"sha256:00"}]`, "profileDigest"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := simulator.ReadAccounts(strings.NewReader(tt.file))
			if tt.wantErr == "" && err != nil {
				t.Fatalf("ReadAccounts: %v", err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("err %v, want one naming %q", err, tt.wantErr)
			}
		})
	}
}
