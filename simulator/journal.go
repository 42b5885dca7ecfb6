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

// JournalDetail is one partner exchange in full, as GET /journal/{requestId}
// answers it (issue 30): the request's headers and body and the answer's,
// for the latest exchanges only (controlapi.Exchanges keeps a bounded
// ring of them beside the journal). Credentials are masked as in
// JournalEntry: the x-api-key masked, the x-api-secret never kept, and
// both, with the credentials of the account the request authenticated as
// or was attributed to, masked wherever else they appear (another header,
// a body).
type JournalDetail struct {
	RequestID string `json:"requestId"`
	// Entry is the request's journal entry; nil once the journal, which
	// keeps more requests than the ring of details, no longer holds it.
	Entry   *JournalEntry `json:"entry,omitempty"`
	Request Message       `json:"request"`
	Answer  Message       `json:"answer"`
}

// Message is one side of a JournalDetail: the headers and the body.
type Message struct {
	// Headers are in name order, each value on its own; a name sent
	// twice is there twice. The answer's are those the simulator set:
	// net/http adds Date (and Content-Length to an answer that has none)
	// as it writes them.
	Headers []Header `json:"headers"`
	// Body is the body as text, at most BodyKept bytes of it: the first
	// ones. Empty for none.
	Body string `json:"body"`
	// BodyBytes is the body's whole size as far as the simulator knows it:
	// the bytes it read or wrote, or the request's Content-Length when it
	// did not read it all.
	BodyBytes int64 `json:"bodyBytes"`
	// Truncated: Body is not the whole body; Note says why.
	Truncated bool `json:"truncated"`
	// Note says, in a sentence, what of the body is missing and why;
	// empty when Body is the whole body.
	Note string `json:"note,omitempty"`
}

// Header is one header line of a Message.
type Header struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}
