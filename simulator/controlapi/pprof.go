package controlapi

import (
	"net/http"
	"net/http/pprof"
)

// registerPprof mounts net/http/pprof's handlers under /debug/pprof/ on the
// control API's mux, behind its bearer token; the partner listener never
// serves them. (Importing net/http/pprof also registers them on
// http.DefaultServeMux, which the simulator never serves.)
func registerPprof(mux *http.ServeMux) {
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("POST /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
}
