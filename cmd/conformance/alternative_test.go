package main

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/result"
	"github.com/partner-v3/conformance-kit/steps/suite"
)

// altService is a second, independent implementation of the spec. Where
// the spec is silent it chooses through altOptions, whose zero value
// already differs from the simulator: error bodies {"message", "code"}, a
// missing x-account-id answered 401, clock-aligned rate-limit windows that
// count refused requests too, a bad limit or page refused with 422, GET
// answered 404, colours of 3 and 6 digits in either case. Each altDefect hook breaks one sentence of
// the spec at one point of the service, so that the suite can be shown to
// catch it (alt_defects_test.go).
type altService struct {
	opts     altOptions
	d        altDefect // every hook set: withDefaults
	accounts []control.Credentials
	limit    int
	window   time.Duration

	campaigns [][]map[string]any // by account: the list order
	stats     map[int]map[string]map[string]any

	mu       sync.Mutex
	hits     [][]time.Time // by account: counted requests of the window
	contacts []map[string]string
	nextID   int
	// racyID is the contact id generator of altDefect.idGap.
	racyID atomic.Int64
}

// altOptions are the choices the spec leaves open, one field each, each
// read at one place. The zero value is a correct service.
type altOptions struct {
	// ErrorID adds a "requestId" UUID to the {"message", "code"} body of
	// every error but 429 (§7: "Body shape of the other error statuses:
	// not shown").
	ErrorID bool
	// NestedErrors nests the message and code of every error but 429 in
	// an object: {"error": {"code", "message"}} (§7: not shown).
	NestedErrors bool
	// MissingAccount403 answers a missing x-account-id 403 rather than 401
	// (§5 names no answer for a missing header).
	MissingAccount403 bool
	// Sliding counts the requests of the last window before each one (an
	// exact sliding log) instead of windows aligned to the clock (§8 "per
	// minute" reads both ways).
	Sliding bool
	// FirstWindow starts a window at the first request counted after the
	// last window ended, instead of at the clock's (ignored with Sliding).
	FirstWindow bool
	// FreeRefused leaves refused requests out of the count.
	FreeRefused bool
	// RateHeaders is "" (none), "x-ratelimit" (X-RateLimit-Limit,
	// -Remaining, -Reset) or "policy" (RateLimit-Policy, RateLimit); both
	// add Retry-After in seconds to a 429.
	RateHeaders string
	// Clamp serves a limit above 50 as 50 and a page below 1 as page 1,
	// and defaults a missing limit (10) or page (1), instead of refusing
	// them with 422 (§4.2: "not shown").
	Clamp bool
	// NewestFirst lists campaigns by descending Id (§4.2: sorting not
	// shown).
	NewestFirst bool
	// HideDeleted leaves deleted campaigns (active 0) out of the list:
	// totalRecords counts them all, filteredRecords what is kept, and the
	// pages walk over what is kept (§4.2: "how filteredRecords is
	// computed: not shown").
	HideDeleted bool
	// UUIDs makes contactIds UUIDs instead of "c-000001".
	UUIDs bool
	// SameContact answers a contact whose email (in any case) or phoneNo
	// the account added before with the first contactId (§2.1: "Behaviour
	// when a contact already exists: not shown").
	SameContact bool
	// UnknownZero answers a campaignId the account does not own 200 with
	// zero counts instead of 404 (§4.3: not shown).
	UnknownZero bool
	// HTTP2 serves HTTP/2 besides HTTP/1.1.
	HTTP2 bool
	// StrictHeaders refuses, with 400, any request whose headers carry a
	// byte outside ASCII, before it looks at the credentials, as a strict
	// HTTP layer in front of a service may.
	StrictHeaders bool
	// Extras adds what real deployments add without breaking the spec:
	// fields the spec does not list in every body, gzip when the client
	// accepts it, a charset parameter, extra headers.
	Extras bool
	// StrictContacts refuses what §2.1 leaves open with 400 or 422 (see
	// strictContact): long values, many tags, email and phone shapes
	// beyond the plainest.
	StrictContacts bool
	// MissingHeader422 answers a request without x-api-key, x-api-secret
	// or x-account-id 422 with FastAPI's validation body, before the
	// service's own code runs, as a service that declares the headers
	// Header(...) does (§5 says what an incorrect or mismatched header
	// gets, not a missing one).
	MissingHeader422 bool
	// IsoformatTimes writes the timestamps of §2.2 as Python's
	// datetime.isoformat(timespec="milliseconds") does for a time in UTC:
	// +00:00 instead of Z (UTC all the same).
	IsoformatTimes bool
	// CloseConnections answers every request with Connection: close (over
	// HTTP/2, a GOAWAY): no connection carries a second request (the spec
	// does not ask for kept-alive connections).
	CloseConnections bool
}

// altDefect breaks one sentence of the spec: each field is a hook at one
// point of the service, nil keeping the service right there. Accounts are
// numbered 0 (primary) and 1 (second); op is an operation path.
type altDefect struct {
	// match compares the value a client gave for header h with the right
	// one of account acct.
	match func(op, h string, acct int, given, right string) bool
	// forbid refuses account acct with 403 on op.
	forbid func(op string, acct int) bool
	// cost is how many requests op spends of acct's budget.
	cost func(op string, acct int) int
	// limit is acct's budget for op, out of the configured one.
	limit func(op string, acct, limit int) int
	// from is the index of a page's first campaign.
	from func(p altPage, from int) int
	// envelope rewrites a page's envelope, campaign each campaign on it.
	envelope func(p altPage, env map[string]any)
	campaign func(p altPage, c map[string]any)
	// contact answers an Add Contact body: status and contactId.
	contact func(body map[string]any, id string) (int, any)
	// stats rewrites the statistics of campaign c.
	stats func(c map[string]any, st map[string]map[string]any)
	// conn sees the outcome of a request's authentication (status 0:
	// served as acct) with the request, whose RemoteAddr names its
	// connection, and may change it.
	conn func(r *http.Request, op string, acct, status int, msg string) (int, int, string)
	// idGap, when not zero, makes the contact id generator read the last
	// id, wait idGap, and write it back one higher: calls in flight
	// together get the same id.
	idGap time.Duration
	// unread reports a request whose body the service does not read: it
	// is taken as {}.
	unread func(r *http.Request) bool
	// racy counts by reading the account's count, yielding, and writing
	// it back (admitRacy, rate_time_test.go): right one request at a time,
	// it loses the counts of requests in flight at the same time.
	racy bool
}

// altPage is the Campaign List page being answered: its limit and page,
// the records paged over and the number of pages they make.
type altPage struct{ limit, page, records, pages int }

func (d altDefect) withDefaults() altDefect {
	if d.match == nil {
		d.match = func(_, _ string, _ int, given, right string) bool { return given == right }
	}
	if d.forbid == nil {
		d.forbid = func(string, int) bool { return false }
	}
	if d.cost == nil {
		d.cost = func(string, int) int { return 1 }
	}
	if d.limit == nil {
		d.limit = func(_ string, _, limit int) int { return limit }
	}
	if d.from == nil {
		d.from = func(_ altPage, from int) int { return from }
	}
	if d.envelope == nil {
		d.envelope = func(altPage, map[string]any) {}
	}
	if d.campaign == nil {
		d.campaign = func(altPage, map[string]any) {}
	}
	if d.contact == nil {
		d.contact = func(_ map[string]any, id string) (int, any) { return http.StatusOK, id }
	}
	if d.stats == nil {
		d.stats = func(map[string]any, map[string]map[string]any) {}
	}
	if d.unread == nil {
		d.unread = func(*http.Request) bool { return false }
	}
	if d.conn == nil {
		d.conn = func(_ *http.Request, _ string, acct, status int, msg string) (int, int, string) {
			return acct, status, msg
		}
	}
	return d
}

// altAccountCampaigns is how many campaigns each account holds: several
// pages at limit 7 and 49, and a short last page at both.
var altAccountCampaigns = []int{72, 61}

// altCampaignID is the Id of account acct's i-th campaign.
func altCampaignID(acct, i int) int { return 1000 + 40000*acct + 7*i }

func newAltService(accounts []control.Credentials, limit int, window time.Duration, opts altOptions, d altDefect) *altService {
	s := &altService{opts: opts, d: d.withDefaults(), accounts: accounts, limit: limit, window: window,
		stats: map[int]map[string]map[string]any{}, hits: make([][]time.Time, len(accounts)), contacts: make([]map[string]string, len(accounts))}
	for n := range accounts {
		s.contacts[n] = map[string]string{}
		cs := altCampaigns(n, opts.Extras)
		if opts.IsoformatTimes {
			for _, c := range cs {
				for _, f := range []string{"scheduledOn", "broadcastOn", "createdAt", "updatedAt"} {
					c[f] = strings.TrimSuffix(c[f].(string), "Z") + "+00:00"
				}
			}
		}
		for i, c := range cs {
			s.stats[c["Id"].(int)] = altStats(i, c["campaignChannel"].(string))
		}
		if opts.NewestFirst {
			slices.Reverse(cs)
		}
		s.campaigns = append(s.campaigns, cs)
	}
	return s
}

// altCampaigns makes account acct's campaigns, in ascending Id: every
// third is sms, every fourth dynamic, every thirteenth deleted (6 of 72).
// The first sms campaign from either end is static: a defect of dynamic
// sms campaigns hides from a suite that asks only for the first of each
// channel.
func altCampaigns(acct int, extras bool) []map[string]any {
	zones := []struct{ name, offset string }{{"EST", "-05:00"}, {"CET", "+01:00"}, {"IST", "+05:30"}, {"UTC", "+00:00"}}
	statuses := []struct {
		name, colour string
		broadcast    int
	}{{"Scheduled", "#0af", 1}, {"Sent", "#2e7d32", 1}, {"Draft", "#9E9E9E", 0}, {"Paused", "#ffa000", 0}}
	const ts = "2006-01-02T15:04:05.000Z"
	start := time.Date(2026, 1, 5, 9, 30, 0, 0, time.UTC)
	out := make([]map[string]any, altAccountCampaigns[acct])
	for i := range out {
		created := start.Add(time.Duration(i) * 37 * time.Hour)
		z, st := zones[i%len(zones)], statuses[i%len(statuses)]
		reason, typ, active := any(nil), 0, 1
		if st.name == "Paused" {
			reason = "paused by the partner"
		}
		if i%4 == 3 {
			typ = 1
		}
		if i%13 == 6 {
			active = 0
		}
		c := map[string]any{
			"Id": altCampaignID(acct, i), "campaignName": fmt.Sprintf("Spring %d", i), "campaignType": typ,
			"campaignChannel": []string{"email", "sms", "email"}[i%3], "status": st.name, "statusColor": st.colour,
			"active": active, "scheduledOn": created.Add(48 * time.Hour).Format(ts),
			"scheduledTimeZone": z.name, "offset": z.offset, "autoResend": i % 3, "broadcastOn": created.Add(49 * time.Hour).Format(ts),
			"broadcast": st.broadcast, "createdAt": created.Format(ts), "updatedAt": created.Add(time.Duration(i%5) * time.Hour).Add(123 * time.Millisecond).Format(ts),
			"reason": reason,
		}
		if extras {
			c["updatedBy"], c["tags"] = "system", []string{}
		}
		out[i] = c
	}
	return out
}

// altStats are the counts of the i-th campaign: its channel's funnel, the
// other channel's zeros; all zeros for channel "".
func altStats(i int, channel string) map[string]map[string]any {
	email := map[string]any{"Sent": 0, "Opened": 0, "Delivered": 0, "Hardbounce": 0, "Softbounce": 0, "Failed": 0, "Clicked": 0, "Unsubscribe": 0, "Complained": 0}
	text := map[string]any{"Sent": 0, "Delivered": 0, "Failed": 0}
	switch channel {
	case "sms":
		sent := 50 + i
		text["Sent"], text["Delivered"], text["Failed"] = sent, sent-2-i%3, 2+i%3
	case "email":
		sent, delivered := 200+3*i, 190+3*i-i%7
		opened := delivered / 2
		email["Sent"], email["Delivered"], email["Hardbounce"], email["Softbounce"], email["Failed"] = sent, delivered, 4, 3, sent-delivered-7
		email["Opened"], email["Clicked"], email["Unsubscribe"], email["Complained"] = opened, opened/3, i%5, i%2
	}
	return map[string]map[string]any{"emailStat": email, "smsStat": text}
}

// newUUID is a random (version 4) UUID.
func newUUID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

func (s *altService) contentType() string {
	if s.opts.Extras {
		return "application/json; charset=utf-8"
	}
	return "application/json"
}

// fail writes an error other than 429: the spec shows no body for it.
func (s *altService) fail(w http.ResponseWriter, status int, msg string) {
	body := map[string]any{"message": msg, "code": status}
	if s.opts.NestedErrors {
		body = map[string]any{"error": body}
	}
	if s.opts.ErrorID {
		body["requestId"] = newUUID()
	}
	w.Header().Set("Content-Type", s.contentType())
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

func (s *altService) ok(w http.ResponseWriter, r *http.Request, v map[string]any) {
	if s.opts.Extras {
		v["requestId"] = "req-" + fmt.Sprint(time.Now().UnixNano())
	}
	w.Header().Set("Content-Type", s.contentType())
	if !s.opts.Extras || !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		_ = json.NewEncoder(w).Encode(v)
		return
	}
	w.Header().Set("Content-Encoding", "gzip")
	zw := gzip.NewWriter(w)
	_ = json.NewEncoder(zw).Encode(v)
	_ = zw.Close()
}

// authenticate finds the account of the three headers of §5, or the
// status and message that refuse them.
func (s *altService) authenticate(op string, h http.Header) (acct, status int, msg string) {
	key, secret, id := h.Get("x-api-key"), h.Get("x-api-secret"), h.Get("x-account-id")
	for n, a := range s.accounts {
		if !s.d.match(op, "x-api-key", n, key, a.APIKey) || !s.d.match(op, "x-api-secret", n, secret, a.APISecret) {
			continue
		}
		switch {
		case id == "" && !s.opts.MissingAccount403:
			return 0, http.StatusUnauthorized, spec.MsgInvalidCredentials
		case !s.d.match(op, "x-account-id", n, id, a.AccountID) || s.d.forbid(op, n):
			return 0, http.StatusForbidden, spec.MsgUnauthorizedAccount
		}
		return n, 0, ""
	}
	return 0, http.StatusUnauthorized, spec.MsgInvalidCredentials
}

// admit counts a request of op against acct's budget (§8: all operations
// together, one counter per account) and reports whether it is within it,
// what is left, and when the oldest counted request stops counting.
func (s *altService) admit(op string, acct int, now time.Time) (ok bool, left int, reset time.Time) {
	if s.d.racy {
		return s.admitRacy(op, acct, now)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.admitLocked(op, acct, now)
}

// admitLocked is admit with s.mu held.
func (s *altService) admitLocked(op string, acct int, now time.Time) (ok bool, left int, reset time.Time) {
	start := time.Unix(0, now.UnixNano()/int64(s.window)*int64(s.window))
	hits := s.hits[acct]
	switch {
	case s.opts.Sliding:
		start = now.Add(-s.window + 1)
	case s.opts.FirstWindow:
		start = now
		if len(hits) > 0 && now.Sub(hits[0]) < s.window {
			start = hits[0]
		}
	}
	for len(hits) > 0 && hits[0].Before(start) {
		hits = hits[1:]
	}
	limit := s.d.limit(op, acct, s.limit)
	ok = len(hits) < limit
	if ok || !s.opts.FreeRefused {
		for range s.d.cost(op, acct) {
			hits = append(hits, now)
		}
	}
	s.hits[acct] = hits
	reset = start.Add(s.window)
	if s.opts.Sliding && len(hits) > 0 {
		reset = hits[0].Add(s.window)
	}
	return ok, max(limit-len(hits), 0), reset
}

// rateHeaders writes the rate-limit headers of the chosen style.
func (s *altService) rateHeaders(h http.Header, refused bool, left int, reset, now time.Time) {
	secs := int(math.Ceil(reset.Sub(now).Seconds()))
	switch s.opts.RateHeaders {
	case "x-ratelimit":
		h.Set("X-RateLimit-Limit", fmt.Sprint(s.limit))
		h.Set("X-RateLimit-Remaining", fmt.Sprint(left))
		h.Set("X-RateLimit-Reset", fmt.Sprint(reset.Unix()))
	case "policy":
		h.Set("RateLimit-Policy", fmt.Sprintf(`"account";q=%d;w=%d`, s.limit, int(s.window.Seconds())))
		h.Set("RateLimit", fmt.Sprintf(`"account";r=%d;t=%d`, left, secs))
	default:
		return
	}
	if refused {
		h.Set("Retry-After", fmt.Sprint(max(secs, 1)))
	}
}

func (s *altService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.opts.CloseConnections {
		w.Header().Set("Connection", "close")
	}
	if s.opts.Extras {
		w.Header().Set("X-Trace-Id", "trace-1")
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Server", "alt-partner-api/2.1")
		w.Header().Set("Vary", "Accept-Encoding")
	}
	op, found := strings.CutPrefix(r.URL.Path, spec.BasePath+"/")
	if !found || r.Method != http.MethodPost || !slices.Contains(spec.Paths(), op) {
		s.fail(w, http.StatusNotFound, "No such operation")
		return
	}
	if s.opts.StrictHeaders {
		for _, vs := range r.Header {
			for _, v := range vs {
				if strings.IndexFunc(v, func(c rune) bool { return c > 0x7e }) >= 0 {
					s.fail(w, http.StatusBadRequest, "Malformed header")
					return
				}
			}
		}
	}
	if s.opts.MissingHeader422 && s.missingHeaders(w, r.Header) {
		return
	}
	acct, status, msg := s.authenticate(op, r.Header)
	acct, status, msg = s.d.conn(r, op, acct, status, msg)
	if status != 0 {
		s.fail(w, status, msg)
		return
	}
	now := time.Now()
	ok, left, reset := s.admit(op, acct, now)
	s.rateHeaders(w.Header(), !ok, left, reset, now)
	if !ok {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"error": "` + spec.MsgRateLimit + `"}`))
		return
	}
	var body map[string]any
	if s.d.unread(r) {
		body = map[string]any{}
	} else if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body == nil {
		s.fail(w, http.StatusBadRequest, "Body is not a JSON object")
		return
	}
	switch op {
	case spec.PathContactAdd:
		s.addContact(w, r, acct, body)
	case spec.PathCampaignList:
		s.listCampaigns(w, r, acct, body)
	case spec.PathCampaignStats:
		s.campaignStats(w, r, acct, body)
	}
}

// missingHeaders answers a request that lacks one of the three headers of
// §5 as FastAPI does for a required Header(...) parameter: 422, one
// "missing" entry per header; it reports whether it answered.
func (s *altService) missingHeaders(w http.ResponseWriter, h http.Header) bool {
	var detail []any
	for _, name := range spec.Headers() {
		if len(h.Values(name)) == 0 {
			detail = append(detail, map[string]any{"type": "missing", "loc": []any{"header", name}, "msg": "Field required", "input": nil})
		}
	}
	if len(detail) == 0 {
		return false
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusUnprocessableEntity)
	_ = json.NewEncoder(w).Encode(map[string]any{"detail": detail})
	return true
}

func (s *altService) addContact(w http.ResponseWriter, r *http.Request, acct int, body map[string]any) {
	email, _ := body["email"].(string)
	phone, _ := body["phoneNo"].(string)
	if body["email"] == nil && body["phoneNo"] == nil {
		s.fail(w, http.StatusBadRequest, spec.MsgEmailOrPhoneRequired)
		return
	}
	if s.opts.StrictContacts {
		if status, msg := strictContact(body); status != 0 {
			s.fail(w, status, msg)
			return
		}
	}
	racy := ""
	if s.d.idGap > 0 {
		n := s.racyID.Load()
		time.Sleep(s.d.idGap)
		s.racyID.Store(n + 1)
		racy = fmt.Sprintf("c-%06d", n+1)
	}
	s.mu.Lock()
	keys := []string{"e:" + strings.ToLower(email), "p:" + phone}
	id := ""
	if s.opts.SameContact {
		id = cmp.Or(s.contacts[acct][keys[0]], s.contacts[acct][keys[1]])
	}
	if id == "" && racy != "" {
		id = racy
	}
	if id == "" {
		s.nextID++
		id = fmt.Sprintf("c-%06d", s.nextID)
		if s.opts.UUIDs {
			id = newUUID()
		}
	}
	for _, k := range keys {
		if len(k) > 2 && s.contacts[acct][k] == "" {
			s.contacts[acct][k] = id
		}
	}
	s.mu.Unlock()
	status, cid := s.d.contact(body, id)
	if status != http.StatusOK {
		s.fail(w, status, "The contact was not accepted")
		return
	}
	out := map[string]any{"status": "success", "contactId": cid}
	if s.opts.Extras {
		out["traceId"] = "t-" + id
	}
	s.ok(w, r, out)
}

// pageInput reads limit and page (§4.2: integers, limit at most 50, page at
// least 1), clamped or refused as opts.Clamp says.
func (s *altService) pageInput(body map[string]any) (limit, page int, ok bool) {
	read := func(k string, def int) (int, bool) {
		v, present := body[k]
		if !present && s.opts.Clamp {
			return def, true
		}
		f, isNum := v.(float64)
		return int(f), isNum && f == math.Trunc(f) && math.Abs(f) < 1e9
	}
	limit, lok := read("limit", 10)
	page, pok := read("page", 1)
	if s.opts.Clamp {
		limit, page = min(limit, 50), max(page, 1)
	}
	return limit, page, lok && pok && limit >= 1 && limit <= 50 && page >= 1
}

func (s *altService) listCampaigns(w http.ResponseWriter, r *http.Request, acct int, body map[string]any) {
	limit, page, ok := s.pageInput(body)
	if !ok {
		s.fail(w, http.StatusUnprocessableEntity, "limit must be an integer from 1 to 50, page an integer from 1")
		return
	}
	all := s.campaigns[acct]
	kept := all
	if s.opts.HideDeleted {
		kept = slices.DeleteFunc(slices.Clone(all), func(c map[string]any) bool { return c["active"] == 0 })
	}
	p := altPage{limit: limit, page: page, records: len(kept), pages: (len(kept) + limit - 1) / limit}
	from := min(s.d.from(p, min((page-1)*limit, len(kept))), len(kept))
	to := min(from+limit, len(kept))
	cs := make([]any, 0, to-from)
	for _, c := range kept[from:to] {
		c = maps.Clone(c)
		s.d.campaign(p, c)
		cs = append(cs, c)
	}
	env := map[string]any{"pageNo": page, "pageSize": limit, "totalPages": p.pages,
		"totalRecords": len(all), "filteredRecords": len(kept), "campaigns": cs}
	if s.opts.Extras {
		env["apiVersion"] = "3.1"
	}
	s.d.envelope(p, env)
	s.ok(w, r, env)
}

func (s *altService) campaignStats(w http.ResponseWriter, r *http.Request, acct int, body map[string]any) {
	v, present := body["campaignId"]
	if !present || v == nil {
		s.fail(w, http.StatusBadRequest, spec.MsgCampaignIDRequired)
		return
	}
	f, isNum := v.(float64)
	if !isNum || f != math.Trunc(f) {
		s.fail(w, http.StatusBadRequest, "campaignId must be an integer")
		return
	}
	var camp map[string]any
	for _, c := range s.campaigns[acct] {
		if c["Id"] == int(f) {
			camp = c
		}
	}
	st := altStats(0, "")
	switch {
	case camp != nil:
		st = map[string]map[string]any{"emailStat": maps.Clone(s.stats[int(f)]["emailStat"]), "smsStat": maps.Clone(s.stats[int(f)]["smsStat"])}
		s.d.stats(camp, st)
	case !s.opts.UnknownZero:
		s.fail(w, http.StatusNotFound, "Campaign not found")
		return
	}
	out := map[string]any{"emailStat": st["emailStat"], "smsStat": st["smsStat"]}
	if s.opts.Extras {
		st["emailStat"]["Forwarded"], st["smsStat"]["Pending"] = 0, 0
		out["campaignId"] = v
	}
	s.ok(w, r, out)
}

// altRun is the outcome of one run of the normative profile against an
// altService.
type altRun struct {
	code     int
	res      *suite.Result
	out      string
	took     time.Duration
	attempts int
	err      error // why the run has no outcome
}

// altAccounts are the two development accounts of fixtures/accounts.json.
func altAccounts(tb testing.TB) []control.Credentials {
	var out []control.Credentials
	for _, a := range devAccounts(tb)[:2] {
		out = append(out, control.Credentials{APIKey: a.APIKey, APISecret: a.APISecret, AccountID: a.AccountID})
	}
	return out
}

// altTarget is one case of a table: the service's choices, its defect and
// the limit it allows per altWindow.
type altTarget struct {
	opts   altOptions
	defect altDefect
	limit  int
}

// altServer serves a fresh altService for each attempt of a run over one
// HTTPS listener.
type altServer struct{ svc atomic.Pointer[altService] }

func (a *altServer) ServeHTTP(w http.ResponseWriter, r *http.Request) { a.svc.Load().ServeHTTP(w, r) }

// altAttempts is how many times a run is made when its rate-limit burst
// proves nothing (it crossed a clock-aligned window boundary, likelier
// when many runs share two cores).
const altAttempts = 3

// startAltRuns serves each target over HTTPS and runs the normative profile
// against it with both accounts, the runner told the limit is 20 per
// altWindow, without a control API: all targets at once (altConcurrency at
// a time). It returns, per target, a channel that yields the outcome.
func startAltRuns(t *testing.T, targets []altTarget) []chan altRun {
	t.Helper()
	accounts := altAccounts(t)
	sem := make(chan struct{}, altConcurrency)
	out := make([]chan altRun, len(targets))
	for i, tg := range targets {
		h := &altServer{}
		h.svc.Store(newAltService(accounts, tg.limit, altWindow, tg.opts, tg.defect))
		srv := httptest.NewUnstartedServer(h)
		srv.EnableHTTP2 = tg.opts.HTTP2
		srv.StartTLS()
		t.Cleanup(srv.Close)
		caFile, dir := writeCert(t, srv), t.TempDir()
		out[i] = make(chan altRun, 1)
		go func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			var r altRun
			for attempt := 1; attempt <= altAttempts; attempt++ {
				if attempt > 1 {
					h.svc.Store(newAltService(accounts, tg.limit, altWindow, tg.opts, tg.defect))
				}
				r = runAltOnce(srv.URL+spec.BasePath, caFile, filepath.Join(dir, fmt.Sprint(attempt)), accounts, altLimit, altWindow)
				r.attempts = attempt
				if r.err != nil || r.code != exitIncomplete {
					break
				}
			}
			out[i] <- r
		}()
	}
	return out
}

// runAltOnce runs the normative profile (narrowed by flags, such as
// --tags) against the target at baseURL with both accounts, told limit
// requests per window, without a control API; dir receives the reports.
// It touches no *testing.T: it runs on a goroutine of its own.
func runAltOnce(baseURL, caFile, dir string, accounts []control.Credentials, limit int, window time.Duration, flags ...string) altRun {
	primary, second := accounts[0], accounts[1]
	var stdout, stderr bytes.Buffer
	started := time.Now()
	code := run(context.Background(), append([]string{
		"--base-url", baseURL, "--ca-cert", caFile,
		"--api-key", primary.APIKey, "--api-secret", primary.APISecret, "--account-id", primary.AccountID,
		"--second-api-key", second.APIKey, "--second-api-secret", second.APISecret, "--second-account-id", second.AccountID,
		"--rate-limit", fmt.Sprint(limit), "--rate-window", window.String(), "--format", "progress", "--report-dir", dir, "--no-colors", "--no-profile",
	}, flags...), &stdout, &stderr)
	r := altRun{code: code, out: stdout.String() + "\nstderr:\n" + stderr.String(), took: time.Since(started)}
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		r.err = fmt.Errorf("exit status %d and no summary: %w\n%s", code, err, r.out)
		return r
	}
	r.res = &suite.Result{}
	if err := json.Unmarshal(b, r.res); err != nil {
		r.err = fmt.Errorf("decode summary: %w", err)
	}
	return r
}

// inconclusive says why a run proved nothing of §8 (exit 3: its bursts
// crossed a rate-limit window boundary on every try). Empty when it proved
// something.
func (r *altRun) inconclusive() string {
	if r.res == nil {
		return ""
	}
	for _, sc := range r.res.Scenarios {
		if sc.Status == result.StatusInconclusive {
			return sc.Message
		}
	}
	return ""
}

// TestAlternativeImplementationPasses: the suite must accept the choices
// the spec leaves open. Each case is a correct implementation that chooses
// differently from the simulator and from the others; each must pass the
// normative profile with both accounts, no scenario failed or skipped.
func TestAlternativeImplementationPasses(t *testing.T) {
	waitsForWindows(t)
	tests := []struct {
		name  string
		opts  altOptions
		check func(t *testing.T, r altRun)
	}{
		{"extra fields, gzip, charset and headers; clock-aligned windows counting refused requests; HTTP/1.1 only",
			altOptions{Extras: true}, checkExtrasWarned},
		// §4.2 leaves filtering open ("filteredRecords: Count of records
		// after filtering") and says "totalPages: Number of pages": pages
		// over what is kept. A suite that pages over totalRecords fails
		// this case, wrongly.
		{"deleted campaigns filtered out: filteredRecords 66 of totalRecords 72, pages over the 66, newest first",
			altOptions{HideDeleted: true, NewestFirst: true}, nil},
		{"limit, page and missing fields clamped or defaulted; sliding windows; X-RateLimit headers; UUID contactIds; a repeated contact keeps its contactId; unknown campaign 200 with zeros; requestId in error bodies; HTTP/2",
			altOptions{Clamp: true, Sliding: true, RateHeaders: "x-ratelimit", UUIDs: true, SameContact: true, UnknownZero: true, ErrorID: true, MissingAccount403: true, HTTP2: true},
			checkProtocol("HTTP/2.0")},
		{"clock-aligned windows that spare refused requests; RateLimit-Policy and Retry-After in seconds; newest first",
			altOptions{FreeRefused: true, RateHeaders: "policy", NewestFirst: true}, nil},
		{"sliding windows that spare refused requests, no rate-limit headers; UUID contactIds; a missing x-account-id answered 403; non-ASCII header bytes refused with 400",
			altOptions{Sliding: true, FreeRefused: true, UUIDs: true, MissingAccount403: true, StrictHeaders: true}, nil},
		// §5 says what an incorrect key or secret and a mismatched account
		// id get, not what a request without the header gets: FastAPI's
		// 422 for a required Header(...) is a warning, never a failure.
		// And §2.2's "ISO 8601 UTC" is written +00:00 by Python's isoformat:
		// UTC, a warning.
		{"a request without x-api-key, x-api-secret or x-account-id answered 422 with FastAPI's body; timestamps written +00:00 by isoformat",
			altOptions{MissingHeader422: true, IsoformatTimes: true}, checkMissingHeaderWarned},
	}
	altTable(t, len(tests), func(i int) (string, altTarget) {
		return tests[i].name, altTarget{opts: tests[i].opts, limit: altLimit}
	}, func(t *testing.T, i int, r altRun) {
		wantPass(t, r)
		if tests[i].check != nil {
			tests[i].check(t, r)
		}
		t.Logf("%d passed, %d failed, %d skipped, %d warnings, %d requests, %d budget waits, %s (attempt %d)",
			r.res.Passed, r.res.Failed, r.res.Skipped, r.res.Warnings, r.res.Requests, len(r.res.BudgetWaits), r.took.Round(time.Millisecond), r.attempts)
	})
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// checkExtrasWarned: fields the spec does not list are warnings that name
// them, in the sections of the bodies that carry them; a charset=utf-8 is
// not.
func checkExtrasWarned(t *testing.T, r altRun) {
	var warnings []string
	for _, sc := range r.res.Scenarios {
		for _, w := range sc.Warnings {
			warnings = append(warnings, result.SectionList(w.Sections)+" "+w.Message)
		}
	}
	all := strings.Join(warnings, "\n")
	for _, want := range []string{`"requestId"`, `"apiVersion"`, `"traceId"`, `"updatedBy"`, `"Forwarded"`, `"Pending"`, `"campaignId"`} {
		if !strings.Contains(all, want) {
			t.Errorf("no warning names the extra field %s; warnings:\n%s", want, all)
		}
	}
	if strings.Contains(all, "charset") {
		t.Errorf("charset=utf-8 was warned about:\n%s", all)
	}
	if r.res.Warnings == 0 || !strings.Contains(r.out, "WARNING §") {
		t.Errorf("the verdict block lists no warning:\n%s", r.out)
	}
	checkProtocol("HTTP/1.1")(t, r)
}

// checkMissingHeaderWarned: each header's missing-header answer (422) is
// one warning of §5 naming the header, counted over the operations and
// accounts, and nothing failed.
func checkMissingHeaderWarned(t *testing.T, r altRun) {
	for _, h := range spec.Headers() {
		want := "a request without " + h + " was answered 422"
		found := false
		for _, sc := range r.res.Scenarios {
			for _, w := range sc.Warnings {
				found = found || strings.HasPrefix(w.Message, want) && slices.Contains(w.Sections, "5") && w.Count >= 6
			}
		}
		if !found {
			t.Errorf("no §5 warning %q seen for all 6 operations and accounts", want)
		}
	}
	warned := false
	for _, sc := range r.res.Scenarios {
		for _, w := range sc.Warnings {
			warned = warned || strings.Contains(w.Message, "with the zero offset +00:00") && slices.Contains(w.Sections, "2.2")
		}
	}
	if !warned {
		t.Error("no §2.2 warning about timestamps written +00:00")
	}
}

func checkProtocol(want string) func(t *testing.T, r altRun) {
	return func(t *testing.T, r altRun) {
		if len(r.res.TLS) == 0 || r.res.TLS[0].Protocol != want {
			t.Errorf("TLS sessions %+v, want %s", r.res.TLS, want)
		}
	}
}

// TestAlternativeImplementationOffByOneFails: the same implementation with
// clock-aligned windows that let one request too many through must fail,
// on the §8 scenario and no other.
func TestAlternativeImplementationOffByOneFails(t *testing.T) {
	waitsForWindows(t)
	r := <-startAltRuns(t, []altTarget{{limit: altLimit + 1}})[0]
	if wantCaught(t, r, fmt.Sprintf("a limit of %d per window told to expect %d", altLimit+1, altLimit), altCatch{rule: "rate-shared"}) == nil {
		return
	}
	failed := r.res.FailedScenarios()
	if len(failed) != 1 || !slices.Contains(failed[0].Tags, "@rule-rate-shared") || !slices.Contains(failed[0].Sections, "8") {
		t.Fatalf("failed scenarios %q, want only the §8 scenario of rule rate-shared", names(failed))
	}
}
