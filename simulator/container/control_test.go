package container_test

import (
	"testing"

	"github.com/partner-v3/conformance-kit/simulator/container"
	"github.com/partner-v3/conformance-kit/simulator/simtest"
)

// Control reaches the control API at AdminURL with AdminToken, trusting
// CACertPEM only. An in-process simulator stands in for the container: the
// method reads nothing else, so the test needs no Docker.
func TestControlUsesTheContainersAddressTokenAndCertificate(t *testing.T) {
	t.Parallel()
	s := simtest.New(t, simtest.WithSeed(9))
	c := &container.Container{AdminURL: s.AdminURL, AdminToken: s.AdminToken, CACertPEM: s.CACertPEM}
	cfg, err := c.Control().Config(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Seed != 9 {
		t.Errorf("Config().Seed = %d, want 9", cfg.Seed)
	}
	other := simtest.New(t)
	c.CACertPEM = other.CACertPEM
	if _, err := c.Control().Config(t.Context()); err == nil {
		t.Error("Control trusted a certificate other than CACertPEM")
	}
}
