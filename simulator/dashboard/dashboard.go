// Package dashboard is the simulator's dashboard for people (issue 30): the
// accounts and their budgets (spec §8), the live journal, the client
// reports, the faults and the clock, and the profile each account plays, in
// a browser. It is mounted under /ui/ on the control listener and shares
// the control API's token; every change it makes goes through the control
// API's own handlers (forward), so its checks and messages are the control
// API's, word for word. The front end is embedded (package web files,
// vanilla JavaScript, no CDN, no build step).
package dashboard

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"html/template"
	"io/fs"
	"net/http"
	"sync"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/controlapi"
	"github.com/partner-v3/conformance-kit/simulator/httpjson"
	"github.com/partner-v3/conformance-kit/simulator/profile"
)

// Prefix is the path the dashboard is served under on the control listener.
const Prefix = "/ui/"

// Names of the session cookie and of the header that carries the CSRF token
// of every state-changing call.
const (
	CookieName = "sim_ui_session"
	CSRFHeader = "X-CSRF-Token"
)

// sessionTTL bounds a login: a dashboard left open for a working day.
const sessionTTL = 12 * time.Hour

//go:embed web
var webFS embed.FS

// Config is what the dashboard shows and acts on.
type Config struct {
	// API is the control API the dashboard shares its token, state and
	// checks with. Required.
	API *controlapi.API
	// Profile is the profile the simulator plays, for accounts without one
	// of their own. May be nil: then the default profile.
	Profile *profile.Profile
}

// Dashboard serves the pages, the login and the dashboard's calls. Make one
// with New.
type Dashboard struct {
	api     *controlapi.API
	play    *profile.Profile
	mux     *http.ServeMux
	pages   *template.Template
	csrfKey []byte
	cop     *http.CrossOriginProtection

	mu       sync.Mutex
	sessions map[string]time.Time // session id -> expiry
}

// New returns the dashboard over cfg. It panics without an API: a
// programmer's error.
func New(cfg Config) *Dashboard {
	if cfg.API == nil {
		panic("dashboard: the control API is required")
	}
	d := &Dashboard{api: cfg.API, play: cfg.Profile, sessions: map[string]time.Time{},
		cop: http.NewCrossOriginProtection()}
	if d.play == nil {
		d.play = profile.Default()
	}
	d.csrfKey = make([]byte, 32)
	_, _ = rand.Read(d.csrfKey)
	d.pages = template.Must(template.ParseFS(webFS, "web/*.html"))
	static, err := fs.Sub(webFS, "web/static")
	if err != nil {
		panic(err)
	}

	mux := http.NewServeMux()
	mux.Handle("GET /ui/static/", http.StripPrefix("/ui/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /ui/login", d.handleLoginPage)
	mux.HandleFunc("POST /ui/login", d.handleLogin)
	mux.HandleFunc("POST /ui/logout", d.changes(d.handleLogout))
	for _, p := range pageNames {
		mux.HandleFunc("GET "+p.path, d.page(p.name))
	}
	mux.HandleFunc("GET /ui/api/overview", d.reads(d.handleOverview))
	mux.HandleFunc("GET /ui/api/profiles", d.reads(d.handleProfiles))
	mux.HandleFunc("GET /ui/api/spec", d.reads(d.handleSpec))
	mux.HandleFunc("GET /ui/events", d.reads(d.handleEvents))
	d.registerForwards(mux)
	mux.HandleFunc("/ui/", func(w http.ResponseWriter, r *http.Request) {
		d.api.Error(w, r, simulator.Errorf(simulator.ENOTFOUND, "Dashboard: no page %s %s", r.Method, httpjson.QuotePath(r.URL.Path)))
	})
	d.mux = mux
	return d
}

// pageNames are the dashboard's pages, one template each.
var pageNames = []struct{ path, name string }{
	{"/ui/{$}", "overview"},
	{"/ui/journal", "journal"},
	{"/ui/report", "report"},
	{"/ui/faults", "faults"},
	{"/ui/profile", "profile"},
	{"/ui/spec", "spec"},
}

// ServeHTTP serves the dashboard. Every answer forbids framing and
// sniffing, and the pages allow scripts from the dashboard itself only.
func (d *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "+
		"connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	if r.URL.Path == "/ui" {
		http.Redirect(w, r, Prefix, http.StatusSeeOther)
		return
	}
	d.mux.ServeHTTP(w, r)
}

// session returns the request's session id when its cookie names a live
// session, else "".
func (d *Dashboard) session(r *http.Request) string {
	c, err := r.Cookie(CookieName)
	if err != nil || c.Value == "" {
		return ""
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	exp, ok := d.sessions[c.Value]
	if !ok || time.Now().After(exp) {
		delete(d.sessions, c.Value)
		return ""
	}
	return c.Value
}

// csrfToken is the CSRF token of session: derived from it with a key the
// dashboard keeps, so it needs no storage and a token of one session is
// worthless in another.
func (d *Dashboard) csrfToken(session string) string {
	m := hmac.New(sha256.New, d.csrfKey)
	m.Write([]byte(session))
	return hex.EncodeToString(m.Sum(nil))
}

// reads guards a read: a logged-in session.
func (d *Dashboard) reads(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if d.session(r) == "" {
			d.api.Error(w, r, simulator.Errorf(simulator.EUNAUTHORIZED, "Dashboard: log in first"))
			return
		}
		h(w, r)
	}
}

// changes guards a state change: same origin (Sec-Fetch-Site or Origin),
// a logged-in session, and its CSRF token in the X-CSRF-Token header,
// which a cross-site form cannot set.
func (d *Dashboard) changes(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := d.cop.Check(r); err != nil {
			d.api.Error(w, r, simulator.Errorf(simulator.EFORBIDDEN, "Dashboard: cross-origin request refused"))
			return
		}
		s := d.session(r)
		if s == "" {
			d.api.Error(w, r, simulator.Errorf(simulator.EUNAUTHORIZED, "Dashboard: log in first"))
			return
		}
		if subtle.ConstantTimeCompare([]byte(r.Header.Get(CSRFHeader)), []byte(d.csrfToken(s))) != 1 {
			d.api.Error(w, r, simulator.Errorf(simulator.EFORBIDDEN, "Dashboard: missing or wrong CSRF token"))
			return
		}
		h(w, r)
	}
}

// pageData is what a page's template gets.
type pageData struct {
	Page, CSRF, Error string
}

func (d *Dashboard) page(name string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s := d.session(r)
		if s == "" {
			http.Redirect(w, r, "/ui/login", http.StatusSeeOther)
			return
		}
		d.render(w, http.StatusOK, "page.html", pageData{Page: name, CSRF: d.csrfToken(s)})
	}
}

func (d *Dashboard) render(w http.ResponseWriter, status int, tmpl string, data pageData) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = d.pages.ExecuteTemplate(w, tmpl, data)
}

func (d *Dashboard) handleLoginPage(w http.ResponseWriter, r *http.Request) {
	d.render(w, http.StatusOK, "login.html", pageData{Page: "login"})
}

// handleLogin checks the control API's token, posted from the login form
// (never in a URL), and starts a session whose cookie is Secure, HttpOnly
// and SameSite=Strict. A cross-site login is refused too (login CSRF).
func (d *Dashboard) handleLogin(w http.ResponseWriter, r *http.Request) {
	if err := d.cop.Check(r); err != nil {
		d.render(w, http.StatusForbidden, "login.html", pageData{Page: "login", Error: "Cross-origin login refused."})
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	token := r.PostFormValue("token")
	if d.api.Token == "" || subtle.ConstantTimeCompare([]byte(token), []byte(d.api.Token)) != 1 {
		d.render(w, http.StatusUnauthorized, "login.html", pageData{Page: "login", Error: "Wrong token: use the control API's bearer token, as the simulator printed it at start."})
		return
	}
	var b [32]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	now := time.Now()
	d.mu.Lock()
	for k, exp := range d.sessions {
		if now.After(exp) {
			delete(d.sessions, k)
		}
	}
	d.sessions[id] = now.Add(sessionTTL)
	d.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: id, Path: Prefix, MaxAge: int(sessionTTL / time.Second),
		Secure: true, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, Prefix, http.StatusSeeOther)
}

func (d *Dashboard) handleLogout(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(CookieName); err == nil {
		d.mu.Lock()
		delete(d.sessions, c.Value)
		d.mu.Unlock()
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: Prefix, MaxAge: -1,
		Secure: true, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	httpjson.Write(w, http.StatusOK, map[string]string{"status": "logged out"})
}
