package mask

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"
)

// The values of the table test: a key, a secret and an account id shaped
// like the development accounts', one of them holding characters JSON
// escapes, and a second account's key that shares a prefix with the first.
const (
	key     = "dev-key-alpha-7f3c2b9e"
	secret  = "dev-secret-alpha-9d41e6a0c58b"
	account = "acc_enc_QWxwaGFQ/YXJ0bmVy<&>"
	key2    = "dev-key-bravo-1a9e4d6f"
	token   = "test-admin-token"
)

func testSecrets() *Secrets {
	return NewSecrets(
		Value{Text: key}, Value{Text: secret, Secret: true}, Value{Text: account},
		Value{Text: key2}, Value{Text: token, Secret: true},
	)
}

// jsonInner is v as the inside of a JSON string, as encoding/json writes it.
func jsonInner(v string) string {
	b, _ := json.Marshal(v)
	return string(b[1 : len(b)-1])
}

func TestSecretsString(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"a key becomes its first four characters and its length",
			`{"given":"` + key + `"}`, `{"given":"dev-…(22 chars)"}`},
		{"a secret becomes its length",
			"secret=" + secret, "secret=****(29 chars)"},
		{"every occurrence is hidden, in a sentence too",
			"key " + key + " or " + key + "!", "key dev-…(22 chars) or dev-…(22 chars)!"},
		{"an upper-cased echo is hidden",
			strings.ToUpper(key), "dev-…(22 chars)"},
		{"the JSON-escaped form is hidden",
			`{"id":"` + jsonInner(account) + `"}`, `{"id":"acc_…(28 chars)"}`},
		{`the form with \/ is hidden`,
			`{"id":"` + strings.ReplaceAll(jsonInner(account), "/", `\/`) + `"}`, `{"id":"acc_…(28 chars)"}`},
		{"the form with < and & unescaped is hidden",
			`{"id":"` + strings.ReplaceAll(account, "/", `\/`) + `"}`, `{"id":"acc_…(28 chars)"}`},
		{"the percent-encoded form is hidden",
			"/campaign/list?account=acc_enc_QWxwaGFQ%2FYXJ0bmVy%3C%26%3E", "/campaign/list?account=acc_…(28 chars)"},
		{"a value inside a longer one is hidden as the longer one",
			"x" + token + "-" + key + "y", "x****(16 chars)-dev-…(22 chars)y"},
		{"the right key with its last character changed leaves only that character",
			`"given":"dev-key-alpha-7f3c2b9X"`, `"given":"****(21 chars)X"`},
		{"a truncated key is hidden",
			"dev-key-alpha-7f3c…", "****(18 chars)…"},
		{"a suffix of a secret is hidden",
			"…alpha-9d41e6a0c58b", "…****(18 chars)"},
		{"a secret with one character changed in the middle leaves only that character",
			"dev-secret-alpXa-9d41e6a0c58b", "****(14 chars)X****(14 chars)"},
		{"a run of a third of a secret is hidden",
			"the secret ends in 9d41e6a0c", "the secret ends in ****(9 chars)"},
		{"a shorter run of it is kept",
			"the secret ends in 9d41e6a0", "the secret ends in 9d41e6a0"},
		{"a run of eight characters of a key is hidden, seven are kept",
			"dev-key-gamma-0000 or dev-key", "****(8 chars)gamma-0000 or dev-key"},
		{"text that only looks alike is kept",
			"x-api-secret of dev-keys", "x-api-secret of dev-keys"},
		{"text without a secret is kept",
			`{"error":"Invalid API credentials"}`, `{"error":"Invalid API credentials"}`},
		{"empty text is kept", "", ""},
	}
	s := testSecrets()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := s.String(tt.in)
			if got != tt.want {
				t.Fatalf("String(%q)\n = %q\nwant %q", tt.in, got, tt.want)
			}
			if again := s.String(got); again != got {
				t.Errorf("masking twice changed %q to %q", got, again)
			}
		})
	}
}

func TestSecretsOfShortAndEmptyValues(t *testing.T) {
	tests := []struct {
		name   string
		values []Value
		in     string
	}{
		{"an empty value hides nothing", []Value{{Text: ""}, {Text: "", Secret: true}}, "any text at all"},
		{"a one-character value hides nothing", []Value{{Text: "a", Secret: true}}, "a request and a response"},
		{"a value under six characters hides nothing", []Value{{Text: "12345"}}, `{"Id":12345,"pageNo":1}`},
		{"a nil Secrets hides nothing", nil, "dev-key-alpha-7f3c2b9e"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s *Secrets
			if tt.values != nil {
				s = NewSecrets(tt.values...)
			}
			if got := s.String(tt.in); got != tt.in {
				t.Errorf("String(%q) = %q, want it unchanged", tt.in, got)
			}
		})
	}
	t.Run("a six-character value is hidden whole but not in parts", func(t *testing.T) {
		s := NewSecrets(Value{Text: "s3cr3t", Secret: true})
		if got, want := s.String("is s3cr3t, not s3cr3"), "is ****(6 chars), not s3cr3"; got != want {
			t.Errorf("String = %q, want %q", got, want)
		}
	})
}

func TestSecretsOfOverlappingValues(t *testing.T) {
	s := NewSecrets(Value{Text: "alpha-0123456789"}, Value{Text: "0123456789-omega-zz", Secret: true})
	if got, want := s.String("[alpha-0123456789-omega-zz]"), "[****(19 chars)]"; got != want {
		t.Errorf("String = %q, want %q: overlapping values are hidden as one, shown as the longer", got, want)
	}
}

func TestSecretsKeepWholeCharacters(t *testing.T) {
	// A part of a value that starts or ends inside a character hides the
	// whole character: the text stays UTF-8.
	s := NewSecrets(Value{Text: "é-secret-value-ü", Secret: true})
	for _, in := range []string{"[©-secret-value-ü]", "[é-secret-value-ö]", "[ä-secret-value-ß]"} {
		got := s.String(in)
		if !utf8.ValidString(got) || strings.Contains(got, "secret-value") {
			t.Errorf("String(%q) = %q", in, got)
		}
	}
}

func TestSecretsBytesKeepsItsArgument(t *testing.T) {
	s := testSecrets()
	in := []byte(`{"k":"` + key + `"}`)
	out := s.Bytes(in)
	if string(in) != `{"k":"`+key+`"}` {
		t.Fatal("Bytes changed its argument")
	}
	if strings.Contains(string(out), key) {
		t.Errorf("Bytes = %s", out)
	}
	clean := []byte(`{"k":1}`)
	if got := s.Bytes(clean); &got[0] != &clean[0] {
		t.Error("Bytes copied a body without a secret")
	}
}

func TestSecretsHeader(t *testing.T) {
	s := testSecrets()
	h := http.Header{}
	h.Set("x-api-key", key)
	h.Set("x-api-secret", "wrong-1234")
	h.Set("X-Echo", "key="+key+" secret="+secret)
	h.Set("X-"+key, "1")
	got := s.Header(h)
	var all []string
	for k, vs := range got {
		all = append(all, k+": "+strings.Join(vs, ", "))
	}
	joined := strings.Join(all, "\n")
	for _, v := range []string{"7f3c2b9e", "9d41e6a0c58b", "wrong-1234"} {
		if strings.Contains(strings.ToLower(joined), v) {
			t.Errorf("the header still shows %q:\n%s", v, joined)
		}
	}
	if got.Get("X-Api-Key") != "dev-…(22 chars)" || got.Get("X-Api-Secret") != "****(10 chars)" {
		t.Errorf("the credential headers are not masked by name:\n%s", joined)
	}
	if got.Get("X-Echo") != "key=dev-…(22 chars) secret=****(29 chars)" {
		t.Errorf("X-Echo = %q", got.Get("X-Echo"))
	}
	if h.Get("x-api-key") != key {
		t.Error("Header changed its argument")
	}
	if (*Secrets)(nil).Header(h).Get("X-Api-Key") != "dev-…(22 chars)" {
		t.Error("a nil Secrets does not mask the credential headers by name")
	}
}
