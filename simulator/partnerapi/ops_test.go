package partnerapi_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/edge"
	"github.com/partner-v3/conformance-kit/simulator/inmem"
	"github.com/partner-v3/conformance-kit/simulator/mock"
	"github.com/partner-v3/conformance-kit/simulator/partnerapi"
	"github.com/partner-v3/conformance-kit/simulator/sim"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// TestJournal: every request is journaled with its outcome; no secret is
// ever in it.
func TestJournal(t *testing.T) {
	h := MustOpenServer(t, sim.Config{})
	h.as(h.alpha).POST("/campaign/list").WithJSON(map[string]int{"limit": 1, "page": 1}).Expect().Status(http.StatusOK)
	h.anon().POST("/contact/add").WithHeader("x-api-key", h.alpha.APIKey).WithHeader("x-api-secret", "wrong").
		WithJSON(map[string]string{"email": "j@example.com"}).Expect().Status(http.StatusUnauthorized)
	raw := h.admin().GET("/journal").WithQuery("limit", 10).Expect().Status(http.StatusOK).Body().Raw()
	for _, secret := range []string{h.alpha.APISecret, h.alpha.APIKey, "wrong"} {
		if strings.Contains(raw, secret) {
			t.Fatalf("the journal shows a credential: %s", raw)
		}
	}
	var j struct{ Entries []simulator.JournalEntry }
	if err := json.Unmarshal([]byte(raw), &j); err != nil {
		t.Fatal(err)
	}
	if len(j.Entries) != 2 {
		t.Fatalf("%d entries, want 2", len(j.Entries))
	}
	newest, oldest := j.Entries[0], j.Entries[1]
	if newest.Status != 401 || newest.Operation != spec.PathContactAdd || newest.AccountID != "" {
		t.Fatalf("newest entry %+v", newest)
	}
	if oldest.Status != 200 || oldest.Operation != spec.PathCampaignList || oldest.AccountID != h.alpha.AccountID || oldest.RequestID == "" {
		t.Fatalf("oldest entry %+v", oldest)
	}
	h.admin().DELETE("/journal").Expect().Status(http.StatusOK)
	h.admin().GET("/journal").Expect().JSON().Object().Value("entries").Array().IsEmpty()
}

// TestTLS: HTTPS with HTTP/2 and TLS 1.2 at least (spec §1 rule 1), and the
// generated certificate is reused by the next start.
func TestTLS(t *testing.T) {
	h := MustOpenServer(t, sim.Config{})
	resp := h.list(h.alpha)
	if resp.ProtoMajor != 2 {
		t.Fatalf("protocol %s, want HTTP/2", resp.Proto)
	}
	old := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{
		InsecureSkipVerify: true, MaxVersion: tls.VersionTLS11}}} //nolint:gosec // probing the server's floor
	if _, err := old.Post(h.sim.URL()+"/campaign/list", "application/json", strings.NewReader(`{}`)); err == nil {
		t.Fatal("a TLS 1.1 client was served")
	}
	dir := t.TempDir()
	var prints []string
	for i := 0; i < 2; i++ {
		s, err := sim.New(context.Background(), sim.Config{DataDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := s.Cert.Created, i == 0; got != want {
			t.Fatalf("start %d: Created=%v, want %v", i, got, want)
		}
		prints = append(prints, s.Cert.Fingerprint)
	}
	if prints[0] != prints[1] {
		t.Fatal("the second start made a new certificate")
	}
}

// TestInternalErrors: a failing or panicking backend answers the spec §7
// 500 in JSON, and the server goes on serving.
func TestInternalErrors(t *testing.T) {
	accounts := []*simulator.Account{{APIKey: "k", APISecret: "s", AccountID: "a"}}
	campaigns := &mock.CampaignStore{
		FindCampaignsFn: func(context.Context, simulator.CampaignFilter) ([]*simulator.Campaign, int, error) {
			panic("backend bug")
		},
		FindCampaignByIDFn: func(context.Context, string, int64) (*simulator.Campaign, error) {
			return nil, errors.New("connection refused")
		},
	}
	contacts := &mock.ContactStore{
		UpsertContactFn: func(context.Context, *simulator.Contact) (*simulator.Contact, bool, error) {
			return nil, false, errors.New("disk full")
		},
		AddContactFn: func(context.Context, *simulator.Contact, simulator.DuplicateRule) (*simulator.Contact, bool, error) {
			return nil, false, errors.New("disk full")
		},
	}
	s := &partnerapi.API{Stores: partnerapi.Stores{
		Accounts: inmem.NewAccountStore(accounts), Contacts: contacts, Campaigns: campaigns,
		Counter: inmem.NewRateCounter(100, time.Minute), Control: inmem.NewControlStore(),
	}}
	// Served on a listener of its own, as package sim serves it.
	o := edge.Options{}
	srv := edge.NewServer(s.Handler(), o)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(edge.NewListener(ln, o))
	defer srv.Close()
	h := &harness{t: t, client: http.DefaultClient}
	e := h.expect("http://" + ln.Addr().String() + spec.BasePath)
	for _, req := range []struct{ path, body string }{
		{"/campaign/list", `{"limit":1,"page":1}`},
		{"/campaign/stats", `{"campaignId":1}`},
		{"/contact/add", `{"email":"e@example.com"}`},
		{"/campaign/list", `{"limit":1,"page":1}`}, // still serving after the panic
	} {
		resp := e.POST(req.path).WithHeader("x-api-key", "k").WithHeader("x-api-secret", "s").WithHeader("x-account-id", "a").
			WithBytes([]byte(req.body)).WithHeader("Content-Type", "application/json").Expect()
		expectError(resp, http.StatusInternalServerError, spec.MsgInternal)
	}
}

// TestWrap: the outer layer sees the handlers' final answer and may change
// it; the response still carries its request ID, and the journal records
// what the client got.
func TestWrap(t *testing.T) {
	s, err := sim.New(context.Background(), sim.Config{Insecure: true, AdminToken: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	var seen int
	s.Wrap = func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r)
			seen = rec.Code
			w.WriteHeader(http.StatusTeapot)
		})
	}
	req := httptest.NewRequest(http.MethodPost, spec.BasePath+"/campaign/list", strings.NewReader(`{}`))
	w := httptest.NewRecorder()
	s.Handler().ServeHTTP(w, req)
	if seen != http.StatusUnauthorized || w.Code != http.StatusTeapot || w.Header().Get("X-Request-Id") == "" {
		t.Fatalf("inner %d, outer %d, request ID %q", seen, w.Code, w.Header().Get("X-Request-Id"))
	}
	req = httptest.NewRequest(http.MethodGet, "/journal", nil)
	req.Header.Set("Authorization", "Bearer tok")
	w = httptest.NewRecorder()
	s.AdminHandler().ServeHTTP(w, req)
	var j struct{ Entries []simulator.JournalEntry }
	if err := json.Unmarshal(w.Body.Bytes(), &j); err != nil || len(j.Entries) != 1 || j.Entries[0].Status != http.StatusTeapot {
		t.Fatalf("journal %s (%v)", w.Body, err)
	}
}
