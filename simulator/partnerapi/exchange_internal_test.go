package partnerapi

import (
	"testing"
)

// TestCredentialsKeptAndHidden: a body is kept as it is up to the cap,
// except that a credential the cap would split ends the kept part before
// it; a header value has every credential replaced, the first at a place
// winning, the longest at the same place; a short value is not searched
// for.
func TestCredentialsKeptAndHidden(t *testing.T) {
	var c credentials
	c.add("secret-0123456789", "[S]")
	c.add("secret-0123", "[short S]")
	c.add("key-abcdefgh", "[K]")
	c.add("abc", "[never]")
	if c.n != 3 {
		t.Fatalf("%d credentials noted, want 3 (a 3-byte one is none)", c.n)
	}
	kept := []struct {
		src   string
		limit int
		want  string
	}{
		{`{"a":"secret-0123456789"}`, 100, `{"a":"secret-0123456789"}`},
		{`12345secret-0123456789`, 10, `12345`},
		{`1234567890secret-0123456789`, 10, `1234567890`},
		{`secret-0123456789 then secret-0123456789`, 30, `secret-0123456789 then `},
		{`secret-0123456789 and more after it`, 20, `secret-0123456789 an`},
		{`1234567890`, 4, `1234`},
	}
	for _, tt := range kept {
		if got := string(c.appendKept([]byte(">"), []byte(tt.src), tt.limit)); got != ">"+tt.want {
			t.Errorf("appendKept(%q, %d) = %q, want %q", tt.src, tt.limit, got, ">"+tt.want)
		}
	}
	hidden := map[string]string{
		"Bearer secret-0123456789":          "Bearer [S]",
		"secret-0123 and secret-0123456789": "[short S] and [S]",
		"key-abcdefgh,abc":                  "[K],abc",
		"no credential here, a long value":  "no credential here, a long value",
		"abc":                               "abc",
	}
	for in, want := range hidden {
		if got := c.hiddenString(in); got != want {
			t.Errorf("hiddenString(%q) = %q, want %q", in, got, want)
		}
	}
}
