package record

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/partner-v3/conformance-kit/steps/internal/mask"
)

// TestEntryHidesEchoedSecrets: what the recorder keeps hides the run's
// secrets wherever the target echoed them (a response header, the body)
// and wherever the suite sent them (the credential headers, a body, the
// URL), while the request and the response it passes on are untouched:
// the steps judge what the target really sent.
func TestEntryHidesEchoedSecrets(t *testing.T) {
	const key, secret = "dev-key-alpha-7f3c2b9e", "dev-secret-alpha-9d41e6a0c58b"
	echo := `{"error":"Invalid API credentials","given":{"x-api-key":"` + key + `","x-api-secret":"` + secret + `"}}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if b, _ := io.ReadAll(r.Body); string(b) != `{"note":"`+secret+`"}` {
			t.Errorf("the target got the body %s", b)
		}
		w.Header().Set("X-Echo", r.Header.Get("x-api-secret"))
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, echo)
	}))
	defer srv.Close()
	tr := &Transport{Base: http.DefaultTransport, Secrets: mask.NewSecrets(mask.Value{Text: key}, mask.Value{Text: secret, Secret: true})}
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/campaign/list?k="+key, strings.NewReader(`{"note":"`+secret+`"}`))
	req.Header.Set("x-api-key", key)
	req.Header.Set("x-api-secret", secret)
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != echo || resp.Header.Get("X-Echo") != secret {
		t.Errorf("the response passed on was changed: %s, X-Echo %q", b, resp.Header.Get("X-Echo"))
	}
	es := tr.Entries()
	if len(es) != 1 {
		t.Fatalf("%d entries, want 1", len(es))
	}
	e := es[0]
	kept := strings.Join([]string{e.URL, string(e.RequestBody), string(e.ResponseBody),
		e.RequestHeader.Get("X-Api-Key"), e.RequestHeader.Get("X-Api-Secret"), e.ResponseHeader.Get("X-Echo")}, "\n")
	for _, v := range []string{key, secret, "7f3c2b9e", "9d41e6a0c58b"} {
		if strings.Contains(kept, v) {
			t.Errorf("the entry shows %q:\n%s", v, kept)
		}
	}
	if want := `{"error":"Invalid API credentials","given":{"x-api-key":"dev-…(22 chars)","x-api-secret":"****(29 chars)"}}`; string(e.ResponseBody) != want {
		t.Errorf("response body kept as\n%s\nwant\n%s", e.ResponseBody, want)
	}
	if e.ResponseHeader.Get("X-Echo") != "****(29 chars)" || e.RequestHeader.Get("X-Api-Secret") != "****(29 chars)" {
		t.Errorf("headers kept as %v and %v", e.RequestHeader, e.ResponseHeader)
	}
}
