package partnerapi

import (
	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/controlapi"
	"github.com/partner-v3/conformance-kit/simulator/httpjson"
)

// isControlPath reports whether path names a call of the control API
// (controlapi.IsControlPath).
func isControlPath(path string) bool { return controlapi.IsControlPath(path) }

// controlCallOnPartnerPort is the 404 of a control call sent to the partner
// port: where the control API listens, and the flag that sets it.
func (s *API) controlCallOnPartnerPort(path string) error {
	where := "this simulator runs without it (--admin-addr or SIM_ADMIN_ADDR is empty)"
	if s.AdminURL != nil {
		if u := s.AdminURL(); u != "" {
			where = "here " + u
		}
	}
	return simulator.Errorf(simulator.ENOTFOUND, "No operation at %s: %s is a call of the control API, which listens on its own address, set by --admin-addr (SIM_ADMIN_ADDR): %s",
		httpjson.QuotePath(path), httpjson.QuotePath(path), where)
}
