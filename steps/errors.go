package steps

// Spec §7: the errors common to all operations. The 500 row can be forced
// only on the simulator, through its control API.

import (
	"context"
	"fmt"

	"github.com/cucumber/godog"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/session"
)

func (s *scenario) registerErrors(sc *godog.ScenarioContext) {
	sc.Step(`^the simulator's control API is available$`, s.controlAPIAvailable)
	sc.Step(`^the simulator will answer the next `+opRE+` request with an unexpected failure$`, s.simulatorWillFail)
}

func (s *scenario) controlAPIAvailable() error {
	if s.Target.Control == nil {
		return session.Skipf("needs the simulator's control API (--admin-url, --admin-token)")
	}
	return nil
}

func (s *scenario) simulatorWillFail(ctx context.Context, op string) error {
	if s.Target.Control == nil {
		return session.Skipf("a 500 cannot be forced on a target without the simulator's control API (--admin-url, --admin-token)")
	}
	// Read what the valid request needs first, so the fault hits the
	// scenario's own request.
	if op == spec.OpCampaignStats {
		if _, err := s.ValidBody(ctx, op); err != nil {
			return err
		}
	}
	// Only the run's own account: other runs may share the simulator.
	fault := control.FaultSpec{AccountID: s.Target.Primary.AccountID, Operation: session.Operations[op], Kind: simulator.FaultError, Count: 1}
	if _, err := s.Target.Control.InjectFault(ctx, fault); err != nil {
		return fmt.Errorf("inject a fault through the control API: %w", err)
	}
	return nil
}
