package main

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// tinyService is a third implementation of the spec, written for the
// deployment-profile tests (issue 20) to choose differently from both the
// simulator and altService at every point the spec leaves open, the way a
// vendor's framework would:
//
//   - error bodies {"detail", "status", "timestamp"} labelled
//     application/problem+json (§7: shape not shown), the other answers
//     application/json;charset=UTF-8;
//   - the body is validated before the credentials and before the limit,
//     and a request refused for its body is not counted (§5, §8 silent on
//     precedence and on what counts);
//   - a fixed window that opens at the first request after the last one
//     ended (§8 "per minute"), RateLimit-Policy/RateLimit headers, and
//     Retry-After as an HTTP-date;
//   - sequential numeric contactIds; the same email refused with 409, the
//     same phone number a new contact (§2.1: not shown);
//   - a lenient Add Contact: only gender, the date's pattern, opt-status
//     values, lists and email addresses are checked, with 422 (§4.1);
//   - limit above 50 and page below 1 clamped, missing fields defaulted
//     (limit 20), numeric strings read as numbers, a page past the last
//     answered with the last page, campaigns by name (§4.2: not shown);
//   - an unknown campaign 200 with zeros (§4.3: not shown);
//   - a text/plain body accepted, a 1 MiB body limit, GET answered 404,
//     HTTP/1.1 only, gzip, a createdAt added to Add Contact's answer;
//   - its own campaign vocabulary (§2.2: status values not shown).
type tinyService struct {
	accounts []control.Credentials
	limit    int
	window   time.Duration

	mu       sync.Mutex
	windows  []tinyWindow // by account
	nextID   int
	emails   []map[string]bool // by account: lower-cased emails added
	campaign [][]map[string]any
}

// tinyWindow is one account's fixed window: it opened at start, and
// counted requests in it.
type tinyWindow struct {
	start   time.Time
	counted int
}

// tinyBodyLimit is the largest request body tinyService reads.
const tinyBodyLimit = 1 << 20

func newTinyService(accounts []control.Credentials, limit int, window time.Duration) *tinyService {
	s := &tinyService{accounts: accounts, limit: limit, window: window, nextID: 100000,
		windows: make([]tinyWindow, len(accounts))}
	for n := range accounts {
		s.emails = append(s.emails, map[string]bool{})
		s.campaign = append(s.campaign, tinyCampaigns(n))
	}
	return s
}

// tinyCampaigns are account acct's campaigns, sorted by name as they are
// listed: names sort differently from Ids ("Autumn 10" before "Autumn 2").
func tinyCampaigns(acct int) []map[string]any {
	return campaignStyle{
		vocab: []struct{ status, colour, reason string }{
			{"ACTIVE", "#4caf50", ""}, {"COMPLETED", "#9e9e9e", ""}, {"CANCELLED", "#f44336", "Budget exhausted"},
		},
		zones: []struct{ name, offset string }{{"PST", "-08:00"}, {"GMT", "+00:00"}, {"JST", "+09:00"}},
		start: time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC), every: 26 * time.Hour, broadcast: 2 * time.Hour, updated: 3 * time.Hour,
		count: func(acct int) int { return 45 + 7*acct },
		id:    func(acct, i int) int { return 5000 + 100*acct + i },
		name:  named("Autumn %d"), campaignType: func(i int) int { return i % 2 }, autoResend: func(i int) int { return i % 2 },
		channels: [2]string{"sms", "email"},
		list: func(cs []map[string]any) {
			slices.SortFunc(cs, func(a, b map[string]any) int {
				return strings.Compare(a["campaignName"].(string), b["campaignName"].(string))
			})
		},
	}.campaigns(acct)
}

func (s *tinyService) write(w http.ResponseWriter, r *http.Request, status int, v any) {
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	}
	if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
		return
	}
	w.Header().Set("Content-Encoding", "gzip")
	w.WriteHeader(status)
	zw := gzip.NewWriter(w)
	_ = json.NewEncoder(zw).Encode(v)
	_ = zw.Close()
}

// fail writes an error but 429 as RFC 9457 problem details would label
// it.
func (s *tinyService) fail(w http.ResponseWriter, r *http.Request, status int, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	s.write(w, r, status, map[string]any{"detail": detail, "status": status, "timestamp": time.Now().UTC().Format(time.RFC3339)})
}

func (s *tinyService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	op, found := strings.CutPrefix(r.URL.Path, spec.BasePath+"/")
	if !found || !slices.Contains(spec.Paths(), op) || r.Method != http.MethodPost {
		s.fail(w, r, http.StatusNotFound, "Resource not found")
		return
	}
	raw := make([]byte, tinyBodyLimit+1)
	n, _ := readFull(r, raw)
	if n > tinyBodyLimit {
		s.fail(w, r, http.StatusRequestEntityTooLarge, "Payload too large")
		return
	}
	var body map[string]any
	if err := json.Unmarshal(raw[:n], &body); err != nil || body == nil {
		s.fail(w, r, http.StatusBadRequest, "Malformed JSON body")
		return
	}
	// The body first: a bad one is answered before anything else and
	// spends nothing.
	answer, status, detail := s.check(op, body)
	if status != 0 {
		s.fail(w, r, status, detail)
		return
	}
	acct, status, detail := s.authenticate(r.Header)
	if status != 0 {
		s.fail(w, r, status, detail)
		return
	}
	if !s.admit(w, acct) {
		w.Header().Set("Content-Type", "application/json;charset=UTF-8")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"error":"` + spec.MsgRateLimit + `"}`))
		return
	}
	v, status, detail := answer(acct)
	if status != 0 {
		s.fail(w, r, status, detail)
		return
	}
	s.write(w, r, http.StatusOK, v)
}

// tinyAnswer answers an admitted request: its body, or a refusal.
type tinyAnswer func(acct int) (v any, status int, detail string)

// answered wraps what always succeeds.
func answered(f func(acct int) any) tinyAnswer {
	return func(acct int) (any, int, string) { return f(acct), 0, "" }
}

func readFull(r *http.Request, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := r.Body.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func (s *tinyService) authenticate(h http.Header) (acct, status int, detail string) {
	key, secret, id := h.Get(spec.HeaderAPIKey), h.Get(spec.HeaderAPISecret), h.Get(spec.HeaderAccountID)
	for n, a := range s.accounts {
		if key != a.APIKey || secret != a.APISecret {
			continue
		}
		switch id {
		case "":
			return 0, http.StatusUnauthorized, spec.MsgInvalidCredentials
		case a.AccountID:
			return n, 0, ""
		}
		return 0, http.StatusForbidden, spec.MsgUnauthorizedAccount
	}
	return 0, http.StatusUnauthorized, spec.MsgInvalidCredentials
}

// admit counts one request in acct's fixed window and writes the rate
// headers.
func (s *tinyService) admit(w http.ResponseWriter, acct int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	win := &s.windows[acct]
	if win.start.IsZero() || !now.Before(win.start.Add(s.window)) {
		*win = tinyWindow{start: now}
	}
	ok := win.counted < s.limit
	if ok {
		win.counted++
	}
	end := win.start.Add(s.window)
	secs := int(math.Ceil(end.Sub(now).Seconds()))
	h := w.Header()
	h.Set("RateLimit-Policy", fmt.Sprintf("%d;w=%d", s.limit, int(math.Ceil(s.window.Seconds()))))
	h.Set("RateLimit", fmt.Sprintf("limit=%d, remaining=%d, reset=%d", s.limit, s.limit-win.counted, secs))
	if !ok {
		h.Set("Retry-After", end.Add(time.Second-1).UTC().Truncate(time.Second).Format(http.TimeFormat))
	}
	return ok
}

// check validates body for op and returns how to answer it, or the
// refusal.
func (s *tinyService) check(op string, body map[string]any) (answer tinyAnswer, status int, detail string) {
	switch op {
	case spec.PathContactAdd:
		return s.checkContact(body)
	case spec.PathCampaignList:
		limit, lok := tinyInt(body, "limit", 20)
		page, pok := tinyInt(body, "page", 1)
		if !lok || !pok {
			return nil, http.StatusUnprocessableEntity, "limit and page must be numbers"
		}
		if limit < 1 {
			return nil, http.StatusUnprocessableEntity, "limit must be at least 1"
		}
		limit, page = min(limit, spec.MaxPageSize), max(page, spec.MinPage)
		return answered(func(acct int) any { return s.page(acct, limit, page) }), 0, ""
	default:
		v, ok := body["campaignId"]
		if !ok || v == nil {
			return nil, http.StatusBadRequest, spec.MsgCampaignIDRequired
		}
		id, ok := tinyInt(body, "campaignId", 0)
		if !ok {
			return nil, http.StatusUnprocessableEntity, "campaignId must be a number"
		}
		return answered(func(acct int) any { return s.stats(acct, id) }), 0, ""
	}
}

// tinyInt reads an integer, from a number or a string of digits; def when
// the field is absent.
func tinyInt(body map[string]any, k string, def int) (int, bool) {
	switch v := body[k].(type) {
	case nil:
		return def, true
	case float64:
		return int(v), v == math.Trunc(v) && math.Abs(v) < 1e9
	case string:
		n, err := strconv.Atoi(v)
		return n, err == nil && len(v) < 10
	}
	return 0, false
}

func (s *tinyService) checkContact(body map[string]any) (tinyAnswer, int, string) {
	email, _ := body["email"].(string)
	phone, _ := body["phoneNo"].(string)
	if email == "" && phone == "" {
		return nil, http.StatusBadRequest, spec.MsgEmailOrPhoneRequired
	}
	invalid := func(field string) (tinyAnswer, int, string) {
		return nil, http.StatusUnprocessableEntity, "Invalid value for " + field
	}
	if email != "" && !strings.Contains(email, "@") {
		return invalid("email")
	}
	if g, ok := body["gender"]; ok && !slices.Contains([]any{"male", "female", "other"}, g) {
		return invalid("gender")
	}
	if d, ok := body["dateOfBirth"].(string); ok && !tinyDate(d) {
		return invalid("dateOfBirth")
	}
	for _, k := range []string{"emailOptStatus", "smsOptStatus"} {
		if f, ok := body[k].(float64); ok && f != 0 && f != 1 {
			return invalid(k)
		}
	}
	for _, k := range []string{"tag", "playerType"} {
		v, ok := body[k]
		if !ok {
			continue
		}
		list, isList := v.([]any)
		if !isList {
			return invalid(k)
		}
		for _, e := range list {
			if _, isString := e.(string); !isString {
				return invalid(k)
			}
		}
	}
	return func(acct int) (any, int, string) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if email != "" && s.emails[acct][strings.ToLower(email)] {
			return nil, http.StatusConflict, "Contact already exists"
		}
		if email != "" {
			s.emails[acct][strings.ToLower(email)] = true
		}
		s.nextID++
		return map[string]any{"status": "success", "contactId": strconv.Itoa(s.nextID), "createdAt": time.Now().UTC().Format(time.RFC3339)}, 0, ""
	}, 0, ""
}

// tinyDate checks the pattern of YYYY-MM-DD only, not that the day exists.
func tinyDate(d string) bool {
	if len(d) != 10 || d[4] != '-' || d[7] != '-' {
		return false
	}
	for i, c := range d {
		if i != 4 && i != 7 && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

func (s *tinyService) page(acct, limit, page int) any {
	cs := s.campaign[acct]
	pages := (len(cs) + limit - 1) / limit
	page = min(page, max(pages, 1))
	from := min((page-1)*limit, len(cs))
	return map[string]any{"pageNo": page, "pageSize": limit, "totalPages": pages, "totalRecords": len(cs),
		"filteredRecords": len(cs), "campaigns": cs[from:min(from+limit, len(cs))]}
}

func (s *tinyService) stats(acct, id int) any {
	for i, c := range s.campaign[acct] {
		if c["Id"] == id {
			return altStats(i, c["campaignChannel"].(string))
		}
	}
	return altStats(0, "")
}

// TestTinyImplementationPasses: tinyService is a correct implementation
// that chooses differently at every silent point; the normative profile
// must pass it, nothing failed or skipped. A run whose proof of §8 could
// not decide (exit 3: the burst took longer than the short test window on
// a loaded machine) is no verdict: it runs again against a new service,
// as the alternative implementations' runs do (startAltRuns).
func TestTinyImplementationPasses(t *testing.T) {
	wantNormativePass(t, false, func(accounts []control.Credentials) http.Handler {
		return newTinyService(accounts, altLimit, altWindow)
	})
}

// wantNormativePass runs the normative profile against a new service of
// newService (over HTTP/2 when http2), until a run decides (exit 3: a
// burst crossed a window on a loaded machine, no verdict, and a new
// service), and wants it passed, nothing failed or skipped.
func wantNormativePass(t *testing.T, http2 bool, newService func([]control.Credentials) http.Handler) {
	t.Helper()
	waitsForWindows(t)
	accounts := altAccounts(t)
	var r altRun
	for attempt := 1; attempt <= altAttempts; attempt++ {
		srv := serveTLS(t, newService(accounts), http2)
		r = runAltOnce(srv.URL+spec.BasePath, writeCert(t, srv), t.TempDir(), accounts, altLimit, altWindow)
		r.attempts = attempt
		if r.err != nil || r.code != exitIncomplete {
			break
		}
	}
	wantPass(t, r)
}
