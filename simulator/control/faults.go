package control

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
)

// FaultSpec asks for an injected failure (POST /faults). Zero fields take
// the control API's defaults.
type FaultSpec struct {
	// Operation is one of the operation paths of package fixtures/spec
	// (spec.PathCampaignList, …) or "*" for all three. Required.
	Operation string
	// Kind is one of simulator.FaultKinds. Required.
	Kind string
	// AccountID limits the fault to that account's requests; empty means
	// every account's. It must name an account of the simulator.
	AccountID string
	// Count is how many matching requests are faulted; 0 means 1.
	Count int
	// Status is the 5xx status of kind simulator.FaultError; 0 means 500.
	Status int
	// RetryAfter is the Retry-After of kind simulator.FaultRateLimit, in
	// whole seconds; 0 means the control API's default, 1 second.
	RetryAfter time.Duration
	// Delay is the wait of kind simulator.FaultDelay, between 1ms and the
	// simulator's maximum. Required with that kind.
	Delay time.Duration
	// Probability in (0, 1] faults each matching request with that
	// probability; 0 means 1 (every one).
	Probability float64
}

// faultRequest is the wire body of POST /faults: only the fields given,
// since the control API refuses a kind's field on another kind.
type faultRequest struct {
	Operation   string   `json:"operation"`
	Kind        string   `json:"kind"`
	AccountID   *string  `json:"accountId,omitempty"`
	Count       *int     `json:"count,omitempty"`
	Status      *int     `json:"status,omitempty"`
	RetryAfter  *int     `json:"retryAfter,omitempty"`
	Delay       *string  `json:"delay,omitempty"`
	Probability *float64 `json:"probability,omitempty"`
}

func (f FaultSpec) request() faultRequest {
	r := faultRequest{Operation: f.Operation, Kind: f.Kind}
	if f.AccountID != "" {
		r.AccountID = &f.AccountID
	}
	if f.Count != 0 {
		r.Count = &f.Count
	}
	if f.Status != 0 {
		r.Status = &f.Status
	}
	if f.RetryAfter != 0 {
		sec := int((f.RetryAfter + time.Second - 1) / time.Second) // whole seconds, rounded up
		r.RetryAfter = &sec
	}
	if f.Delay != 0 {
		d := f.Delay.String()
		r.Delay = &d
	}
	if f.Probability != 0 {
		r.Probability = &f.Probability
	}
	return r
}

// faultJSON is a stored fault on the control API's wire.
type faultJSON struct {
	ID          string  `json:"id"`
	Operation   string  `json:"operation"`
	AccountID   string  `json:"accountId"`
	Kind        string  `json:"kind"`
	Remaining   int     `json:"remaining"`
	Status      int     `json:"status"`
	RetryAfter  *int    `json:"retryAfter"`
	Delay       string  `json:"delay"`
	Probability float64 `json:"probability"`
}

func (f faultJSON) fault() (simulator.Fault, error) {
	out := simulator.Fault{ID: f.ID, Operation: f.Operation, AccountID: f.AccountID, Kind: f.Kind,
		Remaining: f.Remaining, Status: f.Status, Probability: f.Probability}
	if f.RetryAfter != nil {
		out.RetryAfter = time.Duration(*f.RetryAfter) * time.Second
	}
	if f.Delay != "" {
		d, err := time.ParseDuration(f.Delay)
		if err != nil {
			return simulator.Fault{}, fmt.Errorf("fault %s: delay %q: %w", f.ID, f.Delay, err)
		}
		out.Delay = d
	}
	return out, nil
}

// InjectFault calls POST /faults and returns the stored fault, with its ID
// and every default filled in. Returns a 400 *Error naming the field for a
// spec the control API refuses.
func (c *Client) InjectFault(ctx context.Context, spec FaultSpec) (*simulator.Fault, error) {
	var out faultJSON
	if _, err := c.do(ctx, request{method: http.MethodPost, path: "/faults", in: spec.request()}, &out); err != nil {
		return nil, err
	}
	f, err := out.fault()
	if err != nil {
		return nil, fmt.Errorf("control: POST /faults: %w", err)
	}
	return &f, nil
}

// Faults calls GET /faults: the pending faults, oldest first; with an
// accountID, only the faults scoped to that account.
func (c *Client) Faults(ctx context.Context, accountID string) ([]simulator.Fault, error) {
	var out struct {
		Faults []faultJSON `json:"faults"`
	}
	if _, err := c.do(ctx, request{method: http.MethodGet, path: "/faults", query: accountQuery(accountID)}, &out); err != nil {
		return nil, err
	}
	fs := make([]simulator.Fault, 0, len(out.Faults))
	for _, j := range out.Faults {
		f, err := j.fault()
		if err != nil {
			return nil, fmt.Errorf("control: GET /faults: %w", err)
		}
		fs = append(fs, f)
	}
	return fs, nil
}

// DeleteFault calls DELETE /faults/{id} and returns the fault as it was.
// Returns a 404 *Error when there is none (consumed or never made).
func (c *Client) DeleteFault(ctx context.Context, id string) (*simulator.Fault, error) {
	var out faultJSON
	if _, err := c.do(ctx, request{method: http.MethodDelete, path: "/faults/" + url.PathEscape(id)}, &out); err != nil {
		return nil, err
	}
	f, err := out.fault()
	if err != nil {
		return nil, fmt.Errorf("control: DELETE /faults/%s: %w", id, err)
	}
	return &f, nil
}

// ClearFaults calls DELETE /faults: every pending fault goes, or, with an
// accountID, the faults scoped to that account only.
func (c *Client) ClearFaults(ctx context.Context, accountID string) error {
	_, err := c.do(ctx, request{method: http.MethodDelete, path: "/faults", query: accountQuery(accountID)}, nil)
	return err
}

func accountQuery(accountID string) url.Values {
	if accountID == "" {
		return nil
	}
	return url.Values{"accountId": {accountID}}
}
