package partnerapi

import (
	"net/mail"
	"testing"
)

// FuzzPlainAddress: every address plainAddress accepts without net/mail,
// mail.ParseAddress reads as that address alone; and bareAddress, fast
// path or not, answers what mail.ParseAddress answers.
func FuzzPlainAddress(f *testing.F) {
	for _, seed := range []string{
		"a@example.com", "bench-1@example.com", "first.last+tag@sub.example.co.uk", "a@b", "!#$%&'*+/=?^_`{|}~-@x.io",
		"", "@", "a@", "@b", "a@@b", "a@b@c", ".a@b", "a.@b", "a..b@c", "a@.b", "a@b.", "a@b..c",
		`"a b"@c`, "a@[1.2.3.4]", "a b@c", " a@b", "a@b ", "A <a@b>", "a@b (c)", "a(c)@b", "é@b", "a@é.com",
		"a\x00@b", "a\x7f@b", "a\\b@c", "a,b@c", "a;b@c", "a:b@c", "<a@b>",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := mail.ParseAddress(s)
		slow := err == nil && a.Address == s && a.Name == ""
		if plainAddress(s) && !slow {
			t.Fatalf("plainAddress(%q) accepts it; mail.ParseAddress reads %+v, %v", s, a, err)
		}
		if got := bareAddress(s); got != slow {
			t.Fatalf("bareAddress(%q) = %v, mail.ParseAddress says %v (%+v, %v)", s, got, slow, a, err)
		}
	})
}
