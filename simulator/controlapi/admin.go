package controlapi

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"strconv"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/simulator/httpjson"
	"github.com/partner-v3/conformance-kit/simulator/jsonbody"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// API is the control API (docs/control-api.md): the calls that reset the
// simulator, move its clock, inject faults, read the journal and the client
// reports, and keep throwaway accounts. It lives on its own listener and
// never under the partner base path, so a partner's client cannot reach it
// by mistake; every call but GET /healthz needs "Authorization: Bearer
// <Token>". Make one with New.
type API struct {
	Config
	mux     *http.ServeMux
	handler http.Handler
}

// New returns the control API over cfg. It panics if cfg lacks a store or
// one of the partner side's functions: a programmer's error.
func New(cfg Config) *API {
	cfg.mustBeComplete()
	api := &API{Config: cfg}
	mux := http.NewServeMux()
	mux.Handle("GET /healthz", api.Health)
	mux.HandleFunc("GET /version", api.handleAdminConfig)
	mux.HandleFunc("GET /config", api.handleAdminConfig)
	mux.HandleFunc("POST /reset", api.handleAdminReset)
	mux.HandleFunc("GET /clock", api.handleAdminClockGet)
	mux.HandleFunc("POST /clock", api.handleAdminClockSet)
	mux.HandleFunc("POST /rate-limit/reset", api.handleAdminRateReset)
	mux.HandleFunc("GET /faults", api.handleAdminFaultsGet)
	mux.HandleFunc("POST /faults", api.handleAdminFaultsAdd)
	mux.HandleFunc("DELETE /faults", api.handleAdminFaultsClear)
	mux.HandleFunc("DELETE /faults/{id}", api.handleAdminFaultDelete)
	mux.HandleFunc("GET /journal", api.handleAdminJournalGet)
	mux.HandleFunc("DELETE /journal", api.handleAdminJournalClear)
	mux.HandleFunc("GET /journal/{requestId}", api.handleAdminJournalDetail)
	mux.HandleFunc("GET /contacts", api.handleAdminContacts)
	mux.HandleFunc("POST /accounts", api.handleAccountCreate)
	mux.HandleFunc("GET /accounts", api.handleAccountList)
	mux.HandleFunc("GET /accounts/{accountId}", api.handleAccountGet)
	mux.HandleFunc("DELETE /accounts/{accountId}", api.handleAccountDelete)
	mux.HandleFunc("GET /accounts/{accountId}/budget", api.handleAccountBudget)
	mux.HandleFunc("GET /accounts/{accountId}/report", api.handleAdminReport)
	if api.Metrics != nil {
		mux.Handle("GET /metrics", api.Metrics)
	}
	registerPprof(mux)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		api.Error(w, r, simulator.Errorf(simulator.ENOTFOUND, "No control call %s %s", r.Method, r.URL.Path))
	})
	api.mux = mux
	api.handler = httpjson.RequestID(httpjson.Recoverer(http.HandlerFunc(api.route), api.Error))
	return api
}

// ServeHTTP answers a control call, with its X-Request-Id, a panic
// answered as a JSON 500.
func (api *API) ServeHTTP(w http.ResponseWriter, r *http.Request) { api.handler.ServeHTTP(w, r) }

// route is the control listener's router: the bearer token, then the
// calls on the ServeMux, every answer in JSON.
func (api *API) route(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/healthz" && !api.adminAuthorized(r) {
		api.Error(w, r, simulator.Errorf(simulator.EUNAUTHORIZED, "Control API: missing or wrong bearer token"))
		return
	}
	// The mux would redirect a path that is not clean (an empty id in
	// /accounts//report, //reset, /./) with an HTML body, and CONNECT or
	// OPTIONS * name no path at all: none of them is a control call.
	if !cleanAdminPath(r.URL.Path) {
		api.Error(w, r, simulator.Errorf(simulator.ENOTFOUND, "No control call %s %s", r.Method, httpjson.QuotePath(r.RequestURI)))
		return
	}
	// The mux answers a known path with the wrong method by a plain-text
	// 405; answer it in JSON like every other error.
	if _, pattern := api.mux.Handler(r); pattern == "" || pattern == "/" {
		if allow := api.allow(r); allow != "" {
			w.Header().Set("Allow", allow)
			api.Error(w, r, simulator.Errorf(simulator.ENOTALLOWED, "Method %s is not allowed on %s", r.Method, r.URL.Path))
			return
		}
	}
	api.mux.ServeHTTP(&noRedirect{ResponseWriter: w, api: api, r: r}, r)
}

// allow lists the methods the mux has for r's path.
func (api *API) allow(r *http.Request) string {
	var allow string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, p := api.mux.Handler(probe); p != "" && p != "/" {
			if allow != "" {
				allow += ", "
			}
			allow += m
		}
	}
	return allow
}

// cleanAdminPath reports whether p is a path the mux serves as it is: it
// starts with "/" and holds no empty, "." or ".." segment (a trailing "/"
// is kept, as /debug/pprof/ has one).
func cleanAdminPath(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	c := path.Clean(p)
	return c == p || c+"/" == p
}

// noRedirect turns any redirect the mux still makes (a subtree's path
// without its trailing "/", such as /debug/pprof) into the JSON 404 of an
// unknown call: every control answer but pprof's, the metrics' and the
// report's Markdown is JSON, and a client that follows a redirect would send its
// bearer token to wherever it pointed.
type noRedirect struct {
	http.ResponseWriter
	api        *API
	r          *http.Request
	redirected bool
}

func (w *noRedirect) WriteHeader(code int) {
	if code < 300 || code >= 400 || w.redirected {
		w.ResponseWriter.WriteHeader(code)
		return
	}
	w.redirected = true
	w.Header().Del("Location")
	w.api.Error(w.ResponseWriter, w.r, simulator.Errorf(simulator.ENOTFOUND, "No control call %s %s", w.r.Method, httpjson.QuotePath(w.r.URL.Path)))
}

func (w *noRedirect) Write(b []byte) (int, error) {
	if w.redirected {
		return len(b), nil // the redirect's HTML, replaced by the JSON error
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController (pprof's profile sets a write
// deadline) reach the underlying writer.
func (w *noRedirect) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (api *API) adminAuthorized(r *http.Request) bool {
	want := "Bearer " + api.Token
	return api.Token != "" && subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte(want)) == 1
}

// decodeAdmin decodes an optional JSON body into v, strictly: an empty
// body is fine; otherwise one JSON object, with the partner API's rules
// (UTF-8, no field twice, nothing after it: a fault was once stored from
// `{…} x`), no unknown field and every field of its type.
func (api *API) decode(r *http.Request, v any) error {
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, MaxBodyBytes))
	if err != nil {
		return jsonbody.ReadError(err)
	}
	if len(bytes.Trim(body, " \t\r\n")) == 0 { // RFC 8259 §2's whitespace alone
		return nil
	}
	if _, err := jsonbody.Parse(body); err != nil {
		return simulator.Errorf(simulator.ErrorCode(err), "Control API: %s", simulator.ErrorMessage(err))
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return simulator.Errorf(simulator.EINVALID, "Control API: bad JSON body: %s", jsonbody.ErrorText(err))
	}
	return nil
}

func (api *API) handleAdminConfig(w http.ResponseWriter, r *http.Request) {
	httpjson.Write(w, http.StatusOK, &control.ConfigResponse{RateLimit: api.RateLimit, RateWindow: api.RateWindow.String(),
		MaxBodyBytes: api.MaxBodyBytes, BasePath: spec.BasePath, BuildInfo: api.Info, Profile: api.Profile})
}

// handleAdminReset puts the state back as it was at start: no contacts, no
// counted requests, no faults, real time, an empty journal. Campaigns are
// read-only through the partner API, so they are already as seeded.
func (api *API) handleAdminReset(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if err := errors.Join(
		api.Contacts.DeleteContacts(ctx, ""),
		api.Counter.ResetAll(ctx),
		api.Control.ResetControl(ctx),
	); err != nil {
		api.Error(w, r, fmt.Errorf("reset: %w", err))
		return
	}
	api.Journal.Clear()
	if api.Exchanges != nil {
		api.Exchanges.Clear()
	}
	if api.Reports != nil {
		api.Reports.Reset()
	}
	httpjson.Write(w, http.StatusOK, map[string]string{"status": "reset"})
}

// writeClock answers the simulator's clock, or one account's (the
// simulator's plus the account's own offset) when accountID, a known
// account the caller looked up, is set.
func (api *API) writeClock(w http.ResponseWriter, r *http.Request, accountID string) {
	c, err := api.Control.Clock(r.Context())
	if err != nil {
		api.Error(w, r, fmt.Errorf("read clock: %w", err))
		return
	}
	out := &control.ClockResponse{Now: simulator.Timestamp{Time: c.Now(api.now())}, Offset: c.Offset.String(), Frozen: c.Frozen}
	if accountID != "" {
		off, err := api.Control.AccountOffset(r.Context(), accountID)
		if err != nil {
			api.Error(w, r, fmt.Errorf("read account clock: %w", err))
			return
		}
		out.Now.Time = out.Now.Add(off)
		out.AccountID, out.AccountOffset = accountID, off.String()
	}
	httpjson.Write(w, http.StatusOK, out)
}

func (api *API) handleAdminClockGet(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("accountId")
	if id != "" {
		if _, _, err := api.account(r.Context(), id); err != nil {
			api.Error(w, r, err)
			return
		}
	}
	api.writeClock(w, r, id)
}

// parseAdvance reads the advance field: a positive Go duration, or none.
func parseAdvance(v string) (time.Duration, error) {
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, simulator.Errorf(simulator.EINVALID, "advance must be a positive Go duration such as 61s or 1m30s")
	}
	return d, nil
}

func (api *API) handleAdminClockSet(w http.ResponseWriter, r *http.Request) {
	var req control.ClockRequest
	if err := api.decode(r, &req); err != nil {
		api.Error(w, r, err)
		return
	}
	advance, err := parseAdvance(req.Advance)
	if err != nil {
		api.Error(w, r, err)
		return
	}
	if req.AccountID != "" {
		api.setAccountClock(w, r, req, advance)
		return
	}
	c, err := api.Control.Clock(r.Context())
	if err != nil {
		api.Error(w, r, fmt.Errorf("read clock: %w", err))
		return
	}
	real := api.now()
	if req.Reset {
		c = simulator.Clock{}
	}
	if req.Set != nil {
		c.Offset = req.Set.Sub(real)
		c.FrozenAt = req.Set.Time
	}
	if advance > 0 {
		c.Offset += advance
		c.FrozenAt = c.FrozenAt.Add(advance)
	}
	if req.Freeze != nil && *req.Freeze != c.Frozen {
		if *req.Freeze {
			c.FrozenAt = c.Now(real)
		} else {
			c.Offset = c.FrozenAt.Sub(real)
		}
		c.Frozen = *req.Freeze
	}
	if err := api.Control.SetClock(r.Context(), c); err != nil {
		api.Error(w, r, fmt.Errorf("set clock: %w", err))
		return
	}
	api.writeClock(w, r, "")
}

// setAccountClock moves one account's clock alone: runs that share a
// simulator, each with its own accounts, skip their rate-limit windows
// (spec §8) without moving anyone else's.
func (api *API) setAccountClock(w http.ResponseWriter, r *http.Request, req control.ClockRequest, advance time.Duration) {
	if req.Set != nil || req.Freeze != nil {
		api.Error(w, r, simulator.Errorf(simulator.EINVALID, "with accountId, only advance and reset apply: set and freeze move the whole simulator's clock"))
		return
	}
	ctx := r.Context()
	if _, _, err := api.account(ctx, req.AccountID); err != nil {
		api.Error(w, r, err)
		return
	}
	off, err := api.Control.AccountOffset(ctx, req.AccountID)
	if err != nil {
		api.Error(w, r, fmt.Errorf("read account clock: %w", err))
		return
	}
	if req.Reset {
		off = 0
	}
	if err := api.Control.SetAccountOffset(ctx, req.AccountID, off+advance); err != nil {
		api.Error(w, r, fmt.Errorf("set account clock: %w", err))
		return
	}
	api.writeClock(w, r, req.AccountID)
}

func (api *API) handleAdminRateReset(w http.ResponseWriter, r *http.Request) {
	var req control.RateResetRequest
	if err := api.decode(r, &req); err != nil {
		api.Error(w, r, err)
		return
	}
	var err error
	if req.AccountID == "" {
		err = api.Counter.ResetAll(r.Context())
	} else {
		err = api.Counter.Reset(r.Context(), req.AccountID)
	}
	if err != nil {
		api.Error(w, r, fmt.Errorf("reset rate counter: %w", err))
		return
	}
	httpjson.Write(w, http.StatusOK, map[string]string{"status": "reset", "accountId": req.AccountID})
}

func (api *API) handleAdminJournalGet(w http.ResponseWriter, r *http.Request) {
	n, err := queryInt(r, "limit", 100)
	if err != nil {
		api.Error(w, r, err)
		return
	}
	if r.URL.Query().Has("accountId") {
		httpjson.Write(w, http.StatusOK, &control.JournalResponse{Entries: api.Journal.LatestOf(r.URL.Query().Get("accountId"), n)})
		return
	}
	httpjson.Write(w, http.StatusOK, &control.JournalResponse{Entries: api.Journal.Latest(n)})
}

// handleAdminJournalClear empties the journal. The client reports are kept:
// they are independent of the journal's ring, and one CI job clearing the
// journal must not erase another's findings (POST /reset clears both).
func (api *API) handleAdminJournalClear(w http.ResponseWriter, r *http.Request) {
	api.Journal.Clear()
	if api.Exchanges != nil {
		api.Exchanges.Clear()
	}
	httpjson.Write(w, http.StatusOK, &control.JournalResponse{Entries: []simulator.JournalEntry{}})
}

func (api *API) handleAdminContacts(w http.ResponseWriter, r *http.Request) {
	offset, err := queryInt(r, "offset", 0)
	if err != nil {
		api.Error(w, r, err)
		return
	}
	limit, err := queryInt(r, "limit", 100)
	if err != nil {
		api.Error(w, r, err)
		return
	}
	cs, total, err := api.Contacts.FindContacts(r.Context(), simulator.ContactFilter{
		AccountID: r.URL.Query().Get("accountId"), Offset: offset, Limit: limit})
	if err != nil {
		api.Error(w, r, fmt.Errorf("find contacts: %w", err))
		return
	}
	if cs == nil {
		cs = []*simulator.Contact{}
	}
	httpjson.Write(w, http.StatusOK, &control.ContactsResponse{Contacts: cs, Total: total})
}

func queryInt(r *http.Request, name string, def int) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, simulator.Errorf(simulator.EINVALID, "%s must be a whole number", name)
	}
	return n, nil
}
