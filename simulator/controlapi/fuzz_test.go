package controlapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/controlapi"
	"github.com/partner-v3/conformance-kit/simulator/inmem"
	"github.com/partner-v3/conformance-kit/simulator/partnerapi"
)

// FuzzAdminBody drives the control API's bodies through its handler
// in-process (so it follows any change to the request structs): never a
// 5xx, every refusal a JSON 4xx with a message.
func FuzzAdminBody(f *testing.F) {
	for i, seed := range []string{
		`{"operation":"*","kind":"error"}`, `{"advance":"1m"}`, `{"accountId":"acc"}`, ``,
		`{"operation":"*","kind":"error"} x`, `{"operation":"*","kind":"delay","delay":"1ms","count":2}`,
		`{"freeze":true}`, `{"set":"2026-01-01T00:00:00.000Z"}`, `{"accountId":5}`, `[]`,
	} {
		f.Add(uint8(i), []byte(seed))
	}
	s := &partnerapi.API{Stores: partnerapi.Stores{
		Accounts: inmem.NewAccountStore([]*simulator.Account{{APIKey: "key", APISecret: "secret", AccountID: "acc"}}),
		Contacts: inmem.NewContactStore(), Campaigns: inmem.NewCampaignStore(),
		Counter: inmem.NewRateCounter(100, time.Minute), Control: inmem.NewControlStore(),
	}}
	cfg := s.ControlConfig()
	cfg.Token = "tok"
	h := controlapi.New(cfg)
	paths := []string{"/faults", "/clock", "/rate-limit/reset"}
	f.Fuzz(func(t *testing.T, p uint8, body []byte) {
		req := httptest.NewRequest(http.MethodPost, paths[int(p)%len(paths)], bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer tok")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		mustBeJSONAnswer(t, w, body)
		// Keep the store small across millions of runs.
		if err := s.Control.ResetControl(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}

// mustBeJSONAnswer: a 2xx or 4xx JSON object, a refusal's {"error":
// "<message>"} alone (as the partner API's fuzz targets check theirs).
func mustBeJSONAnswer(t *testing.T, w *httptest.ResponseRecorder, body []byte) {
	t.Helper()
	if w.Code >= 500 || w.Code < 200 || (w.Code >= 300 && w.Code < 400) {
		t.Fatalf("status %d for %q: %s", w.Code, body, w.Body)
	}
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q for %q", ct, body)
	}
	var obj map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &obj); err != nil {
		t.Fatalf("answer %q is not a JSON object: %v", w.Body, err)
	}
	if w.Code >= 400 {
		if msg, ok := obj["error"].(string); !ok || msg == "" || len(obj) != 1 {
			t.Fatalf(`%d answer %s, want {"error": "<message>"}`, w.Code, w.Body)
		}
	}
}
