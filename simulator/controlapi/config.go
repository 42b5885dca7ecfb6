// Package controlapi is the simulator's control API (docs/control-api.md),
// on a listener of its own: reset, the clock, faults, the journal, the
// client reports, throwaway accounts, the metrics and pprof, behind a
// bearer token. It serves the partner API's state but never imports the
// partner API: what it needs of it comes in Config, named.
package controlapi

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/simulator/httpjson"
)

// MaxBodyBytes caps a control call's body.
const MaxBodyBytes = 1 << 20

// MaxFaultDelay caps an injected delay below the listeners' write
// timeout, so a delayed request is still answered.
const MaxFaultDelay = 30 * time.Second

// Config is what the control API serves and acts on. Every field is
// required unless its comment says it may be nil.
type Config struct {
	// Token is the bearer token of every call but GET /healthz. If empty,
	// every call but GET /healthz answers 401.
	Token string

	// The partner API's stores, as it serves them (any violation's
	// decorator included).
	Accounts  simulator.AccountStore
	Contacts  simulator.ContactStore
	Campaigns simulator.CampaignStore
	Counter   simulator.RateCounter
	Control   simulator.ControlStore
	// Registry keeps the throwaway accounts. May be nil: then every
	// account call answers 404.
	Registry simulator.AccountRegistry

	// Journal holds the latest partner requests (NewJournal), filled by the
	// partner API as it answers them.
	Journal *Journal
	// Exchanges keeps the latest partner exchanges in full, headers and
	// bodies (NewExchanges), filled by the partner API beside the journal.
	// May be nil: then GET /journal/{requestId} answers 404, saying the
	// simulator keeps none.
	Exchanges *Exchanges
	// Reports keeps the client reports. May be nil: then GET
	// /accounts/{accountId}/report answers 404.
	Reports simulator.ClientReporter
	// Metrics is served at GET /metrics. May be nil: then /metrics is an
	// unknown call (404).
	Metrics http.Handler
	// Health answers GET /healthz, as on the partner port.
	Health http.Handler

	// RateLimit, RateWindow and MaxBodyBytes are the limits the partner
	// API enforces, reported by GET /config and the budgets.
	RateLimit    int
	RateWindow   time.Duration
	MaxBodyBytes int64
	// Profile names the profile the simulator plays, for GET /config.
	Profile *control.ProfileInfo
	// Info is what GET /config and /version report besides the limits.
	// May be nil.
	Info *control.BuildInfo

	// Now is real time. May be nil. If nil, time.Now.
	Now func() time.Time
	// AccountClock is an account's time as its requests are decided at:
	// the simulator's clock plus the account's own offset.
	AccountClock func(ctx context.Context, accountID string) (time.Time, error)
	// RatePolicy is how an account's profile counts its requests (spec §8
	// and where it is silent), for its budget.
	RatePolicy func(ctx context.Context, a *simulator.Account) simulator.RatePolicy
	// StoreProfile checks a throwaway account's profile and stores it in
	// reg once, by the digest it returns; EINVALID with the reasons when
	// the profile asks what the spec forbids.
	StoreProfile func(ctx context.Context, reg simulator.AccountRegistry, data []byte) (string, error)
	// Logger may be nil. If nil, nothing is logged.
	Logger *slog.Logger
}

func (c *Config) mustBeComplete() {
	switch {
	case c.Accounts == nil || c.Contacts == nil || c.Campaigns == nil || c.Counter == nil || c.Control == nil:
		panic("controlapi: every store and the rate counter are required")
	case c.Journal == nil || c.Health == nil || c.AccountClock == nil || c.RatePolicy == nil || c.StoreProfile == nil:
		panic("controlapi: the journal, the health check and the partner side's functions are required")
	}
}

func (api *API) now() time.Time {
	if api.Now != nil {
		return api.Now()
	}
	return time.Now()
}

// discardLogger is the logger of an API without one, made once.
var discardLogger = slog.New(slog.DiscardHandler)

func (api *API) logger() *slog.Logger {
	if api.Logger != nil {
		return api.Logger
	}
	return discardLogger
}

// Error writes err as the control API's JSON error. Only internal errors
// are logged: they are the ones nobody else will see; their detail never
// reaches the client.
func (api *API) Error(w http.ResponseWriter, r *http.Request, err error) {
	code := simulator.ErrorCode(err)
	if code == simulator.EINTERNAL {
		api.logger().Error("internal error", "request_id", w.Header().Get(httpjson.RequestIDHeader),
			"method", r.Method, "path", r.URL.Path, "err", err)
	}
	httpjson.Write(w, httpjson.StatusCode(code), &httpjson.ErrorResponse{Error: simulator.ErrorMessage(err)})
}

// controlPaths are the first path elements of the control API's calls
// (New, docs/control-api.md). A request for one of them on the partner
// port is a client that mixed up the two listeners: its 404 says where the
// control API is (issue 27). GET /healthz answers on both. /ui is the
// dashboard (simulator/dashboard), mounted beside the control API on its
// listener (issue 30).
var controlPaths = []string{"/reset", "/clock", "/rate-limit", "/faults", "/journal", "/contacts", "/accounts", "/config", "/version", "/metrics", "/debug/pprof", "/ui"}

// IsControlPath reports whether path names a call of the control API.
func IsControlPath(path string) bool {
	for _, p := range controlPaths {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}
