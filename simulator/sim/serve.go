package sim

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/partner-v3/conformance-kit/simulator/controlapi"
	"github.com/partner-v3/conformance-kit/simulator/dashboard"
	"github.com/partner-v3/conformance-kit/simulator/edge"
	"github.com/partner-v3/conformance-kit/simulator/partnerapi"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// The simulator on its listeners: the partner API on Addr and the control
// API on AdminAddr, each through the connection edge (package edge), over
// HTTPS unless Insecure.

// AdminHandler returns the control API over the partner API's state, with
// the dashboard (issue 30) under /ui/.
func (sim *Simulator) AdminHandler() http.Handler { return sim.adminHandler(sim.controlAPI()) }

// adminHandler serves the control listener: the dashboard under
// dashboard.Prefix (and /ui itself, which it redirects), with its own
// login over api's token; every other path is api's. The partner listener
// never serves the dashboard.
func (sim *Simulator) adminHandler(api *controlapi.API) http.Handler {
	dash := dashboard.New(dashboard.Config{API: api, Profile: sim.API.Profile})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ui" || strings.HasPrefix(r.URL.Path, dashboard.Prefix) {
			dash.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}

func (sim *Simulator) controlAPI() *controlapi.API {
	cfg := sim.API.ControlConfig()
	cfg.Token, cfg.Metrics, cfg.Info = sim.AdminToken, sim.Metrics, sim.Info
	return controlapi.New(cfg)
}

// Open starts listening. It returns once both listeners accept
// connections.
func (sim *Simulator) Open() error {
	if sim.adminAddr != "" && sim.AdminToken == "" {
		return errors.New("sim: an admin token is required with an admin address")
	}
	o := sim.edgeOptions()
	var err error
	if sim.ln, err = net.Listen("tcp", sim.addr); err != nil {
		return fmt.Errorf("listen on %s: %w", sim.addr, err)
	}
	sim.srv = edge.NewServer(sim.Handler(), o)
	go sim.serve(sim.srv, edge.NewListener(sim.ln, o))
	if sim.adminAddr != "" {
		if sim.adminLn, err = net.Listen("tcp", sim.adminAddr); err != nil {
			sim.ln.Close()
			return fmt.Errorf("listen on admin address %s: %w", sim.adminAddr, err)
		}
		api := sim.controlAPI()
		sim.adminSrv = edge.NewServer(edge.Guard(sim.adminHandler(api), controlapi.MaxBodyBytes, api.Error), o)
		go sim.serve(sim.adminSrv, edge.NewListener(sim.adminLn, o))
	}
	return nil
}

// edgeOptions are both listeners' settings: TLS without h2 when the
// partner API's profile does not speak it, the partner API's read timeout,
// a write timeout above the longest injected delay, and the violations'
// ConnContext after the edge's own.
func (sim *Simulator) edgeOptions() edge.Options {
	o := edge.Options{ReadTimeout: sim.ReadTimeout, WriteTimeout: partnerapi.MaxFaultDelay + 30*time.Second,
		ConnContext: sim.ConnContext, Logger: sim.Logger}
	if sim.tls != nil {
		o.TLS = edge.TLSConfig(sim.tls, sim.ServesHTTP2())
	}
	return o
}

func (sim *Simulator) serve(srv *http.Server, ln net.Listener) {
	// The edge listener does TLS itself.
	err := srv.Serve(ln)
	if err != nil && !errors.Is(err, http.ErrServerClosed) && sim.Logger != nil {
		sim.Logger.Error("serve", "addr", ln.Addr().String(), "err", err)
	}
}

// Close shuts both listeners down gracefully (in-flight requests finish,
// for at most ten seconds), then releases the backends.
func (sim *Simulator) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Both at once: each may wait up to a second for HTTP/2 clients to
	// acknowledge its GOAWAY.
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, srv := range []*http.Server{sim.srv, sim.adminSrv} {
		if srv != nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = srv.Shutdown(ctx)
			}()
		}
	}
	wg.Wait()
	err := errors.Join(errs...)
	for _, c := range sim.closers {
		if cerr := c(); cerr != nil && err == nil {
			err = cerr
		}
	}
	return err
}

// URL returns the partner base address the simulator serves, ending in the
// spec §1 path prefix, unless a violation serves the operations elsewhere.
func (sim *Simulator) URL() string {
	u := sim.origin(sim.ln) + spec.BasePath
	if sim.basePath == spec.BasePath {
		return u
	}
	return strings.TrimSuffix(u, spec.BasePath) + sim.basePath
}

// DashboardURL returns the dashboard's address (issue 30), or "" when the
// simulator has no control listener.
func (sim *Simulator) DashboardURL() string {
	if sim.adminLn == nil {
		return ""
	}
	return sim.origin(sim.adminLn) + dashboard.Prefix
}

// AdminURL returns the control API's address, or "" when it has none.
func (sim *Simulator) AdminURL() string {
	if sim.adminLn == nil {
		return ""
	}
	return sim.origin(sim.adminLn)
}

func (sim *Simulator) origin(ln net.Listener) string {
	if ln == nil {
		return ""
	}
	scheme := "https"
	if sim.tls == nil {
		scheme = "http"
	}
	addr := ln.Addr().(*net.TCPAddr)
	host := addr.IP.String()
	if addr.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	return scheme + "://" + net.JoinHostPort(host, fmt.Sprint(addr.Port))
}
