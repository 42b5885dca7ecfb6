// Package partnerapi is the simulator's partner API: the three operations of
// spec §4 under /v3/partner/webhook, the authentication and rate-limit
// middleware of §5 and §8, the JSON errors of §7, and the profile it plays
// where the spec is silent. The connection edge it is served through is
// package edge, the control API package controlapi; package sim puts the
// three together on their listeners.
package partnerapi

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/controlapi"
	"github.com/partner-v3/conformance-kit/simulator/edge"
	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// DefaultMaxBodyBytes caps a request body. The spec shows no maximum
// (§8); 64 KiB holds any real contact many times over.
const DefaultMaxBodyBytes = 64 << 10

// MaxFaultDelay caps an injected delay below the write timeout, so a
// delayed request is still answered (controlapi.MaxFaultDelay).
const MaxFaultDelay = controlapi.MaxFaultDelay

// API is the partner API (Handler, partner.go) and the observers it
// feeds (Reports, the client report; Observer, the metrics). Set the
// fields, then serve Handler (package sim serves it on its listener,
// through the edge), and hand ControlConfig to the control API.
type API struct {
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

	// OpenAPI is served at /openapi.yaml and /openapi.json, outside the
	// base path. May be nil: then those are unknown paths (404).
	OpenAPI *Document
	// AdminURL returns the control API's address, or "" when it has none:
	// the partner port's 404 of a control call names it (controlhint.go).
	// May be nil: then the simulator runs without a control API.
	AdminURL func() string

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

	journal *controlapi.Journal
	// exchanges keeps the latest exchanges in full (Limits.Exchanges); nil
	// for none.
	exchanges *controlapi.Exchanges
	once      sync.Once
	// profiles caches the profiles of throwaway accounts by digest
	// (profile.go): a profile never changes under its digest, so a
	// replica reads each from the registry once, whichever replica
	// stored it.
	profiles sync.Map // digest -> *profile.Profile
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
	// Exchanges is how many of the latest requests are kept in full,
	// their headers and bodies and their answers' (GET /journal/{requestId},
	// issue 30). Zero means controlapi.DefaultExchanges; negative, none.
	Exchanges int
}

func (s *API) init() {
	s.once.Do(func() {
		size := s.JournalSize
		if size <= 0 {
			size = 1000
		}
		s.journal = controlapi.NewJournal(size)
		switch {
		case s.Exchanges == 0:
			s.exchanges = controlapi.NewExchanges(controlapi.DefaultExchanges)
		case s.Exchanges > 0:
			s.exchanges = controlapi.NewExchanges(s.Exchanges)
		}
	})
}

// ServesHTTP2 reports whether the server's profile speaks HTTP/2 (its
// http.http2): a listener-wide choice, so per-account profiles cannot
// change it (edge.TLSConfig).
func (s *API) ServesHTTP2() bool { return s.serverPlay().http2 }

// guard is the edge's check of a request at the HTTP level (edge.Guard),
// its refusals answered by Error.
func (s *API) guard(next http.Handler, maxBody int64) http.Handler {
	return edge.Guard(next, maxBody, s.Error)
}

func (s *API) now() func() time.Time {
	if s.Now != nil {
		return s.Now
	}
	return time.Now
}

// clock returns the simulator's time: real time as the control API shifted
// or froze it.
func (s *API) clock(ctx context.Context) (time.Time, error) {
	c, err := s.Control.Clock(ctx)
	if err != nil {
		return time.Time{}, fmt.Errorf("read clock: %w", err)
	}
	return c.Now(s.now()()), nil
}

// accountClock returns one account's time: the simulator's plus the
// account's own offset, as the Gate decides its requests at.
func (s *API) accountClock(ctx context.Context, accountID string) (time.Time, error) {
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

func (s *API) rateLimit() (int, time.Duration) {
	limit, window := s.RateLimit, s.RateWindow
	if limit <= 0 {
		limit = spec.RateLimit
	}
	if window <= 0 {
		window = spec.RateWindow
	}
	return limit, window
}

// ControlConfig is what the control API (package controlapi) needs of
// the partner API: its stores, journal, reports, limits and profile, and
// the functions by which it reads an account's clock and rate policy and
// stores a profile. The caller adds the token, the metrics and the build
// information.
func (s *API) ControlConfig() controlapi.Config {
	s.init() // the journal and the exchanges, read below
	limit, window := s.rateLimit()
	return controlapi.Config{
		Accounts: s.Accounts, Contacts: s.Contacts, Campaigns: s.Campaigns, Counter: s.Counter, Control: s.Control,
		Registry: s.Registry,
		Journal:  s.Journal(), Exchanges: s.exchanges, Reports: s.Reports, Health: s.HealthHandler(),
		RateLimit: limit, RateWindow: window, MaxBodyBytes: s.maxBodyBytes(),
		Profile: ProfileInfo(s.serverProfile()),
		Now:     s.Now, AccountClock: s.accountClock, RatePolicy: s.RatePolicy, StoreProfile: s.storeProfile,
		Logger: s.Logger,
	}
}

// Journal returns the journal the partner API fills as it answers, for the
// control API to serve.
func (s *API) Journal() *controlapi.Journal {
	s.init()
	return s.journal
}

// HealthHandler answers GET /healthz: 200 when the backends are usable,
// 503 with the reason when not.
func (s *API) HealthHandler() http.Handler { return http.HandlerFunc(s.handleHealth) }

// RatePolicy is how the profile account a plays counts its requests.
func (s *API) RatePolicy(ctx context.Context, a *simulator.Account) simulator.RatePolicy {
	return ratePolicy(s.accountProfile(ctx, a))
}

// registry returns the registry of throwaway accounts, where their
// profiles are stored (profile.go); ENOTFOUND when the server keeps none,
// as the control API answers its account calls then.
func (s *API) registry() (simulator.AccountRegistry, error) {
	if s.Registry == nil {
		return nil, simulator.Errorf(simulator.ENOTFOUND, "This simulator keeps no throwaway accounts")
	}
	return s.Registry, nil
}
