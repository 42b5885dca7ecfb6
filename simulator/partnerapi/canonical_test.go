package partnerapi

import (
	"net/http"
	"testing"

	"github.com/partner-v3/conformance-kit/simulator/httpjson"
)

// TestHeaderNamesCanonical: the header names the hot path assigns or reads
// straight in the map, skipping Header.Set, Get and Values (issue 21), are the canonical forms
// Set would have written on the wire; a name that is not would reach the
// client as written and be missed by Header.Get.
func TestHeaderNamesCanonical(t *testing.T) {
	for _, name := range []string{httpjson.RequestIDHeader, keyAPIKey, keyAPISecret, keyAccountID, "X-Ratelimit-Limit", "X-Ratelimit-Remaining", "X-Ratelimit-Reset", "Content-Type", "Content-Length"} {
		if got := http.CanonicalHeaderKey(name); got != name {
			t.Errorf("header %q is assigned as is, but its canonical form is %q", name, got)
		}
	}
}
