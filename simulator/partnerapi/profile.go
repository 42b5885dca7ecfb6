package partnerapi

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// serverProfile is the server's Profile, else default.json (GET /config
// names it).
func (s *API) serverProfile() *profile.Profile {
	if s.Profile != nil {
		return s.Profile
	}
	return defaultChoices
}

// accountPlay is the play of account a: its own profile's, else the
// server's.
func (s *API) accountPlay(ctx context.Context, a *simulator.Account) *play {
	if a.ProfileDigest == "" {
		return s.serverPlay()
	}
	return playOf(s.accountProfile(ctx, a))
}

// accountProfile returns the profile account a plays: its own (by its
// ProfileDigest), else the server's. A digest the registry cannot resolve
// (Redis down) is logged and the server's profile played: the request is
// still answered, by the simulator's choices.
func (s *API) accountProfile(ctx context.Context, a *simulator.Account) *profile.Profile {
	if a.ProfileDigest == "" {
		return s.serverProfile()
	}
	if p, ok := s.profiles.Load(a.ProfileDigest); ok {
		return p.(*profile.Profile)
	}
	p, err := s.loadProfile(ctx, a.ProfileDigest)
	if err != nil {
		s.logger().LogAttrs(ctx, slog.LevelError, "account profile", slog.String("account_id", a.AccountID),
			slog.String("digest", a.ProfileDigest), slog.String("error", err.Error()))
		return s.serverProfile()
	}
	s.profiles.Store(a.ProfileDigest, p)
	return p
}

func (s *API) loadProfile(ctx context.Context, digest string) (*profile.Profile, error) {
	reg, err := s.registry()
	if err != nil {
		return nil, err
	}
	data, err := reg.FindProfile(ctx, digest)
	if err != nil {
		return nil, fmt.Errorf("find profile: %w", err)
	}
	p, err := profile.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("parse stored profile: %w", err)
	}
	return p, nil
}

// storeProfile parses a profile sent to POST /accounts and stores it once,
// by the digest of its canonical form (so that two copies differing in
// spacing are one profile). Returns EINVALID with Check's reasons for a
// profile the simulator may not play.
func (s *API) storeProfile(ctx context.Context, reg simulator.AccountRegistry, data []byte) (string, error) {
	p, err := profile.Parse(data)
	if err != nil {
		return "", simulator.Errorf(simulator.EINVALID, "Control API: profile: %v", err)
	}
	canonical, err := p.Marshal()
	if err != nil {
		return "", fmt.Errorf("store profile: %w", err)
	}
	digest := profile.Digest(canonical)
	if err := reg.StoreProfile(ctx, digest, canonical); err != nil {
		return "", fmt.Errorf("store profile: %w", err)
	}
	s.profiles.Store(digest, p)
	return digest, nil
}

// ratePolicy is the counting rule of a profile's rateLimit choices
// (window, countsRefused), resolved (newPlay).
func ratePolicy(p *profile.Profile) simulator.RatePolicy {
	return playOf(p).ratePolicy
}

// rateHeaders writes the rate-limit headers a profile's rateLimit.headers
// and retryAfter choices name, for a request decided d at now, with the
// server's limit and window.
//
// X-RateLimit-Reset and the ratelimit scheme's reset say when the budget
// is back: for a refusal, when a slot frees (RetryAfter); for an allowed
// request under a fixed window, the window's end (Reset); under a sliding
// window, the window (the request just counted leaves then; a decorated
// counter, playing sliding only, reports no Reset either).
//
// vals holds the X-RateLimit values, the request's own (requestState),
// or nil for a new one.
func rateHeaders(h http.Header, pl *play, vals *[2]string, limit int, window time.Duration, d simulator.RateDecision, now time.Time) {
	remaining := max(limit-d.Count, 0)
	reset := window
	switch {
	case !d.Allowed:
		reset = d.RetryAfter
	case d.Reset > 0:
		reset = d.Reset
	}
	send := pl.rateSend[0]
	if !d.Allowed {
		send = pl.rateSend[1]
	}
	writeRateSend(h, send, pl.rateHeaders.Reset, vals, limit, window, remaining, reset, now)
	if d.Allowed {
		return
	}
	switch ra := pl.retryAfter; {
	case !ra.Present:
	case ra.Format == profile.RetryHTTPDate:
		// Rounded up to the second, as the delta is: a client that waits
		// until then is not refused again for the same reason.
		at := now.Add(d.RetryAfter)
		if t := at.Truncate(time.Second); t.Before(at) {
			at = t.Add(time.Second)
		}
		h.Set("Retry-After", at.UTC().Format(http.TimeFormat))
	default:
		h.Set("Retry-After", strconv.Itoa(retryAfterSeconds(d.RetryAfter)))
	}
}

// rateSend is which rate-limit headers an answer sends, resolved once
// per profile (newPlay) from the names the profile saw on it, so that no
// request canonicalises them (issue 31): exactly those names (issue 28).
type rateSend struct {
	limit, remaining, reset                         bool // X-RateLimit-*
	ietfLimit, ietfRemaining, ietfReset, ietfPolicy bool // RateLimit-*
	combined                                        bool // RateLimit
}

// rateSendOf resolves names (rateLimit.headers' onSuccess or onRefusal,
// a class of rateLimit.headerClasses). No list sends scheme's usual
// headers: the limit and what remains (x-ratelimit), the policy and the
// combined field (ratelimit), nothing (the others). A name the simulator
// cannot write a value for (Retry-After has its own choice) is left out.
func rateSendOf(names []string, scheme string) rateSend {
	if len(names) == 0 {
		switch scheme {
		case profile.SchemeXRateLimit:
			return rateSend{limit: true, remaining: true}
		case profile.SchemeRateLimit:
			return rateSend{ietfPolicy: true, combined: true}
		}
		return rateSend{}
	}
	var rs rateSend
	for _, n := range names {
		switch http.CanonicalHeaderKey(n) {
		case profile.HeaderXRateLimitLimit:
			rs.limit = true
		case profile.HeaderXRateLimitRemaining:
			rs.remaining = true
		case profile.HeaderXRateLimitReset:
			rs.reset = true
		case profile.HeaderRateLimitLimit:
			rs.ietfLimit = true
		case profile.HeaderRateLimitRemaining:
			rs.ietfRemaining = true
		case profile.HeaderRateLimitReset:
			rs.ietfReset = true
		case profile.HeaderRateLimitPolicy:
			rs.ietfPolicy = true
		case profile.HeaderRateLimit:
			rs.combined = true
		}
	}
	return rs
}

// writeRateSend writes the headers send names: limit and remaining of the
// budget, reset the time until it is back (X-RateLimit-Reset as seconds
// or the epoch second, resetFormat), the window for the policy.
//
// vals holds the X-RateLimit values, the request's own (requestState),
// or nil for a new one.
func writeRateSend(h http.Header, send rateSend, resetFormat string, vals *[2]string, limit int, window time.Duration, remaining int, reset time.Duration, now time.Time) {
	// The names in canonical form, assigned straight (Header.Set would
	// canonicalise each per request), the two values in the request's
	// array (issue 21). Nothing edits a header value in place.
	if send.limit || send.remaining {
		if vals == nil {
			vals = new([2]string)
		}
		if send.limit {
			vals[0] = limitText(limit)
			h[profile.HeaderXRateLimitLimit] = vals[0:1:1]
		}
		if send.remaining {
			vals[1] = strconv.Itoa(remaining)
			h[profile.HeaderXRateLimitRemaining] = vals[1:2:2]
		}
	}
	if send.reset {
		secs := int64(retryAfterSeconds(reset))
		if resetFormat == profile.ResetEpoch {
			secs += now.Unix()
		}
		h[profile.HeaderXRateLimitReset] = []string{strconv.FormatInt(secs, 10)}
	}
	// draft-ietf-httpapi-ratelimit-headers: its earlier separate fields,
	// the quota policy and the combined standing against it.
	if send.ietfLimit {
		h[profile.HeaderRateLimitLimit] = []string{limitText(limit)}
	}
	if send.ietfRemaining {
		h[profile.HeaderRateLimitRemaining] = []string{strconv.Itoa(remaining)}
	}
	if send.ietfReset {
		h[profile.HeaderRateLimitReset] = []string{strconv.Itoa(retryAfterSeconds(reset))}
	}
	if send.ietfPolicy {
		h[profile.HeaderRateLimitPolicy] = []string{fmt.Sprintf("%d;w=%d", limit, int(math.Ceil(window.Seconds())))}
	}
	if send.combined {
		h[profile.HeaderRateLimit] = []string{fmt.Sprintf("limit=%d, remaining=%d, reset=%d", limit, remaining, retryAfterSeconds(reset))}
	}
}

// lastLimit is the limit last written as text: the limit changes only
// when the control API sets it, so nearly every request finds it here.
var lastLimit atomic.Pointer[limitString]

type limitString struct {
	n    int
	text string
}

// limitText is strconv.Itoa(limit), allocated once per limit rather than
// per request.
func limitText(limit int) string {
	if l := lastLimit.Load(); l != nil && l.n == limit {
		return l.text
	}
	l := &limitString{n: limit, text: strconv.Itoa(limit)}
	lastLimit.Store(l)
	return l.text
}

// countUnauthenticated plays rateLimit.countsUnauthenticated: a request
// that authenticate refused 401 whose x-api-key names an account counts
// against that account's budget (spec §8's counter), when the account's
// profile says so. Only the server's profile or a throwaway account's can
// say so, so other 401s cost no lookup.
func (s *API) countUnauthenticated(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r)
		rec := recordFrom(r)
		if rec.Entry.Status != http.StatusUnauthorized || rec.Entry.AccountID != "" {
			return
		}
		key, ok := singleHeader(r, keyAPIKey)
		if !ok || key == "" {
			return
		}
		if !s.serverPlay().countsUnauthenticated && !isThrowawayKey(key) {
			return
		}
		ctx := r.Context()
		a, err := s.Accounts.LookupAccount(ctx, simulator.AccountLookup{APIKeys: []string{key}})
		if err != nil {
			return // ENOTFOUND: the key names nobody; otherwise the 401 stands as answered
		}
		pl := s.accountPlay(ctx, a)
		if !pl.countsUnauthenticated {
			return
		}
		now, err := s.accountClock(ctx, a.AccountID)
		if err == nil {
			_, err = simulator.TakePolicy(ctx, s.Counter, a.AccountID, now, pl.ratePolicy)
		}
		if err != nil {
			s.logger().LogAttrs(ctx, slog.LevelError, "count unauthenticated request", slog.String("error", err.Error()))
		}
	})
}

func isThrowawayKey(key string) bool {
	return strings.HasPrefix(key, simulator.ThrowawayKeyPrefix)
}

// MaxProfileLatency caps a played latency (playLatency), below the write
// timeout, whatever a profile learned.
const MaxProfileLatency = 20 * time.Second

// z99 is the standard normal's 99th percentile: a log-normal whose median
// is m and 99th percentile q has sigma = ln(q/m)/z99.
const z99 = 2.326

// latencyDraw is one answer's latency drawn from the log-normal fitted to
// sample (median m, p99 q: mu = ln m, sigma = ln(q/m)/2.326), for a
// standard normal draw z: never above twice the p99 nor
// MaxProfileLatency, zero for a sample without a median.
func latencyDraw(sample profile.Sample, z float64) time.Duration {
	m, q := sample.Median, sample.P99
	if m <= 0 || math.IsNaN(m) {
		return 0
	}
	sigma := 0.0
	if q > m {
		sigma = math.Log(q/m) / z99
	}
	ms := math.Exp(math.Log(m) + sigma*z)
	ms = min(ms, 2*max(q, m), float64(MaxProfileLatency/time.Millisecond))
	return time.Duration(ms * float64(time.Millisecond))
}

// operationLatency returns the sample a profile learned for op (a path of
// spec §4, with or without the base path): Served when known (every 200
// answer), else Paced, else Probes (profiles written before Served).
func operationLatency(ops map[string]profile.OperationLatency, op string) (profile.Sample, bool) {
	ol, ok := ops[op]
	if !ok {
		ol, ok = ops[spec.BasePath+"/"+op]
	}
	if !ok {
		return profile.Sample{}, false
	}
	if ol.Served.N > 0 && ol.Served.Median > 0 {
		return ol.Served, true
	}
	if ol.Paced.N > 0 && ol.Paced.Median > 0 {
		return ol.Paced, true
	}
	return ol.Probes, ol.Probes.Median > 0
}

// playLatency delays the answer by a draw of the profile's latency for op
// (--profile-latency, API.ProfileLatency), or not at all when off or
// when the profile learned none; a client that goes away ends the wait.
func (s *API) playLatency(r *http.Request, pl *play, op string) {
	if !s.ProfileLatency {
		return
	}
	sample, ok := operationLatency(pl.latency, op)
	if !ok {
		return
	}
	z := rand.NormFloat64()
	if s.Rand != nil {
		// Two uniform draws of the server's source (Box-Muller), so a test
		// that fixes Rand fixes the latency too.
		u1, u2 := max(s.Rand(), math.SmallestNonzeroFloat64), s.Rand()
		z = math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
	}
	d := latencyDraw(sample, z)
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.Context().Done():
	}
}

// ProfileInfo names p as GET /config reports it and the simulator's start
// banner prints it: its source's name and the digest of its canonical
// JSON (so the same choices written with other spacing are one profile).
// Nil is the default profile.
func ProfileInfo(p *profile.Profile) *control.ProfileInfo {
	if p == nil {
		p = defaultChoices
	}
	data, err := p.Marshal()
	if err != nil {
		return &control.ProfileInfo{Name: p.Source.Name}
	}
	return &control.ProfileInfo{Name: p.Source.Name, Digest: profile.Digest(data)}
}
