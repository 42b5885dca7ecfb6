package suite

import (
	"context"
	"fmt"

	"github.com/partner-v3/conformance-kit/steps/internal/record"
	"github.com/partner-v3/conformance-kit/steps/probe"
)

// Probe is the client-eye comparison of two live sides (conformance diff
// --probe, issue 28): each side is resolved and preflighted as a run's
// target is (a wrong address or refused credentials are ErrConfig,
// ErrConnection or ErrPreflight, saying what to fix), then package probe
// sends the same requests to both, each side paced within its own budget
// (§8). a's Log receives the progress lines.
func Probe(ctx context.Context, a, b Config) (*probe.Report, error) {
	var sides [2]*run
	for i, cfg := range []Config{a, b} {
		r, err := begin(ctx, cfg, false)
		if r != nil {
			defer r.close(ctx)
		}
		if err != nil {
			return nil, fmt.Errorf("side %c: %w", 'A'+i, err)
		}
		sides[i] = r
	}
	ctx = record.WithScenario(ctx, "probe")
	rep, err := probe.Run(ctx, probe.Env{A: sides[0].Target, B: sides[1].Target, Log: sides[0].cfg.Log})
	if err != nil {
		return nil, hideSecrets(sides[1].Secrets, hideSecrets(sides[0].Secrets, err))
	}
	return rep, nil
}
