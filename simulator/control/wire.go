package control

import (
	"fmt"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
)

// The control API's wire types: the bodies its server (simulator/controlapi)
// decodes and answers, and this client encodes and decodes, declared once
// so the two cannot drift apart. They live here, in the client, because
// the server may import the client and the suite (steps) may import only
// the client: this file imports nothing of ours but the root package.
// Besides those below, the control API speaks the domain's AccountSpec,
// CreatedAccount, AccountInfo and Budget, JournalEntry, ClientReport and
// Contact (package simulator). Durations travel as Go duration strings
// ("1m0s"), times as simulator.Timestamp. docs/control-api.md documents
// each call.

// ConfigResponse is the answer of GET /config and GET /version: the limits
// the simulator enforces and, when it has one, what it was built and
// seeded with.
type ConfigResponse struct {
	// RateLimit requests per RateWindow (a Go duration) per account: spec
	// §8's 100 per minute unless the simulator was started with others.
	RateLimit  int    `json:"rateLimit"`
	RateWindow string `json:"rateWindow"`
	// MaxBodyBytes is the request body cap; BasePath the spec §1 prefix.
	MaxBodyBytes int64  `json:"maxBodyBytes"`
	BasePath     string `json:"basePath"`
	// Profile is the deployment profile the simulator plays (issue 20):
	// the default's when started without --profile. Nil (absent) from a
	// server that reports none.
	Profile *ProfileInfo `json:"profile,omitempty"`
	// BuildInfo is nil for a server that was given none (a bare
	// server.Server in a test): its fields are then absent from the JSON.
	*BuildInfo
}

// ProfileInfo names a deployment profile: its source's name and the
// digest of its canonical JSON (simulator/profile's Marshal and Digest).
type ProfileInfo struct {
	Name   string `json:"name"`
	Digest string `json:"digest"`
}

// BuildInfo is what a simulator reports of its build and seed data next to
// its limits (ConfigResponse).
type BuildInfo struct {
	// Version is the build's version ("dev" for a build without one).
	Version string `json:"version"`
	// Violations are the deliberate breaches of the spec switched on,
	// sorted; empty, never nil, for a faithful simulator.
	Violations []string `json:"violations"`
	// Seed and CampaignsPerAccount generated the campaigns; both nil when
	// they came from a campaigns file.
	Seed                *int64 `json:"seed,omitempty"`
	CampaignsPerAccount *int   `json:"campaignsPerAccount,omitempty"`
	// ContactsPerAccount fake contacts were seeded for each configured
	// account.
	ContactsPerAccount int `json:"contactsPerAccount"`
}

// ClockRequest is the body of POST /clock: one change of the clock. Its
// fields apply in the order reset, set, advance, freeze. With AccountID,
// only Reset and Advance apply, to that account's clock alone (the others
// answer 400).
type ClockRequest struct {
	AccountID string               `json:"accountId,omitempty"`
	Reset     bool                 `json:"reset,omitempty"`
	Set       *simulator.Timestamp `json:"set,omitempty"`
	// Advance is a positive Go duration, such as "61s".
	Advance string `json:"advance,omitempty"`
	Freeze  *bool  `json:"freeze,omitempty"`
}

// ClockResponse is the answer of GET and POST /clock: the time the
// simulator judges rate-limit windows (spec §8) and stamps records by.
type ClockResponse struct {
	// Now is the simulated time, to the millisecond; Offset (a Go
	// duration) how far it is from real time while not Frozen.
	Now    simulator.Timestamp `json:"now"`
	Offset string              `json:"offset"`
	Frozen bool                `json:"frozen"`
	// AccountID and AccountOffset are set when the clock asked for is one
	// account's: Now then includes that account's own offset.
	AccountID     string `json:"accountId,omitempty"`
	AccountOffset string `json:"accountOffset,omitempty"`
}

// RateResetRequest is the body of POST /rate-limit/reset: the account
// whose counted requests (spec §8) are forgotten; empty means every
// account's.
type RateResetRequest struct {
	AccountID string `json:"accountId"`
}

// FaultRequest is the body of POST /faults. A nil field is absent, which
// the server tells from a zero one: it takes the default when absent,
// refuses a field of another kind, and checks the bounds of one given
// (docs/control-api.md, "Faults").
type FaultRequest struct {
	Operation   string   `json:"operation"`
	Kind        string   `json:"kind"`
	AccountID   *string  `json:"accountId,omitempty"`
	Count       *int     `json:"count,omitempty"`
	Status      *int     `json:"status,omitempty"`
	RetryAfter  *int     `json:"retryAfter,omitempty"` // whole seconds
	Delay       *string  `json:"delay,omitempty"`      // a Go duration
	Probability *float64 `json:"probability,omitempty"`
}

// FaultResponse is one fault as the control API shows it (POST /faults,
// GET /faults, DELETE /faults/{id}): every default filled in, and only the
// field of its own kind.
type FaultResponse struct {
	ID          string  `json:"id"`
	Operation   string  `json:"operation"`
	AccountID   string  `json:"accountId,omitempty"`
	Kind        string  `json:"kind"`
	Remaining   int     `json:"remaining"`
	Status      int     `json:"status,omitempty"`
	RetryAfter  *int    `json:"retryAfter,omitempty"` // whole seconds
	Delay       string  `json:"delay,omitempty"`      // a Go duration
	Probability float64 `json:"probability"`
}

// NewFaultResponse shows f on the wire with the defaults a stored fault
// leaves zero: status 500, probability 1.
func NewFaultResponse(f simulator.Fault) FaultResponse {
	out := FaultResponse{ID: f.ID, Operation: f.Operation, AccountID: f.AccountID, Kind: f.Kind,
		Remaining: f.Remaining, Probability: f.Probability}
	if out.Probability == 0 {
		out.Probability = 1
	}
	switch f.Kind {
	case simulator.FaultError:
		out.Status = f.Status
		if out.Status == 0 {
			out.Status = 500 // spec §7's Internal server error
		}
	case simulator.FaultRateLimit:
		sec := int(f.RetryAfter / time.Second)
		out.RetryAfter = &sec
	case simulator.FaultDelay:
		out.Delay = f.Delay.String()
	}
	return out
}

// Fault returns the fault r shows. It fails only on a delay that is not a
// Go duration, which no simulator sends.
func (r FaultResponse) Fault() (simulator.Fault, error) {
	f := simulator.Fault{ID: r.ID, Operation: r.Operation, AccountID: r.AccountID, Kind: r.Kind,
		Remaining: r.Remaining, Status: r.Status, Probability: r.Probability}
	if r.RetryAfter != nil {
		f.RetryAfter = time.Duration(*r.RetryAfter) * time.Second
	}
	if r.Delay != "" {
		d, err := time.ParseDuration(r.Delay)
		if err != nil {
			return simulator.Fault{}, fmt.Errorf("fault %s: delay %q: %w", r.ID, r.Delay, err)
		}
		f.Delay = d
	}
	return f, nil
}

// FaultsResponse is the answer of GET /faults (oldest first) and of
// DELETE /faults (empty).
type FaultsResponse struct {
	Faults []FaultResponse `json:"faults"`
}

// JournalResponse is the answer of GET /journal (newest first) and of
// DELETE /journal (empty).
type JournalResponse struct {
	Entries []simulator.JournalEntry `json:"entries"`
}

// ContactsResponse is the answer of GET /contacts: one page of the stored
// contacts, oldest first, and how many match in all.
type ContactsResponse struct {
	Contacts []*simulator.Contact `json:"contacts"`
	Total    int                  `json:"total"`
}

// AccountsResponse is the answer of GET /accounts: the configured accounts
// in file order, then the throwaway ones, oldest first.
type AccountsResponse struct {
	Accounts []*simulator.AccountInfo `json:"accounts"`
}
