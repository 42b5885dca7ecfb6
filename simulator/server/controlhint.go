package server

import (
	"strings"

	"github.com/partner-v3/conformance-kit/simulator"
)

// controlPaths are the first path elements of the control API's calls
// (AdminHandler, docs/control-api.md). A request for one of them on the
// partner port is a client that mixed up the two listeners: its 404 says
// where the control API is (issue 27). GET /healthz answers on both.
var controlPaths = []string{"/reset", "/clock", "/rate-limit", "/faults", "/journal", "/contacts", "/accounts", "/config", "/version", "/metrics", "/debug/pprof"}

// isControlPath reports whether path names a call of the control API.
func isControlPath(path string) bool {
	for _, p := range controlPaths {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// controlCallOnPartnerPort is the 404 of a control call sent to the partner
// port: where the control API listens, and the flag that sets it.
func (s *Server) controlCallOnPartnerPort(path string) error {
	where := "this simulator runs without it (--admin-addr or SIM_ADMIN_ADDR is empty)"
	if u := s.AdminURL(); u != "" {
		where = "here " + u
	}
	return simulator.Errorf(simulator.ENOTFOUND, "No operation at %s: %s is a call of the control API, which listens on its own address, set by --admin-addr (SIM_ADMIN_ADDR): %s",
		quotePath(path), quotePath(path), where)
}
