package dashboard

import (
	"net/http"
	"strings"
)

// forwards are the control API calls the dashboard's pages make, under
// /ui/api: the dashboard hands each to the control API's own handler with
// the bearer token, so a fault the form adds is checked by the same code,
// and refused with the same message, as one sent to POST /faults
// (docs/control-api.md). Only these pass: none of them answers a secret
// (POST /accounts, which answers a new account's secret, is not among
// them, nor GET /accounts, which lists whole API keys), and reads
// (GET) need a session while changes need the CSRF token too.
var forwards = []string{
	"GET /config",
	"GET /clock",
	"POST /clock",
	"POST /reset",
	"POST /rate-limit/reset",
	"GET /faults",
	"POST /faults",
	"DELETE /faults",
	"DELETE /faults/{id}",
	"GET /journal",
	"GET /journal/{requestId}",
	"GET /accounts/{accountId}/budget",
	"GET /accounts/{accountId}/report",
}

func (d *Dashboard) registerForwards(mux *http.ServeMux) {
	for _, f := range forwards {
		method, path, _ := strings.Cut(f, " ")
		guard := d.changes
		if method == http.MethodGet {
			guard = d.reads
		}
		mux.HandleFunc(method+" /ui/api"+path, guard(d.forward))
	}
}

// forward serves r by the control API: the same path without /ui/api,
// the control API's token instead of the session's cookie.
func (d *Dashboard) forward(w http.ResponseWriter, r *http.Request) {
	r2 := r.Clone(r.Context())
	r2.URL.Path = strings.TrimPrefix(r.URL.Path, "/ui/api")
	r2.URL.RawPath = ""
	r2.RequestURI = r2.URL.RequestURI()
	r2.Header.Del("Cookie")
	r2.Header.Del(CSRFHeader)
	r2.Header.Set("Authorization", "Bearer "+d.api.Token)
	d.api.ServeHTTP(w, r2)
}
