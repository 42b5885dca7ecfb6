package sim_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/alicebob/miniredis/v2"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/internal/apitest"
	"github.com/partner-v3/conformance-kit/simulator/sim"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// TestRedisGate_Violations: in Redis mode the rate switches of the
// violation layer still decide (the composition root falls back from the
// one-script gate to the decorated counter), and without them the faithful
// gate counts per account (spec §8).
func TestRedisGate_Violations(t *testing.T) {
	tests := []struct {
		name       string
		violations []string
		wantBravo  int // bravo's status after alpha spent the limit of 1
	}{
		{"the faithful gate counts each account apart", nil, http.StatusOK},
		{"rate-global counts every account under one key", []string{"rate-global"}, http.StatusTooManyRequests},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := miniredis.RunT(t)
			s, err := sim.New(context.Background(), sim.Config{Insecure: true, RedisURL: "redis://" + m.Addr() + "/0",
				RateLimit: 1, CampaignsPerAccount: 1, Violations: tt.violations, DataDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			h := s.Handler()
			list := func(a *simulator.Account) int {
				return apitest.Serve(h, a, spec.PathCampaignList, `{"limit":1,"page":1}`).Code
			}
			alpha, bravo := s.Accounts[0], s.Accounts[1]
			if got := list(alpha); got != http.StatusOK {
				t.Fatalf("alpha's first: %d", got)
			}
			if got := list(alpha); got != http.StatusTooManyRequests {
				t.Fatalf("alpha's second: %d, want 429", got)
			}
			if got := list(bravo); got != tt.wantBravo {
				t.Errorf("bravo's first: %d, want %d", got, tt.wantBravo)
			}
		})
	}
}
