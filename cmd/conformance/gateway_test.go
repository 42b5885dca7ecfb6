package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"mime"
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

// gatewayService is a fourth implementation of the spec for the
// deployment-profile tests (issue 28): an API gateway in front of a small
// service, the way many vendors deploy one. It chooses differently from
// the simulator, altService and tinyService wherever the spec is silent
// and a gateway would:
//
//   - the gateway answers itself, before the service sees anything, in
//     its own body {"message", "code", "traceId"} labelled
//     application/json; charset=utf-8 (every answer is so labelled, the
//     429 too): an unknown path (404, the message quoting the method and
//     the path sent),
//     another method (405 with Allow, the message quoting the method and
//     the path), a body above 512 KiB (413), credentials (401; a missing
//     x-account-id 401 too, a wrong one 403), and its own limiter (429);
//   - it knows its consumer by x-api-key before it routes, and sends the
//     whole IETF draft family, RateLimit-Limit, -Remaining, -Reset and
//     -Policy, on every answer to a key that names an account (its own
//     404, 405, 413, 401 and 403 included, and the service's 400 and
//     404), and Retry-After in seconds on a 429 (§8: headers not shown);
//   - its limiter counts each account's authenticated requests in windows
//     aligned to the clock (§8: 100 per window, the three operations
//     together), before the body is read (a spent budget and a bad body:
//     429);
//   - a request without Content-Type is read as JSON, and no body at all
//     as {} (the missing field's 400); text/plain is refused with 415
//     quoting it (§1 rule 2);
//   - the service: contactIds "cus_" and 16 hex digits; the same email a
//     new contact, the same phone number refused with 409; an opt status
//     "1" read as 1, one tag as a list of one, a country name and an
//     unknown field accepted, an empty string refused; limit above 50 or
//     0 refused, page 0 read as 1, a missing limit 25, a page past the
//     last refused; campaigns newest first; an unknown campaign 404; a
//     campaignId of digits read as the number (§2.1, §4.1-§4.3: not
//     shown).
type gatewayService struct {
	accounts []control.Credentials
	limit    int
	window   time.Duration

	mu sync.Mutex
	// windows holds each account's clock-aligned window: its start and
	// the requests counted in it.
	windows []gatewayWindow
	// phones are each account's phone numbers added.
	phones    []map[string]bool
	campaigns [][]map[string]any
}

type gatewayWindow struct {
	start   time.Time
	counted int
}

// gatewayBodyLimit is the largest body the gateway lets through.
const gatewayBodyLimit = 512 << 10

// gatewayContentType labels every answer of the gateway and its service.
const gatewayContentType = "application/json; charset=utf-8"

func newGatewayService(accounts []control.Credentials, limit int, window time.Duration) *gatewayService {
	s := &gatewayService{accounts: accounts, limit: limit, window: window, windows: make([]gatewayWindow, len(accounts))}
	for n := range accounts {
		s.phones = append(s.phones, map[string]bool{})
		s.campaigns = append(s.campaigns, gatewayCampaigns(n))
	}
	return s
}

// gatewayCampaigns are account acct's campaigns, newest (highest Id)
// first, in the gateway's own vocabulary.
func gatewayCampaigns(acct int) []map[string]any {
	return campaignStyle{
		vocab: []struct{ status, colour, reason string }{
			{"Queued", "#2196F3", ""}, {"Sending", "#FF9800", ""}, {"Sent", "#4CAF50", ""}, {"Halted", "#B71C1C", "Compliance hold"},
		},
		zones: []struct{ name, offset string }{{"CET", "+01:00"}, {"IST", "+05:30"}, {"AEST", "+10:00"}},
		start: time.Date(2026, 1, 12, 9, 30, 0, 0, time.UTC), every: 31 * time.Hour, broadcast: 90 * time.Minute, updated: 2 * time.Hour,
		count: func(acct int) int { return 38 + 9*acct },
		id:    func(acct, i int) int { return 70000 + 1000*acct + 3*i },
		name:  named("Gateway %02d"), campaignType: func(i int) int { return (i / 2) % 2 }, autoResend: func(int) int { return 0 },
		channels: [2]string{"email", "sms"}, list: slices.Reverse[[]map[string]any],
	}.campaigns(acct)
}

// gatewayCodes are the gateway's code of each status.
var gatewayCodes = map[int]string{
	http.StatusBadRequest: "BAD_REQUEST", http.StatusUnauthorized: "UNAUTHORIZED", http.StatusForbidden: "FORBIDDEN",
	http.StatusNotFound: "NOT_FOUND", http.StatusMethodNotAllowed: "METHOD_NOT_ALLOWED", http.StatusConflict: "CONFLICT",
	http.StatusRequestEntityTooLarge: "PAYLOAD_TOO_LARGE", http.StatusUnsupportedMediaType: "UNSUPPORTED_MEDIA_TYPE",
}

func (s *gatewayService) write(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", gatewayContentType)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// fail writes an error but 429 in the gateway's shape.
func (s *gatewayService) fail(w http.ResponseWriter, status int, message string) {
	s.write(w, status, map[string]any{"message": message, "code": gatewayCodes[status], "traceId": newUUID()})
}

func (s *gatewayService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// The gateway knows its consumer by the key before it routes, and
	// its router answers before any credentials are checked: with the
	// consumer's standing when the key names one.
	routeFail := func(status int, message string) {
		if acct := s.consumer(r.Header); acct >= 0 {
			s.mu.Lock()
			s.headers(w.Header(), acct, time.Now())
			s.mu.Unlock()
		}
		s.fail(w, status, message)
	}
	path := r.URL.EscapedPath()
	op, found := strings.CutPrefix(path, spec.BasePath+"/")
	if !found || !slices.Contains(spec.Paths(), op) {
		routeFail(http.StatusNotFound, fmt.Sprintf("no route matches %s %q", r.Method, path))
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		routeFail(http.StatusMethodNotAllowed, fmt.Sprintf("method %s is not allowed on %s", r.Method, path))
		return
	}
	if r.ContentLength > gatewayBodyLimit {
		routeFail(http.StatusRequestEntityTooLarge, "request entity too large")
		return
	}
	acct, status := s.authenticate(w, r.Header)
	if status != 0 {
		msg := spec.MsgInvalidCredentials
		if status == http.StatusForbidden {
			msg = spec.MsgUnauthorizedAccount
		}
		s.fail(w, status, msg)
		return
	}
	if !s.admit(w, acct) {
		s.write(w, http.StatusTooManyRequests, map[string]string{"error": spec.MsgRateLimit})
		return
	}
	// The service behind: the body, read as JSON without a Content-Type.
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != spec.ContentType {
			s.fail(w, http.StatusUnsupportedMediaType, fmt.Sprintf("unsupported media type %s: send application/json", ct))
			return
		}
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, gatewayBodyLimit+1))
	if err != nil || len(raw) > gatewayBodyLimit {
		s.fail(w, http.StatusRequestEntityTooLarge, "request entity too large")
		return
	}
	if len(bytes.TrimSpace(raw)) == 0 && r.Header.Get("Content-Type") == "" {
		raw = []byte("{}") // no Content-Type, no body: an empty object
	}
	var body map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&body); err != nil || body == nil {
		s.fail(w, http.StatusBadRequest, "request body is not valid JSON")
		return
	}
	switch op {
	case spec.PathContactAdd:
		s.addContact(w, acct, body)
	case spec.PathCampaignList:
		s.list(w, acct, body)
	default:
		s.stats(w, acct, body)
	}
}

// consumer is the account x-api-key names, -1 for none.
func (s *gatewayService) consumer(h http.Header) int {
	for n, a := range s.accounts {
		if h.Get(spec.HeaderAPIKey) == a.APIKey {
			return n
		}
	}
	return -1
}

// authenticate finds the account of the three headers of §5; on a
// refusal whose x-api-key names an account it writes that account's
// rate-limit headers (the gateway knows the consumer by its key).
func (s *gatewayService) authenticate(w http.ResponseWriter, h http.Header) (acct, status int) {
	key, secret, id := h.Get(spec.HeaderAPIKey), h.Get(spec.HeaderAPISecret), h.Get(spec.HeaderAccountID)
	for n, a := range s.accounts {
		if key != a.APIKey {
			continue
		}
		switch {
		case secret != a.APISecret || id == "":
			status = http.StatusUnauthorized
		case id != a.AccountID:
			status = http.StatusForbidden
		default:
			return n, 0
		}
		s.mu.Lock()
		s.headers(w.Header(), n, time.Now())
		s.mu.Unlock()
		return 0, status
	}
	return 0, http.StatusUnauthorized
}

// windowOf is acct's window at now, a new one when the clock's window
// moved on. s.mu is held.
func (s *gatewayService) windowOf(acct int, now time.Time) *gatewayWindow {
	win := &s.windows[acct]
	if start := now.Truncate(s.window); !win.start.Equal(start) {
		*win = gatewayWindow{start: start}
	}
	return win
}

// headers writes acct's standing: the IETF draft's four fields. s.mu is
// held.
func (s *gatewayService) headers(h http.Header, acct int, now time.Time) {
	win := s.windowOf(acct, now)
	reset := int(math.Ceil(win.start.Add(s.window).Sub(now).Seconds()))
	h.Set("RateLimit-Limit", strconv.Itoa(s.limit))
	h.Set("RateLimit-Remaining", strconv.Itoa(max(s.limit-win.counted, 0)))
	h.Set("RateLimit-Reset", strconv.Itoa(max(reset, 1)))
	h.Set("RateLimit-Policy", fmt.Sprintf("%d;w=%d", s.limit, int(math.Ceil(s.window.Seconds()))))
}

// admit counts one request in acct's window and writes the headers.
func (s *gatewayService) admit(w http.ResponseWriter, acct int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	win := s.windowOf(acct, now)
	ok := win.counted < s.limit
	if ok {
		win.counted++
	}
	s.headers(w.Header(), acct, now)
	if !ok {
		w.Header().Set("Retry-After", strconv.Itoa(max(int(math.Ceil(win.start.Add(s.window).Sub(now).Seconds())), 1)))
	}
	return ok
}

// gatewayInt reads an integer from a JSON number or a string of digits.
func gatewayInt(v any) (int, bool) {
	switch v := v.(type) {
	case json.Number:
		n, err := strconv.Atoi(v.String())
		return n, err == nil
	case string:
		if v == "" || len(v) > 9 || strings.Trim(v, "0123456789") != "" {
			return 0, false
		}
		n, _ := strconv.Atoi(v)
		return n, true
	}
	return 0, false
}

func (s *gatewayService) addContact(w http.ResponseWriter, acct int, body map[string]any) {
	email, _ := body["email"].(string)
	phone, _ := body["phoneNo"].(string)
	if email == "" && phone == "" {
		s.fail(w, http.StatusBadRequest, spec.MsgEmailOrPhoneRequired)
		return
	}
	if err := gatewayContact(body); err != "" {
		s.fail(w, http.StatusBadRequest, "invalid "+err)
		return
	}
	if phone != "" {
		s.mu.Lock()
		dup := s.phones[acct][phone]
		s.phones[acct][phone] = true
		s.mu.Unlock()
		if dup {
			s.fail(w, http.StatusConflict, "a contact with this phone number exists")
			return
		}
	}
	id := strings.ReplaceAll(newUUID(), "-", "")[:16]
	s.write(w, http.StatusOK, map[string]any{"status": "success", "contactId": "cus_" + id})
}

// gatewayContact names the first field of body the service refuses, ""
// when none.
func gatewayContact(body map[string]any) string {
	for _, k := range []string{"email", "phoneNo", "firstName", "lastName", "addrOne", "addrTwo", "city", "country", "state", "zipCode", "gender", "dateOfBirth"} {
		v, ok := body[k]
		if !ok {
			continue
		}
		str, isString := v.(string)
		if !isString || (str == "" && k != "email" && k != "phoneNo") {
			return k
		}
	}
	if e, ok := body["email"].(string); ok && e != "" && !strings.Contains(e, "@") {
		return "email"
	}
	if g, ok := body["gender"]; ok && !slices.Contains([]any{"male", "female", "other"}, g) {
		return "gender"
	}
	if d, ok := body["dateOfBirth"].(string); ok {
		if _, err := time.Parse(time.DateOnly, d); err != nil {
			return "dateOfBirth"
		}
	}
	for _, k := range []string{"emailOptStatus", "smsOptStatus"} {
		if v, ok := body[k]; ok {
			if n, isInt := gatewayInt(v); !isInt || (n != 0 && n != 1) {
				return k
			}
		}
	}
	for _, k := range []string{"tag", "playerType"} {
		switch v := body[k].(type) {
		case nil, string: // one tag is a list of one
		case []any:
			for _, e := range v {
				if _, isString := e.(string); !isString {
					return k
				}
			}
		default:
			return k
		}
	}
	return ""
}

func (s *gatewayService) list(w http.ResponseWriter, acct int, body map[string]any) {
	limit, page := 25, 1
	if v, ok := body["limit"]; ok {
		n, isNum := v.(json.Number)
		l, err := strconv.Atoi(n.String())
		if !isNum || err != nil {
			s.fail(w, http.StatusBadRequest, "limit must be an integer")
			return
		}
		limit = l
	}
	if v, ok := body["page"]; ok {
		n, isNum := v.(json.Number)
		p, err := strconv.Atoi(n.String())
		if !isNum || err != nil {
			s.fail(w, http.StatusBadRequest, "page must be an integer")
			return
		}
		page = max(p, 1)
	}
	switch {
	case limit > spec.MaxPageSize:
		s.fail(w, http.StatusBadRequest, "limit must not exceed 50")
		return
	case limit < 1:
		s.fail(w, http.StatusBadRequest, "limit must be at least 1")
		return
	}
	cs := s.campaigns[acct]
	pages := (len(cs) + limit - 1) / limit
	if page > max(pages, 1) {
		s.fail(w, http.StatusBadRequest, "page is out of range")
		return
	}
	from := (page - 1) * limit
	s.write(w, http.StatusOK, map[string]any{"pageNo": page, "pageSize": limit, "totalPages": pages, "totalRecords": len(cs),
		"filteredRecords": len(cs), "campaigns": cs[from:min(from+limit, len(cs))]})
}

func (s *gatewayService) stats(w http.ResponseWriter, acct int, body map[string]any) {
	v, ok := body["campaignId"]
	if !ok || v == nil {
		s.fail(w, http.StatusBadRequest, spec.MsgCampaignIDRequired)
		return
	}
	id, ok := gatewayInt(v)
	if !ok {
		s.fail(w, http.StatusBadRequest, "campaignId must be an integer")
		return
	}
	for i, c := range s.campaigns[acct] {
		if c["Id"] == id {
			s.write(w, http.StatusOK, altStats(i, c["campaignChannel"].(string)))
			return
		}
	}
	s.fail(w, http.StatusNotFound, "campaign not found")
}

// TestGatewayImplementationPasses: gatewayService is a correct
// implementation that chooses differently at the silent points; the
// normative profile must pass it, nothing failed or skipped. A run whose
// proof of §8 could not decide (exit 3) runs again against a new service,
// as TestTinyImplementationPasses does.
func TestGatewayImplementationPasses(t *testing.T) {
	wantNormativePass(t, true, func(accounts []control.Credentials) http.Handler {
		return newGatewayService(accounts, altLimit, altWindow)
	})
}

// gatewayProbes are the silent probes of issue 28's classes, for every
// target of TestProfileRoundTrip: messages that quote the request, sent
// on other paths and methods than the learning probes'; the rate-limit
// headers of each class of answer (a 401 and a 403 whose key names the
// account, a 401 whose key names nobody, a 400 after authentication);
// requests without a Content-Type, with a body and without one.
func gatewayProbes() []silentProbe {
	return []silentProbe{
		{name: "another unknown path, its message", path: "campaigns/archive/7", body: `{}`, message: true},
		{name: "GET on an unknown path, its message", method: http.MethodGet, path: "campaigns/7", message: true},
		{name: "DELETE on another operation, its message", method: http.MethodDelete, path: spec.PathContactAdd, message: true},
		{name: "a JSON body sent as text/plain with a charset, its message", path: spec.PathCampaignList, body: `{"limit": 1, "page": 1}`,
			header: map[string]string{"Content-Type": "text/plain; charset=utf-8"}, message: true},
		{name: "a wrong secret and a valid body: a 401's headers", path: spec.PathCampaignList, body: `{"limit": 1, "page": 1}`,
			header: map[string]string{spec.HeaderAPISecret: "not-the-secret"}, message: true},
		{name: "a wrong x-account-id: a 403's headers", path: spec.PathCampaignList, body: `{"limit": 1, "page": 1}`,
			header: map[string]string{spec.HeaderAccountID: "acc_not_this_one"}, message: true},
		{name: "a key that names nobody: a 401 without an account", path: spec.PathCampaignList, body: `{"limit": 1, "page": 1}`,
			header: map[string]string{spec.HeaderAPIKey: "nobody-key", spec.HeaderAPISecret: "nobody-secret"}, message: true},
		{name: "no campaignId: a 400's headers after authentication", path: spec.PathCampaignStats, body: `{}`, message: true},
		{name: "a valid body without Content-Type", path: spec.PathCampaignList, body: `{"limit": 2, "page": 1}`,
			header: map[string]string{"Content-Type": ""}, message: true},
		{name: "no body and no Content-Type", path: spec.PathCampaignStats, header: map[string]string{"Content-Type": ""}, message: true},
	}
}

// bodyMessage is an error body's message as a client reads one: the
// string at "message", "error", "detail" or "title", or at "message"
// inside an "error" object; "" for none.
func bodyMessage(m map[string]json.RawMessage) string {
	for _, k := range []string{"message", "error", "detail", "title"} {
		var s string
		if json.Unmarshal(m[k], &s) == nil && s != "" {
			return s
		}
	}
	var nested map[string]json.RawMessage
	if json.Unmarshal(m["error"], &nested) == nil {
		var s string
		if json.Unmarshal(nested["message"], &s) == nil {
			return s
		}
	}
	return ""
}
