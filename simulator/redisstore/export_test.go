package redisstore

import (
	"context"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
)

// The calls with their unique id given, so that a test can send one call
// twice, as go-redis's retry does when a reply is lost.

func (r *RateCounter) TakeCall(ctx context.Context, key string, now time.Time, id string) (simulator.RateDecision, error) {
	return r.take(ctx, key, now, simulator.RatePolicy{}, id)
}

func (g *Gate) AdmitCall(ctx context.Context, a simulator.Arrival, id string) (simulator.Admission, error) {
	return g.admit(ctx, a, id)
}

func (s *ControlStore) AddFaultCall(ctx context.Context, f simulator.Fault, id string) error {
	return s.addFault(ctx, f, id)
}

func (s *ControlStore) TakeFaultCall(ctx context.Context, q simulator.FaultQuery, id string) (*simulator.Fault, error) {
	return s.takeFault(ctx, q, id)
}

func (s *ControlStore) DeleteFaultCall(ctx context.Context, faultID, id string) (*simulator.Fault, error) {
	return s.deleteFault(ctx, faultID, id)
}

func (r *RateCounter) TakePolicyCall(ctx context.Context, key string, now time.Time, p simulator.RatePolicy, id string) (simulator.RateDecision, error) {
	return r.take(ctx, key, now, p, id)
}
