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

// FillMirror is the Gate's fill step (fillScript) alone, and AdmitFilled
// the decision with a fill's reply to write first: a test holds a fill
// back to land after a change, as a slow replica's would.
func (g *Gate) FillMirror(ctx context.Context, accountID string) ([]string, error) {
	return fillScript.Run(ctx, g.db.client, g.db.globalStateKeys(), accountID).StringSlice()
}

func (g *Gate) AdmitFilled(ctx context.Context, a simulator.Arrival, id string, fill []string) ([]any, error) {
	return g.admitMirrored(ctx, a, id, fill)
}

// ClearFaultsFlag is the Gate's clear of an account's faults flag, for
// the version v a take saw with no fault pending.
func (g *Gate) ClearFaultsFlag(ctx context.Context, accountID, v string) error {
	return clearFlagScript.Run(ctx, g.db.client, []string{g.db.mirrorKey(accountID)}, v).Err()
}
