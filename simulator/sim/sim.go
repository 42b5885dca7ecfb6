// Package sim assembles a whole simulator from one Config: accounts,
// seeded campaigns, the state backends, TLS and the server. It is the
// composition root that cmd/simulator and every end-to-end test share (a
// package main cannot be imported), so it alone below cmd imports sibling
// packages.
package sim

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"iter"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"time"

	"github.com/partner-v3/conformance-kit/fixtures"
	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/clientreport"
	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/simulator/controlapi"
	"github.com/partner-v3/conformance-kit/simulator/edge"
	"github.com/partner-v3/conformance-kit/simulator/inmem"
	"github.com/partner-v3/conformance-kit/simulator/metrics"
	"github.com/partner-v3/conformance-kit/simulator/partnerapi"
	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/simulator/redisstore"
	"github.com/partner-v3/conformance-kit/simulator/seed"
	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/simulator/violation"
)

// DefaultCampaigns is the --campaigns default: three pages at the largest
// page size, so pagination has something to show.
const DefaultCampaigns = 120

// Config is everything a simulator is made from. The zero value, with Addr
// set, is a spec-faithful simulator over HTTPS with a generated certificate.
type Config struct {
	// Addr and AdminAddr are the listeners' addresses; AdminAddr "" means
	// no control listener.
	Addr      string
	AdminAddr string

	// Insecure serves plain HTTP instead of HTTPS.
	Insecure bool
	// TLSCert and TLSKey are the user's own PEM files. If empty, a
	// self-signed certificate is created in (and reused from) DataDir.
	TLSCert, TLSKey string
	// DataDir holds the generated certificate. If empty, DefaultDataDir.
	DataDir string

	// Accounts may be nil. If nil, AccountsFile is read, or, if that is
	// empty too, the development accounts of fixtures/accounts.json.
	Accounts     []*simulator.Account
	AccountsFile string

	// CampaignsFile, if set, replaces the generated campaigns.
	CampaignsFile string
	// Seed and CampaignsPerAccount drive the generator. Zero means
	// seed.DefaultSeed and DefaultCampaigns (WithDefaults); a negative
	// count means none.
	Seed                int64
	CampaignsPerAccount int
	// ContactsPerAccount fake contacts are seeded for each account at start
	// and again by every reset (seed.Contacts, from Seed and the account).
	// Zero means none.
	ContactsPerAccount int

	// RateLimit and RateWindow; zero means the spec's 100 per minute (§8).
	RateLimit  int
	RateWindow time.Duration

	// RedisURL, if set, keeps contacts, rate counters, clock and faults in
	// that Redis, so that replicas pointed at it share them (spec §8: one
	// shared counter per account), and checks there that every replica
	// serves the same campaigns; each keeps its campaigns in memory. Empty
	// means all in memory. A redis-cluster:// URL names a Redis Cluster
	// (redisstore.DB.Open).
	RedisURL string
	// RedisPrefix namespaces the keys; replicas that share state use the
	// same one. Empty means redisstore.DefaultPrefix.
	RedisPrefix string

	// AdminToken protects the control API. If empty, a random one is made.
	AdminToken string
	// MaxBodyBytes caps request bodies; zero means partnerapi.DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// JournalDetail is how many of the latest partner requests are kept in
	// full, headers and bodies of request and answer (GET
	// /journal/{requestId}, the dashboard's journal; issue 30). Zero means
	// controlapi.DefaultExchanges; negative, none.
	JournalDetail int
	// Version is the build's version, shown by GET /version; empty means
	// "dev".
	Version string
	// Violations name deliberate breaches of the spec, from
	// violation.Catalogue. Empty means a faithful simulator.
	Violations []string

	// Profile is the deployment profile the simulator plays where the
	// spec is silent (issue 20, --profile): its choices in the handlers
	// and the rate limiter, and its vocabulary in the generated
	// campaigns. Nil means the default profile (today's behaviour).
	Profile *profile.Profile
	// ProfileLatency delays each partner answer by a draw of the playing
	// profile's latency (--profile-latency). False: answers go at once.
	ProfileLatency bool

	// Logger may be nil (nothing is logged). Now may be nil (time.Now).
	Logger *slog.Logger
	Now    func() time.Time
}

// DefaultDataDir is where a generated certificate is kept when
// Config.DataDir is empty.
const DefaultDataDir = ".simdata"

// WithDefaults returns a copy of c with every zero field that has a
// default set to it: the one place the simulator's defaults are applied
// (cmd/simulator shows them as its flags' defaults).
func (c Config) WithDefaults() Config {
	if c.Seed == 0 {
		c.Seed = seed.DefaultSeed
	}
	if c.CampaignsPerAccount == 0 {
		c.CampaignsPerAccount = DefaultCampaigns
	}
	if c.RateLimit <= 0 {
		c.RateLimit = spec.RateLimit // spec §8
	}
	if c.RateWindow <= 0 {
		c.RateWindow = spec.RateWindow // spec §8
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = partnerapi.DefaultMaxBodyBytes
	}
	if c.JournalDetail == 0 {
		c.JournalDetail = controlapi.DefaultExchanges
	}
	if c.DataDir == "" {
		c.DataDir = DefaultDataDir
	}
	return c
}

// Simulator is a configured, not yet open, simulator: the partner API
// (the embedded Server), the control API (AdminHandler) and the listeners
// they are served on through the connection edge (Open).
type Simulator struct {
	*partnerapi.API
	// Cert is the TLS identity, nil with Insecure.
	Cert *edge.Certificate
	// Accounts are the accounts it serves.
	Accounts []*simulator.Account
	// Seeded reports whether this start recorded the seed in the shared
	// store (false when another replica had already: then its campaigns
	// and seeded contacts are this one's). Always true in memory.
	Seeded bool
	// AdminToken protects the control API.
	AdminToken string
	// Info is what the control API's GET /config and /version report
	// besides the limits.
	Info *control.BuildInfo
	// Metrics is served at the control API's GET /metrics.
	Metrics http.Handler

	addr, adminAddr string
	tls             *tls.Config // nil: plain HTTP
	basePath        string
	closers         []func() error
	redis           *redisstore.DB // nil in memory
	// contacts and registry are the faithful stores the metrics count,
	// under any violation's decorator.
	contacts simulator.ContactStore
	registry simulator.AccountRegistry

	ln, adminLn   net.Listener
	srv, adminSrv *http.Server
}

// New builds a simulator from cfg. Call Open to listen, or use Handler and
// AdminHandler in-process.
func New(ctx context.Context, cfg Config) (*Simulator, error) {
	cfg = cfg.WithDefaults()
	accounts, err := loadAccounts(cfg)
	if err != nil {
		return nil, err
	}
	violations, err := violation.Parse(cfg.Violations)
	if err != nil {
		return nil, err
	}
	limit, window := violations.Limits(cfg.RateLimit, cfg.RateWindow)
	token := cfg.AdminToken
	if token == "" {
		var b [16]byte
		_, _ = rand.Read(b[:])
		token = hex.EncodeToString(b[:])
	}
	doc, err := partnerapi.NewDocument(fixtures.OpenAPI)
	if err != nil {
		return nil, err
	}
	sim := &Simulator{
		Accounts: accounts, AdminToken: token, addr: cfg.Addr, adminAddr: cfg.AdminAddr, basePath: violations.BasePath(),
		Info: &control.BuildInfo{Violations: violationNames(violations), Version: cmp.Or(cfg.Version, "dev")},
	}
	if !cfg.Insecure {
		if sim.Cert, err = certificate(cfg); err != nil {
			return nil, err
		}
		sim.tls = sim.Cert.TLSConfig()
	}
	m := metrics.New(metrics.Sources{
		ContactsStored: sim.contactsStored, ThrowawayAccounts: sim.throwawayAccounts,
		Version: sim.Info.Version, Backend: backend(cfg), Logger: cfg.Logger,
	})
	sim.Metrics = m.Handler()
	stores, health, err := sim.openState(ctx, cfg, limit, window, m)
	if err != nil {
		return nil, err
	}
	if err := sim.seed(ctx, cfg, accounts, stores.Campaigns); err != nil {
		sim.Close()
		return nil, err
	}
	if stores.Contacts, err = sim.seedContacts(ctx, cfg, accounts, stores.Contacts); err != nil {
		sim.Close()
		return nil, err
	}
	sim.contacts, sim.registry = stores.Contacts, stores.Registry
	// The switched-on breaches of the spec wrap the finished faithful
	// parts; then the partner API is made from them, once.
	wrap, connContext := violations.Handler(stores.Accounts, stores.Campaigns), violations.ConnContext()
	sim.API = &partnerapi.API{
		Stores: violate(violations, stores),
		Limits: partnerapi.Limits{RateLimit: cfg.RateLimit, RateWindow: cfg.RateWindow, MaxBodyBytes: cfg.MaxBodyBytes,
			Exchanges: cfg.JournalDetail},
		Health:  health,
		Logger:  cfg.Logger,
		Now:     cfg.Now,
		OpenAPI: doc,
		Reports: clientreport.New(cfg.RateLimit, cfg.RateWindow, cfg.Now),
		// The metrics count what the client report is handed.
		Observer: m,
		AdminURL: sim.AdminURL,

		Profile:        cfg.Profile,
		ProfileLatency: cfg.ProfileLatency,

		Wrap:        wrap,
		ConnContext: connContext,
	}
	return sim, nil
}

// openState sets up the backends: in memory, or one Redis shared by
// replicas. It returns the faithful stores and, with Redis, its health
// check.
//
// The configured accounts are kept in memory either way; the throwaway
// accounts of the control API (issue 12) in memory, or in Redis, shared by
// the replicas. Their campaigns are generated by each replica on first use
// (the same on every one: seed.Campaigns of the stored account) and cached.
func (sim *Simulator) openState(ctx context.Context, cfg Config, limit int, window time.Duration, o redisstore.Observer) (partnerapi.Stores, func(context.Context) error, error) {
	defaults := simulator.AccountDefaults{Seed: cfg.Seed, Campaigns: max(cfg.CampaignsPerAccount, 0)}
	campaigns := inmem.NewCampaignStore()
	if cfg.RedisURL == "" {
		accounts := inmem.NewAccountStore(sim.Accounts)
		accounts.Defaults = defaults
		campaigns.Generate = throwawayCampaigns(accounts, cfg.Profile)
		return partnerapi.Stores{
			Accounts: accounts, Registry: accounts, Contacts: inmem.NewContactStore(), Campaigns: campaigns,
			Control: inmem.NewControlStore(), Counter: inmem.NewRateCounter(limit, window),
		}, nil, nil
	}
	db := &redisstore.DB{URL: cfg.RedisURL, Prefix: cfg.RedisPrefix}
	if err := db.Open(); err != nil {
		return partnerapi.Stores{}, nil, err
	}
	db.Observe(o) // every round trip, from the first
	// Seeding needs Redis now; later outages are answered 500 and
	// recovered from by themselves.
	if err := db.Ping(ctx); err != nil {
		db.Close()
		return partnerapi.Stores{}, nil, fmt.Errorf("redis at start: %w", err)
	}
	sim.closers = append(sim.closers, db.Close)
	sim.redis = db
	accounts := redisstore.NewAccountStore(db, sim.Accounts, defaults)
	campaigns.Generate = throwawayCampaigns(accounts, cfg.Profile)
	// Campaigns never change after seeding: each replica keeps its own.
	return partnerapi.Stores{
		Accounts: accounts, Registry: accounts, Contacts: redisstore.NewContactStore(db), Campaigns: campaigns,
		Control: redisstore.NewControlStore(db), Counter: redisstore.NewRateCounter(db, limit, window),
		// Clock, rate decision and fault in one round trip, on the
		// Counter's and the Control's keys. In memory the server composes
		// the stores.
		Gate: redisstore.NewGate(db, limit, window),
	}, db.Ping, nil
}

// backend names the state backend for the metrics' build_info.
func backend(cfg Config) string {
	if cfg.RedisURL != "" {
		return "redis"
	}
	return "memory"
}

// contactsStored counts every account's stored contacts for the metrics:
// a page past the end answers the total alone (in Redis, a ZCARD).
func (sim *Simulator) contactsStored(ctx context.Context) (int, error) {
	_, total, err := sim.contacts.FindContacts(ctx, simulator.ContactFilter{Offset: math.MaxInt32, Limit: 1})
	return total, err
}

// throwawayAccounts counts the throwaway accounts for the metrics, at a
// cost that does not grow with them.
func (sim *Simulator) throwawayAccounts(ctx context.Context) (int, error) {
	if sim.registry == nil {
		return 0, nil
	}
	return sim.registry.CountThrowawayAccounts(ctx)
}

// throwawayCampaigns generates a throwaway account's campaigns from the
// stored account: seed.ThrowawayCampaigns(seed, accountID, n), so every
// replica serves the same. A configured account (the seeded ones) or an
// unknown one gets none. It costs a registry lookup (a Redis round trip in
// Redis mode) only when the campaign cache misses.
//
// An account that plays a profile of its own shows that profile's
// vocabulary (issue 20), others the simulator's profile's (p, may be nil).
func throwawayCampaigns(reg simulator.AccountRegistry, p *profile.Profile) func(ctx context.Context, accountID string) ([]*simulator.Campaign, error) {
	return func(ctx context.Context, accountID string) ([]*simulator.Campaign, error) {
		a, err := reg.FindAccount(ctx, accountID)
		if simulator.ErrorCode(err) == simulator.ENOTFOUND {
			return nil, nil
		} else if err != nil {
			return nil, err
		}
		if !a.Throwaway {
			return nil, nil
		}
		v := vocabulary(p)
		if a.ProfileDigest != "" {
			data, err := reg.FindProfile(ctx, a.ProfileDigest)
			if err != nil {
				return nil, fmt.Errorf("account profile: %w", err)
			}
			own, err := profile.Parse(data)
			if err != nil {
				return nil, fmt.Errorf("account profile: %w", err)
			}
			v = vocabulary(own)
		}
		cs := seed.ThrowawayCampaignsWith(a.Seed, accountID, a.Campaigns, v)
		if cs == nil {
			cs = []*simulator.Campaign{} // none, and cached as such
		}
		return cs, nil
	}
}

func (sim *Simulator) seed(ctx context.Context, cfg Config, accounts []*simulator.Account, store simulator.CampaignStore) error {
	var campaigns []*simulator.Campaign
	var version string
	if cfg.CampaignsFile != "" {
		data, err := os.ReadFile(cfg.CampaignsFile)
		if err != nil {
			return fmt.Errorf("read campaigns file: %w", err)
		}
		if campaigns, err = simulator.ReadCampaigns(bytes.NewReader(data)); err != nil {
			return fmt.Errorf("campaigns file %s: %w", cfg.CampaignsFile, err)
		}
		version = "file:" + seed.Digest(data)
	} else {
		s, n := cfg.Seed, max(cfg.CampaignsPerAccount, 0)
		ids := make([]string, len(accounts))
		for i, a := range accounts {
			ids[i] = a.AccountID
		}
		v := vocabulary(cfg.Profile)
		campaigns, version = seed.CampaignsWith(s, ids, n, v), seed.VersionWith(s, ids, n, v)
		sim.Info.Seed, sim.Info.CampaignsPerAccount = &s, &n
	}
	stored, err := store.SeedCampaigns(ctx, version, campaigns)
	if err != nil {
		return fmt.Errorf("seed campaigns: %w", err)
	}
	sim.Seeded = stored
	if sim.redis != nil {
		// Replicas that would answer campaign/list differently must not
		// share a Redis unnoticed: refuse to start (see VersionError).
		if sim.Seeded, err = sim.redis.AgreeCampaigns(ctx, version); err != nil {
			return err
		}
	}
	return nil
}

// seedContacts stores the ContactsPerAccount fake contacts of each account
// in contacts and returns the store to serve: contacts, or, when there are
// some, one whose reset stores them again.
func (sim *Simulator) seedContacts(ctx context.Context, cfg Config, accounts []*simulator.Account, contacts simulator.ContactStore) (simulator.ContactStore, error) {
	n := max(cfg.ContactsPerAccount, 0)
	s := cfg.Seed
	ids := make([]string, len(accounts))
	for i, a := range accounts {
		ids[i] = a.AccountID
	}
	store, ok := contacts.(simulator.ContactSeeder)
	if !ok {
		return nil, fmt.Errorf("seed contacts: %T cannot seed", contacts)
	}
	sim.Info.ContactsPerAccount = n
	version := seed.ContactsVersion(s, ids, n)
	seeded := seed.Contacts(s, ids, n)
	if n > 0 {
		// Collect the generator's garbage often: the peak stays near what
		// the contacts keep.
		defer debug.SetGCPercent(debug.SetGCPercent(25))
	}
	if _, err := store.SeedContacts(ctx, version, seeded); err != nil {
		return nil, err
	}
	if n == 0 {
		return contacts, nil
	}
	freeSeedGarbage()
	return &reseeding{ContactSeeder: store, version: version, contacts: seeded}, nil
}

// reseeding puts the seeded contacts back after the control API's reset
// deletes every contact (POST /reset: the state as at start). That costs
// what seeding cost at start.
type reseeding struct {
	simulator.ContactSeeder
	version  string
	contacts iter.Seq[*simulator.Contact]
}

// DeleteContacts implements simulator.ContactStore: deleting every
// account's contacts seeds them again; one account's stay deleted.
func (r *reseeding) DeleteContacts(ctx context.Context, accountID string) error {
	if err := r.ContactSeeder.DeleteContacts(ctx, accountID); err != nil || accountID != "" {
		return err
	}
	freeSeedGarbage() // the deleted contacts, before the new ones come
	defer debug.SetGCPercent(debug.SetGCPercent(25))
	if _, err := r.SeedContacts(ctx, r.version, r.contacts); err != nil {
		return fmt.Errorf("reseed contacts: %w", err)
	}
	freeSeedGarbage()
	return nil
}

// freeSeedGarbage hands the memory seeding went through back to the
// system at once: generating a million contacts makes several times their
// stored size in garbage, which the runtime would otherwise keep resident
// for minutes.
func freeSeedGarbage() { debug.FreeOSMemory() }

func loadAccounts(cfg Config) ([]*simulator.Account, error) {
	if cfg.Accounts != nil {
		return cfg.Accounts, nil
	}
	data, name := fixtures.Accounts, "fixtures/accounts.json"
	if cfg.AccountsFile != "" {
		var err error
		if data, err = os.ReadFile(cfg.AccountsFile); err != nil {
			return nil, fmt.Errorf("read accounts file: %w", err)
		}
		name = cfg.AccountsFile
	}
	accounts, err := simulator.ReadAccounts(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("accounts file %s: %w", name, err)
	}
	return accounts, nil
}

func certificate(cfg Config) (*edge.Certificate, error) {
	if cfg.TLSCert != "" || cfg.TLSKey != "" {
		if cfg.TLSCert == "" || cfg.TLSKey == "" {
			return nil, fmt.Errorf("--tls-cert and --tls-key go together")
		}
		return edge.LoadCertificate(cfg.TLSCert, cfg.TLSKey)
	}
	return edge.LoadOrCreateCertificate(cfg.DataDir)
}

// violate wraps the switched-on breaches of the spec around the faithful
// stores and counter; with none on, it returns them as they are.
func violate(v violation.Set, s partnerapi.Stores) partnerapi.Stores {
	out := s
	out.Accounts = v.AccountStore(s.Accounts)
	out.Contacts = v.ContactStore(s.Contacts)
	out.Campaigns = v.CampaignStore(s.Campaigns)
	if counter := v.RateCounter(s.Counter); counter != s.Counter {
		// A switch counts under other keys or not at all: the one-script
		// gate would bypass it, so the server composes the decorated
		// counter with the control store instead.
		out.Counter, out.Gate = counter, nil
	}
	return out
}

// violationNames lists the switched-on breaches for GET /config: empty, not
// nil, when none is on, so a faithful simulator answers "violations": [].
func violationNames(v violation.Set) []string {
	out := make([]string, 0, len(v.Names()))
	for _, n := range v.Names() {
		out = append(out, string(n))
	}
	return out
}

// vocabulary is the seed vocabulary of p's known vocabulary choices; an
// Unknown one (all of the default profile's) leaves the generator's own.
func vocabulary(p *profile.Profile) seed.Vocabulary {
	var v seed.Vocabulary
	if p == nil {
		return v
	}
	voc := p.Vocabulary
	if voc.Statuses.Known() {
		for _, sc := range voc.Statuses.Value {
			v.Statuses = append(v.Statuses, seed.StatusColor{Status: sc.Status, Color: sc.Color})
		}
	}
	if voc.TimeZones.Known() {
		v.TimeZones = voc.TimeZones.Value
	}
	if voc.Reasons.Known() {
		v.Reasons = voc.Reasons.Value
	}
	if voc.AutoResend.Known() {
		v.AutoResend = voc.AutoResend.Value
	}
	return v
}
