package server

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
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// maxAdminBodyBytes caps a control API body.
const maxAdminBodyBytes = 1 << 20

// controlAPI is the control listener's router: the bearer token, then the
// calls of docs/control-api.md on a ServeMux, every answer in JSON.
type controlAPI struct {
	s   *Server
	mux *http.ServeMux
}

// AdminHandler returns the control API. It lives on its own listener and
// never under the partner base path, so a partner's client cannot reach it
// by mistake; every call but GET /healthz needs "Authorization: Bearer
// <AdminToken>".
func (s *Server) AdminHandler() http.Handler {
	s.init()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", s.handleHealth)
	mux.HandleFunc("GET /version", s.handleAdminConfig)
	mux.HandleFunc("GET /config", s.handleAdminConfig)
	mux.HandleFunc("POST /reset", s.handleAdminReset)
	mux.HandleFunc("GET /clock", s.handleAdminClockGet)
	mux.HandleFunc("POST /clock", s.handleAdminClockSet)
	mux.HandleFunc("POST /rate-limit/reset", s.handleAdminRateReset)
	mux.HandleFunc("GET /faults", s.handleAdminFaultsGet)
	mux.HandleFunc("POST /faults", s.handleAdminFaultsAdd)
	mux.HandleFunc("DELETE /faults", s.handleAdminFaultsClear)
	mux.HandleFunc("DELETE /faults/{id}", s.handleAdminFaultDelete)
	mux.HandleFunc("GET /journal", s.handleAdminJournalGet)
	mux.HandleFunc("DELETE /journal", s.handleAdminJournalClear)
	mux.HandleFunc("GET /contacts", s.handleAdminContacts)
	mux.HandleFunc("POST /accounts", s.handleAccountCreate)
	mux.HandleFunc("GET /accounts", s.handleAccountList)
	mux.HandleFunc("GET /accounts/{accountId}", s.handleAccountGet)
	mux.HandleFunc("DELETE /accounts/{accountId}", s.handleAccountDelete)
	mux.HandleFunc("GET /accounts/{accountId}/budget", s.handleAccountBudget)
	mux.HandleFunc("GET /accounts/{accountId}/report", s.handleAdminReport)
	if s.Metrics != nil {
		mux.Handle("GET /metrics", s.Metrics)
	}
	registerPprof(mux)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.Error(w, r, simulator.Errorf(simulator.ENOTFOUND, "No control call %s %s", r.Method, r.URL.Path))
	})
	return withRequestID(s.recoverer(&controlAPI{s: s, mux: mux}))
}

func (c *controlAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s := c.s
	if r.URL.Path != "/healthz" && !s.adminAuthorized(r) {
		s.Error(w, r, simulator.Errorf(simulator.EUNAUTHORIZED, "Control API: missing or wrong bearer token"))
		return
	}
	// The mux would redirect a path that is not clean (an empty id in
	// /accounts//report, //reset, /./) with an HTML body, and CONNECT or
	// OPTIONS * name no path at all: none of them is a control call.
	if !cleanAdminPath(r.URL.Path) {
		s.Error(w, r, simulator.Errorf(simulator.ENOTFOUND, "No control call %s %s", r.Method, quotePath(r.RequestURI)))
		return
	}
	// The mux answers a known path with the wrong method by a plain-text
	// 405; answer it in JSON like every other error.
	if _, pattern := c.mux.Handler(r); pattern == "" || pattern == "/" {
		if allow := c.allow(r); allow != "" {
			w.Header().Set("Allow", allow)
			s.Error(w, r, simulator.Errorf(simulator.ENOTALLOWED, "Method %s is not allowed on %s", r.Method, r.URL.Path))
			return
		}
	}
	c.mux.ServeHTTP(&noRedirect{ResponseWriter: w, s: s, r: r}, r)
}

// allow lists the methods the mux has for r's path.
func (c *controlAPI) allow(r *http.Request) string {
	var allow string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, p := c.mux.Handler(probe); p != "" && p != "/" {
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
	s          *Server
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
	w.s.Error(w.ResponseWriter, w.r, simulator.Errorf(simulator.ENOTFOUND, "No control call %s %s", w.r.Method, quotePath(w.r.URL.Path)))
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

func (s *Server) adminAuthorized(r *http.Request) bool {
	want := "Bearer " + s.AdminToken
	return s.AdminToken != "" && subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte(want)) == 1
}

// decodeAdmin decodes an optional JSON body into v, strictly: an empty
// body is fine; otherwise one JSON object, with the partner API's rules
// (UTF-8, no field twice, nothing after it: a fault was once stored from
// `{…} x`), no unknown field and every field of its type.
func decodeAdmin(r *http.Request, v any) error {
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxAdminBodyBytes))
	if err != nil {
		return bodyReadError(err)
	}
	if len(trimJSONSpace(body)) == 0 {
		return nil
	}
	if _, err := parseFields(body); err != nil {
		return simulator.Errorf(simulator.ErrorCode(err), "Control API: %s", simulator.ErrorMessage(err))
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return simulator.Errorf(simulator.EINVALID, "Control API: bad JSON body: %s", jsonErrorText(err))
	}
	return nil
}

func (s *Server) handleAdminConfig(w http.ResponseWriter, r *http.Request) {
	limit, window := s.rateLimit()
	writeJSON(w, http.StatusOK, &simulator.ConfigResponse{RateLimit: limit, RateWindow: window.String(),
		MaxBodyBytes: s.maxBodyBytes(), BasePath: spec.BasePath, BuildInfo: s.Info, Profile: ProfileInfo(s.serverProfile())})
}

// handleAdminReset puts the state back as it was at start: no contacts, no
// counted requests, no faults, real time, an empty journal. Campaigns are
// read-only through the partner API, so they are already as seeded.
func (s *Server) handleAdminReset(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if err := errors.Join(
		s.Contacts.DeleteContacts(ctx, ""),
		s.Counter.ResetAll(ctx),
		s.Control.ResetControl(ctx),
	); err != nil {
		s.Error(w, r, fmt.Errorf("reset: %w", err))
		return
	}
	s.journal.clear()
	if s.Reports != nil {
		s.Reports.Reset()
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "reset"})
}

// writeClock answers the simulator's clock, or one account's (the
// simulator's plus the account's own offset) when accountID, a known
// account the caller looked up, is set.
func (s *Server) writeClock(w http.ResponseWriter, r *http.Request, accountID string) {
	c, err := s.Control.Clock(r.Context())
	if err != nil {
		s.Error(w, r, fmt.Errorf("read clock: %w", err))
		return
	}
	out := &simulator.ClockResponse{Now: simulator.Timestamp{Time: c.Now(s.now()())}, Offset: c.Offset.String(), Frozen: c.Frozen}
	if accountID != "" {
		off, err := s.Control.AccountOffset(r.Context(), accountID)
		if err != nil {
			s.Error(w, r, fmt.Errorf("read account clock: %w", err))
			return
		}
		out.Now.Time = out.Now.Add(off)
		out.AccountID, out.AccountOffset = accountID, off.String()
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleAdminClockGet(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("accountId")
	if id != "" {
		if _, _, err := s.account(r.Context(), id); err != nil {
			s.Error(w, r, err)
			return
		}
	}
	s.writeClock(w, r, id)
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

func (s *Server) handleAdminClockSet(w http.ResponseWriter, r *http.Request) {
	var req simulator.ClockRequest
	if err := decodeAdmin(r, &req); err != nil {
		s.Error(w, r, err)
		return
	}
	advance, err := parseAdvance(req.Advance)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	if req.AccountID != "" {
		s.setAccountClock(w, r, req, advance)
		return
	}
	c, err := s.Control.Clock(r.Context())
	if err != nil {
		s.Error(w, r, fmt.Errorf("read clock: %w", err))
		return
	}
	real := s.now()()
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
	if err := s.Control.SetClock(r.Context(), c); err != nil {
		s.Error(w, r, fmt.Errorf("set clock: %w", err))
		return
	}
	s.writeClock(w, r, "")
}

// setAccountClock moves one account's clock alone: runs that share a
// simulator, each with its own accounts, skip their rate-limit windows
// (spec §8) without moving anyone else's.
func (s *Server) setAccountClock(w http.ResponseWriter, r *http.Request, req simulator.ClockRequest, advance time.Duration) {
	if req.Set != nil || req.Freeze != nil {
		s.Error(w, r, simulator.Errorf(simulator.EINVALID, "with accountId, only advance and reset apply: set and freeze move the whole simulator's clock"))
		return
	}
	ctx := r.Context()
	if _, _, err := s.account(ctx, req.AccountID); err != nil {
		s.Error(w, r, err)
		return
	}
	off, err := s.Control.AccountOffset(ctx, req.AccountID)
	if err != nil {
		s.Error(w, r, fmt.Errorf("read account clock: %w", err))
		return
	}
	if req.Reset {
		off = 0
	}
	if err := s.Control.SetAccountOffset(ctx, req.AccountID, off+advance); err != nil {
		s.Error(w, r, fmt.Errorf("set account clock: %w", err))
		return
	}
	s.writeClock(w, r, req.AccountID)
}

func (s *Server) handleAdminRateReset(w http.ResponseWriter, r *http.Request) {
	var req simulator.RateResetRequest
	if err := decodeAdmin(r, &req); err != nil {
		s.Error(w, r, err)
		return
	}
	var err error
	if req.AccountID == "" {
		err = s.Counter.ResetAll(r.Context())
	} else {
		err = s.Counter.Reset(r.Context(), req.AccountID)
	}
	if err != nil {
		s.Error(w, r, fmt.Errorf("reset rate counter: %w", err))
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "reset", "accountId": req.AccountID})
}

func (s *Server) handleAdminJournalGet(w http.ResponseWriter, r *http.Request) {
	n, err := queryInt(r, "limit", 100)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	if r.URL.Query().Has("accountId") {
		writeJSON(w, http.StatusOK, &simulator.JournalResponse{Entries: s.journal.latestOf(r.URL.Query().Get("accountId"), n)})
		return
	}
	writeJSON(w, http.StatusOK, &simulator.JournalResponse{Entries: s.journal.latest(n)})
}

// handleAdminJournalClear empties the journal. The client reports are kept:
// they are independent of the journal's ring, and one CI job clearing the
// journal must not erase another's findings (POST /reset clears both).
func (s *Server) handleAdminJournalClear(w http.ResponseWriter, r *http.Request) {
	s.journal.clear()
	writeJSON(w, http.StatusOK, &simulator.JournalResponse{Entries: []simulator.JournalEntry{}})
}

func (s *Server) handleAdminContacts(w http.ResponseWriter, r *http.Request) {
	offset, err := queryInt(r, "offset", 0)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	limit, err := queryInt(r, "limit", 100)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	cs, total, err := s.Contacts.FindContacts(r.Context(), simulator.ContactFilter{
		AccountID: r.URL.Query().Get("accountId"), Offset: offset, Limit: limit})
	if err != nil {
		s.Error(w, r, fmt.Errorf("find contacts: %w", err))
		return
	}
	if cs == nil {
		cs = []*simulator.Contact{}
	}
	writeJSON(w, http.StatusOK, &simulator.ContactsResponse{Contacts: cs, Total: total})
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
