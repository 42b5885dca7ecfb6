package server

import (
	"net/http"

	"github.com/partner-v3/conformance-kit/fixtures/profile"
)

// defaultProfile is the simulator's own choices (fixtures/profile's
// default.json), read once.
var defaultProfile = profile.Default()

// profileFor returns the deployment profile a request plays
// (docs/fidelity.md): the server's Profile, else the default.
func (s *Server) profileFor(r *http.Request) *profile.Profile {
	if s.Profile != nil {
		return s.Profile
	}
	return defaultProfile
}
