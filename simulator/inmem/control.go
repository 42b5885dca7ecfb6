package inmem

import (
	"context"
	"sync"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
)

var _ simulator.ControlStore = (*ControlStore)(nil)

// ControlStore keeps the control API's clock and faults in memory.
type ControlStore struct {
	mu      sync.Mutex
	clock   simulator.Clock
	offsets map[string]time.Duration
	faults  []simulator.Fault
}

// NewControlStore returns a store with the real clock and no faults.
func NewControlStore() *ControlStore { return &ControlStore{} }

// Clock implements simulator.ControlStore.
func (s *ControlStore) Clock(context.Context) (simulator.Clock, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clock, nil
}

// SetClock implements simulator.ControlStore.
func (s *ControlStore) SetClock(_ context.Context, c simulator.Clock) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock = c
	return nil
}

// AddFault implements simulator.ControlStore.
func (s *ControlStore) AddFault(_ context.Context, f simulator.Fault) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, f)
	return nil
}

// TakeFault implements simulator.ControlStore.
func (s *ControlStore) TakeFault(_ context.Context, q simulator.FaultQuery) (*simulator.Fault, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	draw := q.Draw
	for i := range s.faults {
		f := &s.faults[i]
		if !f.Applies(q.Operation, q.AccountID) {
			continue
		}
		var hit bool
		if hit, draw = f.Hits(draw); !hit {
			continue
		}
		f.Remaining--
		taken := *f
		if f.Remaining <= 0 {
			s.faults = append(s.faults[:i], s.faults[i+1:]...)
		}
		return &taken, nil
	}
	return nil, nil
}

// DeleteFault implements simulator.ControlStore.
func (s *ControlStore) DeleteFault(_ context.Context, id string) (*simulator.Fault, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, f := range s.faults {
		if f.ID == id {
			s.faults = append(s.faults[:i], s.faults[i+1:]...)
			return &f, nil
		}
	}
	return nil, simulator.Errorf(simulator.ENOTFOUND, "No fault %s", id)
}

// Faults implements simulator.ControlStore.
func (s *ControlStore) Faults(context.Context) ([]simulator.Fault, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]simulator.Fault(nil), s.faults...), nil
}

// ClearFaults implements simulator.ControlStore.
func (s *ControlStore) ClearFaults(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = nil
	return nil
}

// ResetControl implements simulator.ControlStore.
func (s *ControlStore) ResetControl(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock, s.offsets, s.faults = simulator.Clock{}, nil, nil
	return nil
}

// AccountOffset implements simulator.ControlStore.
func (s *ControlStore) AccountOffset(_ context.Context, accountID string) (time.Duration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.offsets[accountID], nil
}

// SetAccountOffset implements simulator.ControlStore.
func (s *ControlStore) SetAccountOffset(_ context.Context, accountID string, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d == 0 {
		delete(s.offsets, accountID)
		return nil
	}
	if s.offsets == nil {
		s.offsets = map[string]time.Duration{}
	}
	s.offsets[accountID] = d
	return nil
}
