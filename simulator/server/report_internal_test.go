package server

import (
	"testing"
	"time"
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
