package control_test

import (
	"context"
	"strings"
	"testing"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/simulator/simtest"
)

// TestProfiles: the client reads the profile a simulator plays (GET
// /config) and makes a throwaway account that plays its own (POST
// /accounts {"profile": …}), whose digest GET /accounts/{id} names; a
// profile the simulator refuses is an error naming Check's reason.
func TestProfiles(t *testing.T) {
	t.Parallel()
	staging := profile.Default()
	staging.Source.Name = "staging"
	s := simtest.New(t, simtest.WithProfile(staging), simtest.WithCampaigns(1))
	c, ctx := s.Control, context.Background()

	cfg, err := c.Config(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Profile.Name != "staging" || !strings.HasPrefix(cfg.Profile.Digest, "sha256:") {
		t.Fatalf("Config().Profile = %+v, want staging and a digest", cfg.Profile)
	}

	own := profile.Default()
	own.Source.Name = "own"
	own.Rate.Window.Value = profile.WindowFixedClock
	data, err := own.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	created, err := c.CreateAccount(ctx, simulator.AccountSpec{Profile: data})
	if err != nil {
		t.Fatal(err)
	}
	if created.ProfileDigest != profile.Digest(data) || created.ProfileDigest == cfg.Profile.Digest {
		t.Fatalf("created profileDigest %q, want %q", created.ProfileDigest, profile.Digest(data))
	}
	info, err := c.Account(ctx, created.AccountID)
	if err != nil {
		t.Fatal(err)
	}
	if info.ProfileDigest != created.ProfileDigest {
		t.Fatalf("Account().ProfileDigest %q, want %q", info.ProfileDigest, created.ProfileDigest)
	}

	bad := strings.Replace(string(data), `"value": "fixed-clock"`, `"value": "leaky-bucket"`, 1)
	if _, err := c.CreateAccount(ctx, simulator.AccountSpec{Profile: []byte(bad)}); err == nil || !strings.Contains(err.Error(), "rateLimit.window") {
		t.Fatalf("CreateAccount with a refused profile: %v, want an error naming rateLimit.window", err)
	}
}
