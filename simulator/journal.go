package simulator

import "time"

// JournalEntry is one partner request as the simulator saw it: what the
// control API's journal lists and what the client report (ClientReport) is
// judged from. Credentials never appear in it: the key is masked and the
// secret left out.
type JournalEntry struct {
	Time      time.Time `json:"time"`
	RequestID string    `json:"requestId"`
	Method    string    `json:"method"`
	Path      string    `json:"path"`
	Operation string    `json:"operation,omitempty"`
	APIKey    string    `json:"apiKey,omitempty"`
	// AccountID is the account the request authenticated as (spec §5).
	AccountID string `json:"accountId,omitempty"`
	// AttributedTo is, for a request refused before it authenticated, the
	// known account its x-api-key (first) or x-account-id named, or the
	// account whose key and secret a 403 matched: the account whose client
	// report counts it, and whose journal (GET /journal?accountId=) lists it.
	AttributedTo string `json:"attributedTo,omitempty"`
	Status       int    `json:"status"`
	// LatencyMS is the time until the answer's header went out (the entry
	// is recorded then, so a client finds it as soon as it has its answer),
	// or, for a request cut off without one, until its handler ended.
	LatencyMS float64 `json:"latencyMs"`
	// Fault is the kind of the injected fault that answered or delayed
	// the request, and FaultID its id; empty for none.
	Fault   string `json:"fault,omitempty"`
	FaultID string `json:"faultId,omitempty"`
}
