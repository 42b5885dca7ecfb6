// Package server is the simulator's HTTP side: the three operations of spec
// §4 under /v3/partner/webhook, the authentication and rate-limit
// middleware of §5 and §8, the JSON errors of §7, and the control API on
// its own listener.
package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/edge"
	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// DefaultMaxBodyBytes caps a request body. The spec shows no maximum
// (§8); 64 KiB holds any real contact many times over.
const DefaultMaxBodyBytes = 64 << 10

// MaxFaultDelay caps an injected delay below the write timeout, so a
// delayed request is still answered.
const MaxFaultDelay = 30 * time.Second

// Server is the simulator's HTTP side, composed of the partner API
// (Handler, partner.go), the control API (AdminHandler, admin.go) and the
// observers they feed (Reports, the client report; Observer, the metrics). Set the fields, then call Open; or use
// Handler and AdminHandler in-process.
type Server struct {
	// Addr is the partner listener's address, e.g. "127.0.0.1:8443" or
	// "127.0.0.1:0" in tests.
	Addr string
	// AdminAddr is the control API's address. If empty, Open starts no
	// control listener.
	AdminAddr string
	// TLSConfig serves both listeners over HTTPS (spec §1 rule 1). If nil,
	// they serve plain HTTP.
	TLSConfig *tls.Config
	// AdminToken protects the control API. Required when AdminAddr is set.
	AdminToken string

	// Stores hold the state; every one but Gate and Registry is required.
	Stores
	// Limits bound what the server accepts and keeps; zero values are
	// the defaults.
	Limits

	// Profile is the deployment profile the simulator plays where the
	// spec is silent (docs/fidelity.md). May be nil: the default profile
	// (fixtures/profile/default.json), today's choices.
	Profile *profile.Profile
	// ProfileLatency delays each partner answer by a draw of the latency
	// the playing profile learned for the operation (--profile-latency,
	// issue 20). False: answers go at once.
	ProfileLatency bool

	// Info is what GET /config and /version report besides the limits.
	// May be nil. If nil, they report the limits only.
	Info *simulator.BuildInfo
	// OpenAPI is served at /openapi.yaml and /openapi.json, outside the
	// base path. May be nil: then those are unknown paths (404).
	OpenAPI *Document

	// Wrap is a layer around the partner API's routes and handlers, inside
	// the request ID and the journal (which records what Wrap answers) and
	// outside the recoverer (so it sees a panic's 500). May be nil. The
	// composition root uses it for the test-only breaches of the spec.
	Wrap func(http.Handler) http.Handler
	// ConnContext adds to each partner connection's context what Wrap
	// needs to tie a request to the connection it came on (HTTP/1 and
	// HTTP/2 alike: http.Server.ConnContext). May be nil: then nothing is
	// added, and the faithful server pays nothing per connection. The
	// composition root sets it only for breaches of spec §5 or §1 that
	// live in connections (issue 27).
	ConnContext func(ctx context.Context, c net.Conn) context.Context

	// Reports keeps the client reports: every answered partner request is
	// handed to it, and the control API serves and resets it. May be nil:
	// then no report is kept and GET /accounts/{accountId}/report answers
	// 404.
	Reports simulator.ClientReporter
	// Observer is handed every answered partner request too, after
	// Reports: the composition root's metrics. May be nil.
	Observer simulator.RequestObserver
	// Metrics is served at the control API's GET /metrics, behind its
	// bearer token like every control call. May be nil: then /metrics is
	// an unknown call (404).
	Metrics http.Handler

	// Health reports whether the backends are usable. May be nil.
	Health func(ctx context.Context) error
	// Now is real time. May be nil. If nil, time.Now. The control API's
	// clock shifts or freezes it.
	Now func() time.Time
	// Rand draws uniformly from [0, 1) for the faults with a probability.
	// May be nil. If nil, math/rand/v2's Float64.
	Rand func() float64
	// Logger may be nil. If nil, nothing is logged.
	Logger *slog.Logger

	journal *journal
	once    sync.Once
	// profiles caches the profiles of throwaway accounts by digest
	// (profile.go): a profile never changes under its digest, so a
	// replica reads each from the registry once, whichever replica
	// stored it.
	profiles sync.Map // digest -> *profile.Profile

	ln, adminLn   net.Listener
	srv, adminSrv *http.Server
}

// Stores are the server's state backends.
type Stores struct {
	Accounts  simulator.AccountStore
	Contacts  simulator.ContactStore
	Campaigns simulator.CampaignStore
	Counter   simulator.RateCounter
	Control   simulator.ControlStore
	// Gate decides each authenticated request: clock, rate counter and
	// fault in one step. It must share the Counter's and the Control's
	// state (the control API resets them). May be nil. If nil, the
	// server composes Control and Counter (simulator.StoreGate).
	Gate simulator.Gate
	// Registry keeps the throwaway accounts of the control API's
	// /accounts calls: usually the faithful store under Accounts, which
	// authenticates them (through any decorator). May be nil: then the
	// control API answers every account call 404.
	Registry simulator.AccountRegistry
}

// Limits bound what the server accepts and keeps.
type Limits struct {
	// RateLimit and RateWindow are reported by the control API and in
	// Retry-After; the Counter enforces them. Zero means the spec's.
	RateLimit  int
	RateWindow time.Duration
	// MaxBodyBytes caps request bodies. Zero means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// ReadTimeout bounds the reading of a whole request, headers and body;
	// a body not in by then is answered 408. Zero means 30 seconds.
	ReadTimeout time.Duration
	// JournalSize is how many requests the journal keeps. Zero means 1000.
	JournalSize int
}

func (s *Server) init() {
	s.once.Do(func() {
		size := s.JournalSize
		if size <= 0 {
			size = 1000
		}
		s.journal = newJournal(size)
	})
}

// Open validates the configuration and starts listening. It returns once
// both listeners accept connections.
func (s *Server) Open() error {
	if err := s.validate(); err != nil {
		return err
	}
	var err error
	if s.ln, err = net.Listen("tcp", s.Addr); err != nil {
		return fmt.Errorf("listen on %s: %w", s.Addr, err)
	}
	s.srv = s.httpServer(s.Handler())
	go s.serve(s.srv, s.listener(s.ln))
	if s.AdminAddr != "" {
		if s.adminLn, err = net.Listen("tcp", s.AdminAddr); err != nil {
			s.ln.Close()
			return fmt.Errorf("listen on admin address %s: %w", s.AdminAddr, err)
		}
		s.adminSrv = s.httpServer(s.guard(s.AdminHandler(), maxAdminBodyBytes))
		go s.serve(s.adminSrv, s.listener(s.adminLn))
	}
	return nil
}

func (s *Server) validate() error {
	switch {
	case s.Accounts == nil || s.Contacts == nil || s.Campaigns == nil || s.Counter == nil || s.Control == nil:
		return errors.New("server: every store and the rate counter are required")
	case s.AdminAddr != "" && s.AdminToken == "":
		return errors.New("server: an admin token is required with an admin address")
	}
	return nil
}

// listener puts ln behind the connection edge (package edge): plain HTTP
// on a TLS port answered in JSON, the TLS handshakes, every HTTP/1
// connection's requests followed.
func (s *Server) listener(ln net.Listener) net.Listener { return edge.NewListener(ln, s.edgeOptions()) }

// httpServer serves h through the edge, with its timeouts.
func (s *Server) httpServer(h http.Handler) *http.Server { return edge.NewServer(h, s.edgeOptions()) }

// edgeOptions are both listeners' settings: TLS without h2 when the
// server's profile's http.http2 is false (a listener-wide choice, so
// per-account profiles cannot change it), a write timeout above the
// longest injected delay, and ConnContext after the edge's own.
func (s *Server) edgeOptions() edge.Options {
	o := edge.Options{ReadTimeout: s.ReadTimeout, WriteTimeout: MaxFaultDelay + 30*time.Second,
		ConnContext: s.ConnContext, Logger: s.logger()}
	if s.TLSConfig != nil {
		o.TLS = edge.TLSConfig(s.TLSConfig, s.serverPlay().http2)
	}
	return o
}

// guard is the edge's check of a request at the HTTP level (edge.Guard),
// its refusals answered by Error.
func (s *Server) guard(next http.Handler, maxBody int64) http.Handler {
	return edge.Guard(next, maxBody, s.Error)
}

func (s *Server) serve(srv *http.Server, ln net.Listener) {
	// The edge listener does TLS itself (listener).
	err := srv.Serve(ln)
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		s.logger().Error("serve", "addr", ln.Addr().String(), "err", err)
	}
}

// Close shuts both listeners down gracefully: in-flight requests finish,
// for at most ten seconds.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Both at once: each may wait up to a second for HTTP/2 clients to
	// acknowledge its GOAWAY.
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, srv := range []*http.Server{s.srv, s.adminSrv} {
		if srv != nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = srv.Shutdown(ctx)
			}()
		}
	}
	wg.Wait()
	return errors.Join(errs...)
}

// URL returns the partner base address, ending in the spec §1 path prefix.
func (s *Server) URL() string { return s.origin(s.ln) + spec.BasePath }

// AdminURL returns the control API's address, or "" when it has none.
func (s *Server) AdminURL() string {
	if s.adminLn == nil {
		return ""
	}
	return s.origin(s.adminLn)
}

func (s *Server) origin(ln net.Listener) string {
	if ln == nil {
		return ""
	}
	scheme := "https"
	if s.TLSConfig == nil {
		scheme = "http"
	}
	addr := ln.Addr().(*net.TCPAddr)
	host := addr.IP.String()
	if addr.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	return scheme + "://" + net.JoinHostPort(host, fmt.Sprint(addr.Port))
}

func (s *Server) now() func() time.Time {
	if s.Now != nil {
		return s.Now
	}
	return time.Now
}

// clock returns the simulator's time: real time as the control API shifted
// or froze it.
func (s *Server) clock(ctx context.Context) (time.Time, error) {
	c, err := s.Control.Clock(ctx)
	if err != nil {
		return time.Time{}, fmt.Errorf("read clock: %w", err)
	}
	return c.Now(s.now()()), nil
}

// accountClock returns one account's time: the simulator's plus the
// account's own offset, as the Gate decides its requests at.
func (s *Server) accountClock(ctx context.Context, accountID string) (time.Time, error) {
	now, err := s.clock(ctx)
	if err != nil {
		return time.Time{}, err
	}
	off, err := s.Control.AccountOffset(ctx, accountID)
	if err != nil {
		return time.Time{}, fmt.Errorf("read account clock: %w", err)
	}
	return now.Add(off), nil
}

func (s *Server) rateLimit() (int, time.Duration) {
	limit, window := s.RateLimit, s.RateWindow
	if limit <= 0 {
		limit = spec.RateLimit
	}
	if window <= 0 {
		window = spec.RateWindow
	}
	return limit, window
}
