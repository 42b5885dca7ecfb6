package server

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
)

// TestForgetAndStartClient: DELETE /accounts (forgetClient) drops an
// account's report state; POST /accounts (startClient) starts it afresh
// from the account's creation.
func TestForgetAndStartClient(t *testing.T) {
	now := time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)
	s := &Server{Now: func() time.Time { return now }}
	s.init()
	s.reports.mu.Lock()
	st := s.reports.state("acc_tmp_x")
	st.requests = 3
	st.add("rate-limited", "", "req-1")
	s.reports.mu.Unlock()
	if got := s.clientReport("acc_tmp_x"); got.Requests != 3 || got.Clean {
		t.Fatalf("before forgetClient: %+v", got)
	}
	s.forgetClient("acc_tmp_x")
	if got := s.clientReport("acc_tmp_x"); got.Requests != 0 || !got.Clean || !got.Since.Equal(now) {
		t.Fatalf("after forgetClient: %+v", got)
	}
	now = now.Add(time.Hour)
	s.startClient("acc_tmp_x")
	if got := s.clientReport("acc_tmp_x"); !got.Since.Equal(now) {
		t.Fatalf("Since=%v after startClient, want %v", got.Since, now)
	}
}

// BenchmarkObserve is the client report's cost per answered request
// (observe, after the handler): an authenticated Campaign List, and an Add
// Contact whose email the account added before (hashing and a finding).
func BenchmarkObserve(b *testing.B) {
	now := time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)
	s := &Server{Now: func() time.Time { return now }}
	s.init()
	r := httptest.NewRequest(http.MethodPost, "/", nil)
	for _, tt := range []struct {
		name string
		note note
	}{
		{"campaign-list", note{counted: true}},
		{"contact-add-again", note{counted: true, added: true, email: "bench@example.com"}},
	} {
		b.Run(tt.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				rec := &requestRecord{entry: simulator.JournalEntry{RequestID: "req", AccountID: "acc", Status: 200}, note: tt.note}
				// One request a second: no burst.
				rec.note.now = now.Add(time.Duration(i) * time.Second)
				s.observe(r, rec)
			}
		})
	}
}
