package simulator

import "time"

// ClientReport is what the simulator saw one account's client do, judged
// against the spec: the control API's GET /accounts/{accountId}/report. A
// client that broke no rule has no findings (Clean).
type ClientReport struct {
	AccountID string `json:"accountId"`
	// Since is when the simulator started observing (start, reset, or the
	// account's creation); Requests is how many requests it attributed to
	// the account since.
	Since    time.Time `json:"since"`
	Requests int       `json:"requests"`
	// RateLimit and RateWindow are the limits the simulator ran with; the
	// burst finding is judged at the spec's 100 per minute regardless.
	RateLimit  int    `json:"rateLimit"`
	RateWindow string `json:"rateWindow"`
	Clean      bool   `json:"clean"`
	// Findings are ordered by spec section, then kind; never nil.
	Findings []Finding `json:"findings"`
}

// Finding is one kind of mistake the client made, with how often.
type Finding struct {
	// Kind names the mistake; one of the Finding* constants.
	Kind string `json:"kind"`
	// Section is the spec section the rule comes from, e.g. "§8".
	Section string `json:"section"`
	// Severity is "error" (the spec's rule is broken) or "warning" (allowed
	// but wasteful or risky).
	Severity string `json:"severity"`
	Title    string `json:"title"`
	Count    int    `json:"count"`
	// ExampleRequestID is one such request's id in the journal (the
	// X-Request-Id the simulator answered with).
	ExampleRequestID string `json:"exampleRequestId"`
	// Detail narrows the kind, e.g. the field of an invalid body or the
	// missing header. Empty when the kind says it all.
	Detail string `json:"detail,omitempty"`
	Advice string `json:"advice"`
}
