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
	// Operation is one of the operation paths of package simulator/spec
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

// Request returns the body of POST /faults that asks for f: only the
// fields f sets, since the control API refuses a kind's field on another
// kind.
func (f FaultSpec) Request() FaultRequest {
	r := FaultRequest{Operation: f.Operation, Kind: f.Kind}
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

// InjectFault calls POST /faults and returns the stored fault, with its ID
// and every default filled in. Returns a 400 *Error naming the field for a
// spec the control API refuses.
func (c *Client) InjectFault(ctx context.Context, spec FaultSpec) (*simulator.Fault, error) {
	req := spec.Request()
	return c.fault(ctx, request{method: http.MethodPost, path: "/faults", in: &req})
}

// Faults calls GET /faults: the pending faults, oldest first; with an
// accountID, only the faults scoped to that account.
func (c *Client) Faults(ctx context.Context, accountID string) ([]simulator.Fault, error) {
	var out FaultsResponse
	if _, err := c.do(ctx, request{method: http.MethodGet, path: "/faults", query: accountQuery(accountID)}, &out); err != nil {
		return nil, err
	}
	fs := make([]simulator.Fault, 0, len(out.Faults))
	for _, j := range out.Faults {
		f, err := j.Fault()
		if err != nil {
			return nil, c.redact(fmt.Errorf("control: GET /faults: %w", err))
		}
		fs = append(fs, f)
	}
	return fs, nil
}

// DeleteFault calls DELETE /faults/{id} and returns the fault as it was.
// Returns a 404 *Error when there is none (consumed or never made).
func (c *Client) DeleteFault(ctx context.Context, id string) (*simulator.Fault, error) {
	return c.fault(ctx, request{method: http.MethodDelete, path: "/faults/" + url.PathEscape(id)})
}

// fault sends r, whose answer is one fault.
func (c *Client) fault(ctx context.Context, r request) (*simulator.Fault, error) {
	var out FaultResponse
	if _, err := c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	f, err := out.Fault()
	if err != nil {
		return nil, c.redact(fmt.Errorf("control: %s %s: %w", r.method, r.path, err))
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
