package controlapi

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/simulator/httpjson"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// Bounds of the control API's fault fields.
const (
	maxFaultCount      = 1_000_000
	maxFaultRetryAfter = 24 * 60 * 60 // seconds
)

// fault checks every field of req and returns the fault it asks for, or an
// EINVALID naming the first field that is wrong.
func (api *API) fault(r *http.Request, req control.FaultRequest) (simulator.Fault, error) {
	invalid := func(format string, args ...any) (simulator.Fault, error) {
		return simulator.Fault{}, simulator.Errorf(simulator.EINVALID, format, args...)
	}
	f := simulator.Fault{Operation: req.Operation, Kind: req.Kind, Remaining: 1, Probability: 1}
	if f.Operation != "*" && !slices.Contains(spec.Paths(), f.Operation) {
		return invalid("operation must be one of %s or *", strings.Join(spec.Paths(), ", "))
	}
	if !slices.Contains(simulator.FaultKinds, f.Kind) {
		return invalid("kind must be one of %s", strings.Join(simulator.FaultKinds, ", "))
	}
	if req.Count != nil {
		if f.Remaining = *req.Count; f.Remaining < 1 || f.Remaining > maxFaultCount {
			return invalid("count must be a whole number between 1 and %d", maxFaultCount)
		}
	}
	if req.Probability != nil {
		// NaN fails both comparisons' complement: it is refused too.
		if p := *req.Probability; !(p > 0 && p <= 1) {
			return invalid("probability must be a number greater than 0 and at most 1")
		}
		f.Probability = *req.Probability
	}
	if req.AccountID != nil {
		_, err := api.Accounts.LookupAccount(r.Context(), simulator.AccountLookup{AccountIDs: []string{*req.AccountID}})
		if simulator.ErrorCode(err) == simulator.ENOTFOUND {
			return invalid("accountId %q names no account of this simulator", *req.AccountID)
		} else if err != nil {
			return simulator.Fault{}, fmt.Errorf("look up account: %w", err)
		}
		f.AccountID = *req.AccountID
	}
	// Each kind's own field, and only its own.
	only := func(present bool, field, kind string) error {
		if present && f.Kind != kind {
			return simulator.Errorf(simulator.EINVALID, "%s applies only to kind %s", field, kind)
		}
		return nil
	}
	for _, err := range []error{
		only(req.Status != nil, "status", simulator.FaultError),
		only(req.RetryAfter != nil, "retryAfter", simulator.FaultRateLimit),
		only(req.Delay != nil, "delay", simulator.FaultDelay),
	} {
		if err != nil {
			return simulator.Fault{}, err
		}
	}
	switch f.Kind {
	case simulator.FaultError:
		f.Status = http.StatusInternalServerError
		if req.Status != nil {
			if f.Status = *req.Status; f.Status < 500 || f.Status > 599 {
				return invalid("status must be a 5xx status, from 500 to 599")
			}
		}
	case simulator.FaultRateLimit:
		sec := 1
		if req.RetryAfter != nil {
			if sec = *req.RetryAfter; sec < 0 || sec > maxFaultRetryAfter {
				return invalid("retryAfter must be whole seconds from 0 to %d", maxFaultRetryAfter)
			}
		}
		f.RetryAfter = time.Duration(sec) * time.Second
	case simulator.FaultDelay:
		if req.Delay == nil {
			return invalid("delay is required with kind delay: a duration between 1ms and %s, such as 2s", MaxFaultDelay)
		}
		d, err := time.ParseDuration(*req.Delay)
		if err != nil || d < time.Millisecond || d > MaxFaultDelay {
			return invalid("delay must be a duration between 1ms and %s, such as 2s", MaxFaultDelay)
		}
		f.Delay = d
	}
	return f, nil
}

func (api *API) handleAdminFaultsAdd(w http.ResponseWriter, r *http.Request) {
	var req control.FaultRequest
	if err := api.decode(r, &req); err != nil {
		api.Error(w, r, err)
		return
	}
	f, err := api.fault(r, req)
	if err != nil {
		api.Error(w, r, err)
		return
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	f.ID = "flt_" + hex.EncodeToString(b[:])
	if err := api.Control.AddFault(r.Context(), f); err != nil {
		api.Error(w, r, fmt.Errorf("add fault: %w", err))
		return
	}
	httpjson.Write(w, http.StatusCreated, control.NewFaultResponse(f))
}

// accountFaults lists the pending faults, only those of the account the
// query's accountId names when it names one (a CI job's own).
func (api *API) accountFaults(r *http.Request) ([]simulator.Fault, error) {
	fs, err := api.Control.Faults(r.Context())
	if err != nil {
		return nil, fmt.Errorf("list faults: %w", err)
	}
	if !r.URL.Query().Has("accountId") {
		return fs, nil
	}
	account := r.URL.Query().Get("accountId")
	out := fs[:0]
	for _, f := range fs {
		if f.AccountID == account {
			out = append(out, f)
		}
	}
	return out, nil
}

func (api *API) handleAdminFaultsGet(w http.ResponseWriter, r *http.Request) {
	fs, err := api.accountFaults(r)
	if err != nil {
		api.Error(w, r, err)
		return
	}
	out := make([]control.FaultResponse, 0, len(fs))
	for _, f := range fs {
		out = append(out, control.NewFaultResponse(f))
	}
	httpjson.Write(w, http.StatusOK, &control.FaultsResponse{Faults: out})
}

// handleAdminFaultsClear removes every pending fault, or, with
// ?accountId=, the faults of that account only.
func (api *API) handleAdminFaultsClear(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Has("accountId") {
		fs, err := api.accountFaults(r)
		if err != nil {
			api.Error(w, r, err)
			return
		}
		for _, f := range fs {
			// One taken to zero meanwhile is gone already: that is fine.
			if _, err := api.Control.DeleteFault(r.Context(), f.ID); err != nil && simulator.ErrorCode(err) != simulator.ENOTFOUND {
				api.Error(w, r, fmt.Errorf("delete fault: %w", err))
				return
			}
		}
	} else if err := api.Control.ClearFaults(r.Context()); err != nil {
		api.Error(w, r, fmt.Errorf("clear faults: %w", err))
		return
	}
	httpjson.Write(w, http.StatusOK, &control.FaultsResponse{Faults: []control.FaultResponse{}})
}

// handleAdminFaultDelete removes one fault and answers it as it was.
func (api *API) handleAdminFaultDelete(w http.ResponseWriter, r *http.Request) {
	f, err := api.Control.DeleteFault(r.Context(), r.PathValue("id"))
	if err != nil {
		if simulator.ErrorCode(err) != simulator.ENOTFOUND {
			err = fmt.Errorf("delete fault: %w", err)
		}
		api.Error(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, control.NewFaultResponse(*f))
}
