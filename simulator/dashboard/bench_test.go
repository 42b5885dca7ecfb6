package dashboard_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator/simtest"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// BenchmarkPartnerWithDashboard measures Campaign List (spec §4.2) over
// HTTPS, GOMAXPROCS parallel clients, with no dashboard open, with one
// whose journal stream is read as a browser reads it, and with one whose
// viewer stopped reading (the journal drops entries for it rather than
// wait). docs/performance.md, "The dashboard's journal stream (issue 30)",
// alternates the first two with farm-bench: the stream must cost the
// partner API under 5 %.
func BenchmarkPartnerWithDashboard(b *testing.B) {
	for _, viewer := range []string{"none", "streaming", "stalled"} {
		b.Run("viewer="+viewer, func(b *testing.B) {
			s := simtest.New(b, simtest.WithRateLimit(1_000_000_000, time.Minute))
			a := s.Accounts[0]
			if viewer != "none" {
				c, _ := session(b, s)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.AdminURL+"/ui/events", nil)
				res, err := c.Do(req)
				if err != nil || res.StatusCode != http.StatusOK {
					b.Fatalf("open the stream: %v", err)
				}
				defer res.Body.Close()
				if viewer == "streaming" {
					go func() {
						sc := bufio.NewScanner(res.Body)
						for sc.Scan() {
						}
					}()
				}
			}
			body := `{"limit": 50, "page": 1}`
			client := s.HTTPClient()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					req, _ := http.NewRequest(http.MethodPost, s.URL+"/"+spec.PathCampaignList, strings.NewReader(body))
					req.Header.Set("Content-Type", spec.ContentType)
					req.Header.Set(spec.HeaderAPIKey, a.APIKey)
					req.Header.Set(spec.HeaderAPISecret, a.APISecret)
					req.Header.Set(spec.HeaderAccountID, a.AccountID)
					res, err := client.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					_, _ = io.Copy(io.Discard, res.Body)
					res.Body.Close()
					if res.StatusCode != http.StatusOK {
						b.Errorf("status %d", res.StatusCode)
						return
					}
				}
			})
		})
	}
}
