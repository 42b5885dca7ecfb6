package inmem_test

import (
	"context"
	"sync"
	"testing"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/inmem"
)

// generator makes two campaigns for any account and counts its calls.
type generator struct {
	mu    sync.Mutex
	calls map[string]int
}

func (g *generator) generate(_ context.Context, accountID string) ([]*simulator.Campaign, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.calls[accountID]++
	if accountID == "unknown" {
		return nil, nil
	}
	var out []*simulator.Campaign
	for _, id := range []int64{20, 10} { // out of order: the store sorts
		out = append(out, &simulator.Campaign{CampaignRecord: simulator.CampaignRecord{ID: id}, AccountID: accountID})
	}
	return out, nil
}

func (g *generator) count(accountID string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.calls[accountID]
}

// TestCampaignStore_Generate: an account with no seeded campaigns gets the
// generated ones, made once while cached; the cache keeps the accounts used
// last, and a forgotten account is generated again.
func TestCampaignStore_Generate(t *testing.T) {
	ctx := context.Background()
	g := &generator{calls: map[string]int{}}
	s := inmem.NewCampaignStore()
	s.Generate, s.CacheSize = g.generate, 2
	seeded := []*simulator.Campaign{{CampaignRecord: simulator.CampaignRecord{ID: 5}, AccountID: "acc_seeded"}}
	if _, err := s.SeedCampaigns(ctx, "v1", seeded); err != nil {
		t.Fatal(err)
	}

	find := func(account string) []int64 {
		t.Helper()
		cs, total, err := s.FindCampaigns(ctx, simulator.CampaignFilter{AccountID: account})
		if err != nil {
			t.Fatal(err)
		}
		if total != len(cs) {
			t.Fatalf("total %d for %d campaigns", total, len(cs))
		}
		var ids []int64
		for _, c := range cs {
			ids = append(ids, c.ID)
		}
		return ids
	}
	if got := find("acc_seeded"); len(got) != 1 || got[0] != 5 {
		t.Fatalf("seeded account's campaigns = %v", got)
	}
	if got := g.count("acc_seeded"); got != 0 {
		t.Fatalf("a seeded account was generated %d times", got)
	}
	if got := find("a"); len(got) != 2 || got[0] != 10 || got[1] != 20 {
		t.Fatalf("generated campaigns = %v, want [10 20]", got)
	}
	c, err := s.FindCampaignByID(ctx, "a", 20)
	if err != nil || c.ID != 20 {
		t.Fatalf("FindCampaignByID(a, 20) = %v, %v", c, err)
	}
	if _, err := s.FindCampaignByID(ctx, "a", 5); simulator.ErrorCode(err) != simulator.ENOTFOUND {
		t.Fatalf("another account's campaign: %v, want ENOTFOUND", err)
	}
	if got := g.count("a"); got != 1 {
		t.Fatalf("a generated %d times while cached, want 1", got)
	}

	// b and then c push a, the least recently used, out of a cache of 2.
	find("b")
	find("a") // a is used again: b is now the oldest
	find("c")
	find("a")
	if got := g.count("a"); got != 1 {
		t.Fatalf("a generated %d times, want 1 (recently used, kept)", got)
	}
	find("b")
	if got := g.count("b"); got != 2 {
		t.Fatalf("b generated %d times, want 2 (evicted, then made again)", got)
	}

	s.ForgetCampaigns("a")
	find("a")
	if got := g.count("a"); got != 2 {
		t.Fatalf("a generated %d times after ForgetCampaigns, want 2", got)
	}

	// An account the generator does not know has none, and is not cached.
	find("unknown")
	find("unknown")
	if got := g.count("unknown"); got != 2 {
		t.Fatalf("unknown generated %d times, want 2 (not cached)", got)
	}
}
