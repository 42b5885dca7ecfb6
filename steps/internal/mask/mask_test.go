package mask

import (
	"net/http"
	"strings"
	"testing"
)

func TestHeaderHidesEveryCredential(t *testing.T) {
	h := http.Header{}
	h.Set("x-api-key", "dev-key-alpha-7f3c2b9e")
	h.Set("x-api-secret", "dev-secret-alpha-9d41e6a0c58b")
	h.Set("x-account-id", "acc_enc_QWxwaGFQYXJ0bmVyMDAx")
	h.Set("Authorization", "Bearer admin-token-123456")
	h.Set("Content-Type", "application/json")
	got := Header(h)
	var all []string
	for _, vs := range got {
		all = append(all, vs...)
	}
	joined := strings.Join(all, "\n")
	for _, secret := range []string{"7f3c2b9e", "9d41e6a0c58b", "dev-s", "QWxwaGFQYXJ0bmVyMDAx", "admin-token"} {
		if strings.Contains(joined, secret) {
			t.Errorf("masked headers still show %q:\n%s", secret, joined)
		}
	}
	if got.Get("Content-Type") != "application/json" {
		t.Errorf("Content-Type was changed: %q", got.Get("Content-Type"))
	}
	if h.Get("x-api-key") != "dev-key-alpha-7f3c2b9e" {
		t.Error("Header changed its argument")
	}
}

func TestCredentialOfShortValues(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"abc", "***"},
		{"abcdefgh", "********"},
		{"abcdefghi", "abcd…(9 chars)"},
	}
	for _, tt := range tests {
		if got := Credential(tt.in); got != tt.want {
			t.Errorf("Credential(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
