package partnerapi

import (
	"strings"
	"testing"
)

// TestCredentialsHidden: every credential is replaced wherever it is,
// the first at a place winning, the longest at the same place; one that
// straddles the cap is not kept in part; a short value is not searched for.
func TestCredentialsHidden(t *testing.T) {
	var c credentials
	c.add("secret-0123456789", "[S]")
	c.add("secret-0123", "[short S]")
	c.add("key-abcdefgh", "[K]")
	c.add("abc", "[never]")
	tests := []struct {
		src   string
		limit int
		want  string
	}{
		{`{"a":"secret-0123456789","k":"key-abcdefgh"}`, 100, `{"a":"[S]","k":"[K]"}`},
		{`secret-0123 and secret-0123456789`, 100, `[short S] and [S]`},
		{`abc`, 100, `abc`},
		{`12345secret-0123456789`, 10, `12345[S]`},
		{`123456789secret-0123456789`, 10, `123456789[`},
		{`1234567890`, 4, `1234`},
	}
	for _, tt := range tests {
		got := string(c.appendHidden([]byte(">"), []byte(tt.src), tt.limit))
		if got != ">"+tt.want {
			t.Errorf("appendHidden(%q, %d) = %q, want %q", tt.src, tt.limit, got, ">"+tt.want)
		}
		if strings.Contains(got, "secret-01") {
			t.Errorf("appendHidden(%q, %d) keeps part of a secret: %q", tt.src, tt.limit, got)
		}
	}
	if s := "no credential"; c.hiddenString(s) != s {
		t.Error("hiddenString changed a string without a credential")
	}
	if got := c.hiddenString("Bearer secret-0123456789"); got != "Bearer [S]" {
		t.Errorf("hiddenString = %q", got)
	}
}
