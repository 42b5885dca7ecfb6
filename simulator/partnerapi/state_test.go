package partnerapi

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/inmem"
)

type otherKey struct{}

// TestStateContext: the one state value per request answers what the
// layered contexts answered before (issue 21): the record, the account
// once authenticated (simulator.AccountFromContext), the admission time
// once admitted, and everything else from the request's own context,
// cancellation included.
func TestStateContext(t *testing.T) {
	a := &simulator.Account{AccountID: "acc-1"}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name        string
		account     *simulator.Account
		admitted    bool
		wantAccount *simulator.Account
		wantNow     bool // requestTime answers record.Now
	}{
		{"before authentication", nil, false, nil, false},
		{"authenticated, not admitted yet", a, false, a, false},
		{"authenticated and admitted", a, true, a, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent, cancel := context.WithCancel(context.WithValue(context.Background(), otherKey{}, "kept"))
			st := &requestState{account: tt.account, admitted: tt.admitted}
			st.record.Now = at
			r := httptest.NewRequest("POST", "/", nil)
			r = r.WithContext(&stateContext{Context: parent, st: st})
			if got := recordFrom(r); got != &st.record {
				t.Fatalf("recordFrom = %p, want the state's record %p", got, &st.record)
			}
			if !partnerRequest(r) {
				t.Fatal("partnerRequest = false, want true")
			}
			if got := simulator.AccountFromContext(r.Context()); got != tt.wantAccount {
				t.Fatalf("AccountFromContext = %v, want %v", got, tt.wantAccount)
			}
			if got := r.Context().Value(otherKey{}); got != "kept" {
				t.Fatalf("Value(otherKey) = %v, want the parent's", got)
			}
			s := &API{Now: func() time.Time { return at.Add(time.Hour) }, Stores: Stores{Control: inmem.NewControlStore()}}
			now, err := s.requestTime(r)
			if want := tt.wantNow; err != nil || now.Equal(at) != want {
				t.Fatalf("requestTime = %v, %v; record.Now answered: %v, want %v", now, err, now.Equal(at), want)
			}
			cancel()
			select {
			case <-r.Context().Done():
			case <-time.After(time.Second):
				t.Fatal("the state's context was not cancelled with the request's")
			}
		})
	}
}
