// Package target holds what one run of the suite resolved about its
// target, once, for everything below the runner that sends it requests:
// the step library (steps.Env) and the profile's probes (learn.Env) both
// embed a Target, so each of these facts is declared, documented and
// filled in one place (package steps/suite, when the run starts).
package target

import (
	"net/http"
	"net/url"

	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/steps/internal/mask"
	"github.com/partner-v3/conformance-kit/steps/internal/pace"
)

// Target is the target of one run as the runner resolved it: where it is
// and how requests reach it, the accounts used there (the throwaway ones
// when the run made them), the simulator's control API when there is one,
// what the run may write there, and the values no report may show. It is
// built once per run and never changed after; its users read it.
type Target struct {
	// BaseURL is the target's base address (spec §1), parsed once.
	BaseURL *url.URL
	// Client sends every partner request: paced by Pacer, budget-aware,
	// recorded.
	Client *http.Client
	// Pacer keeps the run within the target's rate limit (spec §8); its
	// Limit and Window are the limit the run assumes.
	Pacer *pace.Pacer
	// Primary is the account every request uses unless it says otherwise.
	// Second may be zero: the run has no second account.
	Primary, Second control.Credentials
	// Control is the simulator's control API. May be nil (any other
	// target): rate-limit windows are then waited for instead of skipped
	// over with its clock, and what needs it is skipped.
	Control *control.Client
	// InProcess reports that requests never cross a network (the target is
	// an http.Handler): the transport of §1 and HTTP/2 cannot be checked.
	InProcess bool
	// ReadOnly is set for a run that creates no contacts (a production
	// target).
	ReadOnly bool
	// EmailDomain is the domain of the contacts the run creates.
	EmailDomain string
	// RunID is part of every address the run creates. May be empty.
	RunID string
	// Secrets hides the run's secret values (both accounts' credentials,
	// the control API's token) in everything reported: exchanges,
	// messages, evidence. May be nil: only the credential headers are
	// masked, by name.
	Secrets *mask.Secrets
}
