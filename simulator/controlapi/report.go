package controlapi

import (
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/clientreport"
	"github.com/partner-v3/conformance-kit/simulator/httpjson"
)

// The client report itself is package simulator/clientreport, which the
// partner API never imports: the request path hands it each request's
// record (simulator.RequestObserver) and the control API serves it here,
// through simulator.ClientReporter, in JSON or as clientreport.Markdown.

// handleAdminReport is GET /accounts/{accountId}/report: JSON, or Markdown
// when the Accept header asks for text/markdown.
func (api *API) handleAdminReport(w http.ResponseWriter, r *http.Request) {
	_, a := api.findAccount(w, r)
	if a == nil {
		return
	}
	if api.Reports == nil {
		// ASSUMPTION: a server built without reports (in tests) has none
		// to show, like an unknown path.
		api.Error(w, r, simulator.Errorf(simulator.ENOTFOUND, "This simulator keeps no client reports"))
		return
	}
	rep := api.Reports.Report(a.AccountID)
	if wantsMarkdown(r) {
		body := []byte(clientreport.Markdown(rep))
		h := w.Header()
		h.Set("Content-Type", "text/markdown; charset=utf-8")
		h.Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body)
		return
	}
	httpjson.Write(w, http.StatusOK, rep)
}

// wantsMarkdown reports whether Accept names text/markdown with a
// non-zero quality.
func wantsMarkdown(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		for _, part := range strings.Split(v, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err == nil && mt == "text/markdown" && params["q"] != "0" {
				return true
			}
		}
	}
	return false
}
