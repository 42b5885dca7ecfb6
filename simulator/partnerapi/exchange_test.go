package partnerapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/controlapi"
	"github.com/partner-v3/conformance-kit/simulator/sim"
)

// detail reads GET /journal/{requestId} and answers the status and the raw
// body, decoded into d on a 200.
func (h *harness) detail(id string) (int, string, simulator.JournalDetail) {
	h.t.Helper()
	resp := h.admin().GET("/journal/" + id).Expect()
	raw := resp.Body().Raw()
	var d simulator.JournalDetail
	if resp.Raw().StatusCode == http.StatusOK {
		if err := json.Unmarshal([]byte(raw), &d); err != nil {
			h.t.Fatalf("GET /journal/%s: %v in %s", id, err, raw)
		}
	}
	return resp.Raw().StatusCode, raw, d
}

// values answers the values of name among hs, in their order.
func values(hs []simulator.Header, name string) []string {
	var out []string
	for _, h := range hs {
		if h.Name == name {
			out = append(out, h.Value)
		}
	}
	return out
}

// TestJournalDetail_Kept: a request answered 200 is kept in full, its
// headers (credentials masked as in the journal entry) and body and its
// answer's, with its journal entry (issue 30).
func TestJournalDetail_Kept(t *testing.T) {
	h := MustOpenServer(t, sim.Config{})
	a := h.alpha
	hdr := with(creds(a), "User-Agent", "partner-client/1.0")
	sent := `{"limit":2,"page":1}`
	status, answerHeader, answer := h.exchange("kept-1", call{path: "/campaign/list", body: sent, header: hdr})
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, answer)
	}
	st, raw, d := h.detail("kept-1")
	if st != http.StatusOK {
		t.Fatalf("GET /journal/kept-1: %d %s", st, raw)
	}
	if d.RequestID != "kept-1" || d.Entry == nil || d.Entry.Status != http.StatusOK || d.Entry.Operation != "campaign/list" {
		t.Fatalf("detail %+v: want the request's id and its journal entry", d)
	}
	req := d.Request
	if req.Body != sent || req.BodyBytes != int64(len(sent)) || req.Truncated || req.Note != "" {
		t.Errorf("request body %q (%d bytes, truncated %v, %q), want %q whole", req.Body, req.BodyBytes, req.Truncated, req.Note, sent)
	}
	for name, want := range map[string]string{
		"Content-Type": "application/json", "User-Agent": "partner-client/1.0", "X-Account-Id": a.AccountID,
		"X-Api-Key": d.Entry.APIKey, "X-Api-Secret": "******** (never kept)",
	} {
		if got := values(req.Headers, name); len(got) != 1 || got[0] != want {
			t.Errorf("request header %s: %q, want %q", name, got, want)
		}
	}
	if d.Entry.APIKey == a.APIKey || !strings.HasPrefix(d.Entry.APIKey, a.APIKey[:4]) {
		t.Errorf("the key shown is %q: want it masked as the journal masks it", d.Entry.APIKey)
	}
	ans := d.Answer
	if ans.Body != answer || ans.BodyBytes != int64(len(answer)) || ans.Truncated {
		t.Errorf("answer body %q (%d bytes), want what the client read, %q", ans.Body, ans.BodyBytes, answer)
	}
	for _, name := range []string{"Content-Type", "X-Request-Id", "X-Ratelimit-Limit", "X-Ratelimit-Remaining"} {
		if got := values(ans.Headers, name); len(got) != 1 || got[0] != answerHeader.Get(name) {
			t.Errorf("answer header %s: %q, want %q as the client got it", name, got, answerHeader.Get(name))
		}
	}
	for i := 1; i < len(req.Headers); i++ {
		if req.Headers[i-1].Name > req.Headers[i].Name {
			t.Fatalf("request headers not in name order: %v", req.Headers)
		}
	}
	if strings.Contains(raw, a.APISecret) || strings.Contains(raw, a.APIKey) {
		t.Fatalf("the detail holds a credential: %s", raw)
	}
}

// TestJournalDetail_Refused429: a request the limiter refused shows the
// answer's Retry-After and error message (spec §8), and says its body was
// not read.
func TestJournalDetail_Refused429(t *testing.T) {
	h := MustOpenServer(t, sim.Config{RateLimit: 1})
	c := call{path: "/campaign/list", body: `{"limit":1,"page":1}`, header: creds(h.alpha)}
	h.mustDo("first", c, http.StatusOK)
	status, header, answer := h.exchange("refused", c)
	if status != http.StatusTooManyRequests || header.Get("Retry-After") == "" {
		t.Fatalf("second request: %d Retry-After %q, want 429 with one", status, header.Get("Retry-After"))
	}
	st, raw, d := h.detail("refused")
	if st != http.StatusOK {
		t.Fatalf("GET /journal/refused: %d %s", st, raw)
	}
	if got := values(d.Answer.Headers, "Retry-After"); len(got) != 1 || got[0] != header.Get("Retry-After") {
		t.Errorf("Retry-After shown %q, want %q", got, header.Get("Retry-After"))
	}
	var msg struct{ Error string }
	if err := json.Unmarshal([]byte(d.Answer.Body), &msg); err != nil || msg.Error == "" || d.Answer.Body != answer {
		t.Errorf("the answer's body shown is %q, want the error the client read, %q", d.Answer.Body, answer)
	}
	// Refused on its headers, the request's body was never read: not kept,
	// and said so.
	if req := d.Request; req.Body != "" || !req.Truncated || req.BodyBytes != int64(len(c.body)) || !strings.HasPrefix(req.Note, "not read: ") {
		t.Errorf("the request's body shown is %q (%d bytes, %q), want none, %d bytes by its Content-Length, not read", req.Body, req.BodyBytes, req.Note, len(c.body))
	}
}

// TestJournalDetail_Truncated: a body past controlapi.ExchangeBodyBytes is
// kept in part, and says how large it was.
func TestJournalDetail_Truncated(t *testing.T) {
	h := MustOpenServer(t, sim.Config{})
	_, _, answer := h.exchange("page", call{path: "/campaign/list", body: `{"limit":50,"page":1}`, header: creds(h.alpha)})
	if len(answer) <= controlapi.ExchangeBodyBytes {
		t.Fatalf("a page of 50 is %d bytes: the test needs one past the cap", len(answer))
	}
	_, raw, d := h.detail("page")
	ans := d.Answer
	if !ans.Truncated || ans.BodyBytes != int64(len(answer)) || ans.Body != answer[:controlapi.ExchangeBodyBytes] ||
		!strings.Contains(ans.Note, "bytes in all") {
		t.Fatalf("answer of %d bytes shown as %d kept of %d, truncated %v, note %q", len(answer), len(ans.Body), ans.BodyBytes, ans.Truncated, ans.Note)
	}
	// A request body past the cap: an Add Contact with a long name, refused.
	long := `{"email":"a@example.com","firstName":"` + strings.Repeat("x", 10000) + `"}`
	h.do("long", call{path: "/contact/add", body: long, header: creds(h.alpha)})
	_, raw, d = h.detail("long")
	req := d.Request
	if !req.Truncated || req.BodyBytes != int64(len(long)) || req.Body != long[:controlapi.ExchangeBodyBytes] {
		t.Fatalf("request of %d bytes shown as %d kept of %d, truncated %v: %s", len(long), len(req.Body), req.BodyBytes, req.Truncated, raw)
	}
}

// TestJournalDetail_Masked: the secret is never kept, wherever the client
// put it: its header, another header, a body field; nor the whole key. The
// same for a request refused 401 whose other header holds the real secret
// of the account its key names.
func TestJournalDetail_Masked(t *testing.T) {
	h := MustOpenServer(t, sim.Config{})
	a := h.alpha
	hdr := with(creds(a), "Authorization", "Bearer "+a.APISecret)
	body := `{"email":"a@example.com","note":"` + a.APISecret + `","key":"` + a.APIKey + `"}`
	h.do("secret-in-body", call{path: "/contact/add", body: body, header: hdr})
	wrong := with(with(creds(a), "X-Api-Secret", "presented-but-wrong-secret-0123"), "Authorization", "Bearer "+a.APISecret)
	h.do("secret-401", call{path: "/contact/add", body: body, header: wrong})
	for _, id := range []string{"secret-in-body", "secret-401"} {
		st, raw, d := h.detail(id)
		if st != http.StatusOK {
			t.Fatalf("GET /journal/%s: %d %s", id, st, raw)
		}
		for what, v := range map[string]string{"the secret": a.APISecret, "the whole key": a.APIKey, "the presented secret": "presented-but-wrong-secret-0123"} {
			if strings.Contains(raw, v) {
				t.Errorf("%s: the detail holds %s: %s", id, what, raw)
			}
		}
		if id == "secret-in-body" && (!strings.Contains(d.Request.Body, `"note":"******** (never kept)"`) || !strings.Contains(d.Request.Body, `"key":"`+d.Entry.APIKey+`"`)) {
			t.Errorf("%s: the body shown is %q, want the secret and key replaced where they were", id, d.Request.Body)
		}
		if got := values(d.Request.Headers, "Authorization"); len(got) != 1 || got[0] != "Bearer ******** (never kept)" {
			t.Errorf("%s: Authorization shown %q", id, got)
		}
	}
}

// TestJournalDetail_Gone: past the ring's size an exchange is no longer
// kept (404 saying so, while the journal still lists it); an id never
// seen is a 404 of its own; a simulator that keeps none says so; a reset
// forgets them.
func TestJournalDetail_Gone(t *testing.T) {
	h := MustOpenServer(t, sim.Config{JournalDetail: 2})
	c := call{path: "/campaign/list", body: `{"limit":1,"page":1}`, header: creds(h.alpha)}
	for _, id := range []string{"r1", "r2", "r3"} {
		h.mustDo(id, c, http.StatusOK)
	}
	expectError(h.admin().GET("/journal/r1").Expect(), http.StatusNotFound,
		`Request "r1" is no longer kept in full: the simulator keeps the headers and bodies of its latest 2 requests only; its journal entry is still in GET /journal`)
	for _, id := range []string{"r2", "r3"} {
		if st, raw, _ := h.detail(id); st != http.StatusOK {
			t.Fatalf("GET /journal/%s: %d %s, want it kept", id, st, raw)
		}
	}
	expectError(h.admin().GET("/journal/never-sent").Expect(), http.StatusNotFound,
		`No request "never-sent" is kept: the simulator keeps the headers and bodies of its latest 2 requests, the journal its latest entries, and neither holds it (never sent, or since reset)`)
	h.admin().POST("/reset").Expect().Status(http.StatusOK)
	if st, _, _ := h.detail("r3"); st != http.StatusNotFound {
		t.Fatalf("GET /journal/r3 after a reset: %d, want 404", st)
	}
	h.expect(h.sim.AdminURL()).GET("/journal/r3").WithHeader("Authorization", "Bearer wrong").Expect().Status(http.StatusUnauthorized)

	none := MustOpenServer(t, sim.Config{JournalDetail: -1})
	none.mustDo("n1", c, http.StatusOK)
	expectError(none.admin().GET("/journal/n1").Expect(), http.StatusNotFound,
		"This simulator keeps no request in full (--journal-detail 0): GET /journal lists its requests without headers and bodies")
}
