package controlapi_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/controlapi"
	"github.com/partner-v3/conformance-kit/simulator/inmem"
	"github.com/partner-v3/conformance-kit/simulator/internal/apitest"
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
		apitest.MustBeJSONAnswer(t, w, body)
		// Keep the store small across millions of runs.
		if err := s.Control.ResetControl(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}
