package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/partner-v3/conformance-kit/simulator/sim"
)

// BenchmarkHandler measures each operation in-process (no TLS, no network):
// the server's own cost per request, auth and rate limit included.
func BenchmarkHandler(b *testing.B) {
	s, err := sim.New(context.Background(), sim.Config{Insecure: true, RateLimit: 1 << 30})
	if err != nil {
		b.Fatal(err)
	}
	h := s.Handler()
	a := s.Accounts[0]
	for _, bb := range []struct{ name, path, body string }{
		{"campaign-list-50", "/campaign/list", `{"limit":50,"page":2}`},
		{"campaign-stats", "/campaign/stats", `{"campaignId":999999}`},
		{"contact-add", "/contact/add", `{"email":"bench@example.com","firstName":"B","tag":["x"]}`},
	} {
		b.Run(bb.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				req := httptest.NewRequest(http.MethodPost, "/v3/partner/webhook"+bb.path, strings.NewReader(bb.body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("x-api-key", a.APIKey)
				req.Header.Set("x-api-secret", a.APISecret)
				req.Header.Set("x-account-id", a.AccountID)
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code >= 500 {
					b.Fatalf("status %d: %s", w.Code, w.Body)
				}
			}
		})
	}
}
