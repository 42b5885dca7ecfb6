package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
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
	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// frameworkService is a fourth implementation of the spec, written for the
// round trip (issue 28, "a framework's own shape") the way a Python web
// framework's defaults answer (FastAPI with pydantic models in strict
// mode), unlike the simulator, altService and tinyService:
//
//   - every validation failure is 422 with a list of problems and no
//     single message field, FastAPI's own shape:
//     {"detail": [{"loc": ["body", "limit"], "msg": "…", "type": "…"}]},
//     one item per field at fault (§4.1, §4.2, §4.3: not shown). Chosen
//     over Problem Details' {"title", "errors": […]}: a framework's 422
//     has no string at its top at all, which is the class issue 28 names,
//     while Problem Details would still offer "title" as the message;
//   - the answers the spec gives a message (§4.1 and §4.3's 400, §5's 401
//     and 403) are HTTPException's {"detail": "<the spec's message>"};
//     unknown paths 404 {"detail": "Not Found"}, other methods 405 with
//     Allow, a Content-Type other than JSON's 415, a body over 1 MiB 413;
//   - a body that is no JSON is 400 with the framework's parse error,
//     "JSON parse error at offset N: unexpected character 'c'" (0-based
//     offset);
//   - strict types: an integral float ("limit": 5.0) and a numeric
//     string are refused as "Input should be a valid integer";
//   - the framework's order: the body is parsed and validated before
//     authentication (a dependency of the route), so a body that is no
//     JSON and a wrong secret answer the parse error, a bad body and wrong
//     credentials the body's refusal; the account is found by its
//     x-account-id before the key is checked against it, so an unknown (or
//     missing) account and a wrong key answer 403 (§5 orders neither);
//   - contactIds of 24 lowercase hex digits (a MongoDB ObjectId), the
//     same email refused 409, the same phone number the same contact;
//   - a sliding window that counts only what it admits; X-RateLimit-Limit
//     and -Remaining on the answers it admitted, none on a 429, whose
//     Retry-After is in seconds;
//   - campaigns newest first, a page past the last empty, an unknown
//     campaign 404, its own vocabulary.
type frameworkService struct {
	accounts []control.Credentials
	limit    int
	window   time.Duration

	mu       sync.Mutex
	admitted [][]time.Time       // by account: when each admitted request came, in the window
	emails   []map[string]bool   // by account
	phones   []map[string]string // by account: phone number → contactId
	campaign [][]map[string]any  // by account, newest first
	byID     []map[int]map[string]any
}

// frameworkBodyLimit is the largest request body frameworkService reads.
const frameworkBodyLimit = 1 << 20

func newFrameworkService(accounts []control.Credentials, limit int, window time.Duration) *frameworkService {
	s := &frameworkService{accounts: accounts, limit: limit, window: window, admitted: make([][]time.Time, len(accounts))}
	for n := range accounts {
		s.emails = append(s.emails, map[string]bool{})
		s.phones = append(s.phones, map[string]string{})
		cs := frameworkCampaigns(n)
		s.campaign = append(s.campaign, cs)
		byID := map[int]map[string]any{}
		for _, c := range cs {
			byID[c["Id"].(int)] = c
		}
		s.byID = append(s.byID, byID)
	}
	return s
}

// frameworkCampaigns are account acct's campaigns, newest (highest Id)
// first, in a vocabulary of their own.
func frameworkCampaigns(acct int) []map[string]any {
	return campaignStyle{
		vocab: []struct{ status, colour, reason string }{
			{"Draft", "#607d8b", ""}, {"Scheduled", "#2196f3", ""}, {"Sent", "#8bc34a", ""}, {"Paused", "#ff9800", "Paused by the partner"},
		},
		zones: []struct{ name, offset string }{{"EST", "-05:00"}, {"CET", "+01:00"}, {"IST", "+05:30"}},
		start: time.Date(2025, 11, 3, 9, 30, 0, 0, time.UTC), every: 31 * time.Hour, broadcast: 2 * time.Hour, updated: 3 * time.Hour,
		count: func(acct int) int { return 38 + 9*acct },
		id:    func(acct, i int) int { return 9100 + 200*acct + 3*i },
		name:  named("Campaign %03d"), campaignType: func(i int) int { return (i / 2) % 2 }, autoResend: func(i int) int { return (i / 3) % 2 },
		channels: [2]string{"email", "sms"}, list: slices.Reverse[[]map[string]any],
	}.campaigns(acct)
}

// problem is one item of a 422's list, FastAPI's.
type problem struct {
	Loc  []any  `json:"loc"`
	Msg  string `json:"msg"`
	Type string `json:"type"`
}

func bodyProblem(field, msg, typ string) problem {
	return problem{Loc: []any{"body", field}, Msg: msg, Type: typ}
}

// frameworkRefusal is an answer other than a 200: its status and body.
type frameworkRefusal struct {
	status int
	body   any
}

func detail(status int, msg string) *frameworkRefusal {
	return &frameworkRefusal{status, map[string]any{"detail": msg}}
}

func (s *frameworkService) writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (s *frameworkService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	op, found := strings.CutPrefix(r.URL.Path, spec.BasePath+"/")
	if !found || !slices.Contains(spec.Paths(), op) {
		s.writeJSON(w, http.StatusNotFound, map[string]any{"detail": "Not Found"})
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		s.writeJSON(w, http.StatusMethodNotAllowed, map[string]any{"detail": "Method Not Allowed"})
		return
	}
	// The route's dependencies in the framework's order: the body, then
	// the account, then the key, then the limit.
	body, refusal := s.readBody(r)
	if refusal == nil {
		refusal = s.validate(op, body)
	}
	if refusal != nil {
		s.writeJSON(w, refusal.status, refusal.body)
		return
	}
	acct, refusal := s.authenticate(r.Header)
	if refusal != nil {
		s.writeJSON(w, refusal.status, refusal.body)
		return
	}
	remaining, retry, ok := s.admit(acct)
	if !ok {
		w.Header().Set("Retry-After", strconv.Itoa(retry))
		s.writeJSON(w, http.StatusTooManyRequests, map[string]string{"error": spec.MsgRateLimit})
		return
	}
	w.Header().Set("X-RateLimit-Limit", strconv.Itoa(s.limit))
	w.Header().Set("X-RateLimit-Remaining", strconv.Itoa(remaining))
	status, v := s.serve(op, acct, body)
	s.writeJSON(w, status, v)
}

// readBody reads the body as one JSON object, as the framework's request
// parsing does.
func (s *frameworkService) readBody(r *http.Request) (map[string]json.RawMessage, *frameworkRefusal) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != spec.ContentType {
		return nil, detail(http.StatusUnsupportedMediaType, "Unsupported Media Type")
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, frameworkBodyLimit+1))
	if err != nil {
		return nil, detail(http.StatusBadRequest, "There was an error parsing the body")
	}
	if len(raw) > frameworkBodyLimit {
		return nil, detail(http.StatusRequestEntityTooLarge, "Request Entity Too Large")
	}
	if msg := frameworkParseError(raw); msg != "" {
		return nil, detail(http.StatusBadRequest, msg)
	}
	var body map[string]json.RawMessage
	if json.Unmarshal(raw, &body) != nil || body == nil {
		return nil, &frameworkRefusal{http.StatusUnprocessableEntity, map[string]any{"detail": []problem{
			{Loc: []any{"body"}, Msg: "Input should be a valid dictionary", Type: "dict_type"}}}}
	}
	return body, nil
}

// frameworkParseError is the framework's message for a body that is no
// JSON, "" for JSON.
func frameworkParseError(raw []byte) string {
	var v any
	err := json.Unmarshal(raw, &v)
	var syn *json.SyntaxError
	if !errors.As(err, &syn) {
		return ""
	}
	if strings.Contains(syn.Error(), "end of JSON input") {
		return fmt.Sprintf("JSON parse error at offset %d: unexpected end of input", len(raw))
	}
	off := int(syn.Offset) - 1
	return fmt.Sprintf("JSON parse error at offset %d: unexpected character '%s'", off, raw[off:off+1])
}

// validate checks the body of op as the operation's model does, every
// problem listed; the spec's own 400s (§4.1, §4.3) come first.
func (s *frameworkService) validate(op string, body map[string]json.RawMessage) *frameworkRefusal {
	var ps []problem
	allowed := map[string][]string{
		spec.PathCampaignList:  {"limit", "page"},
		spec.PathCampaignStats: {"campaignId"},
		spec.PathContactAdd:    contactFieldNames,
	}[op]
	switch op {
	case spec.PathContactAdd:
		if blank(body, "email") && blank(body, "phoneNo") {
			return detail(http.StatusBadRequest, spec.MsgEmailOrPhoneRequired)
		}
		ps = contactProblems(body)
	case spec.PathCampaignList:
		ps = append(ps, intProblems(body, "limit", 1, spec.MaxPageSize)...)
		ps = append(ps, intProblems(body, "page", spec.MinPage, math.MaxInt32)...)
	case spec.PathCampaignStats:
		if isNull(body["campaignId"]) {
			return detail(http.StatusBadRequest, spec.MsgCampaignIDRequired)
		}
		ps = intProblems(body, "campaignId", math.MinInt32, math.MaxInt32)
	}
	keys := make([]string, 0, len(body))
	for k := range body {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !slices.Contains(allowed, k) {
			ps = append(ps, bodyProblem(k, "Extra inputs are not permitted", "extra_forbidden"))
		}
	}
	if len(ps) == 0 {
		return nil
	}
	return &frameworkRefusal{http.StatusUnprocessableEntity, map[string]any{"detail": ps}}
}

var contactFieldNames = []string{"email", "phoneNo", "firstName", "lastName", "addrOne", "addrTwo", "city",
	"country", "state", "zipCode", "gender", "dateOfBirth", "emailOptStatus", "smsOptStatus", "tag", "playerType"}

func isNull(raw json.RawMessage) bool { return len(raw) == 0 || string(raw) == "null" }

func blank(body map[string]json.RawMessage, k string) bool {
	var s string
	return isNull(body[k]) || json.Unmarshal(body[k], &s) == nil && s == ""
}

// strictInt reads an integer written as one: no fraction, no exponent, no
// string (pydantic's strict int).
func strictInt(raw json.RawMessage) (int64, bool) {
	if bytes.ContainsAny(raw, `."eE`) {
		return 0, false
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	return n, err == nil
}

func intProblems(body map[string]json.RawMessage, k string, lo, hi int64) []problem {
	raw := body[k]
	if isNull(raw) {
		return []problem{bodyProblem(k, "Field required", "missing")}
	}
	n, ok := strictInt(raw)
	switch {
	case !ok:
		return []problem{bodyProblem(k, "Input should be a valid integer", "int_type")}
	case n < lo:
		return []problem{bodyProblem(k, fmt.Sprintf("Input should be greater than or equal to %d", lo), "greater_than_equal")}
	case n > hi:
		return []problem{bodyProblem(k, fmt.Sprintf("Input should be less than or equal to %d", hi), "less_than_equal")}
	}
	return nil
}

func contactProblems(body map[string]json.RawMessage) []problem {
	var ps []problem
	str := func(k string) (string, bool) {
		var v string
		if isNull(body[k]) {
			return "", true
		}
		if json.Unmarshal(body[k], &v) != nil {
			ps = append(ps, bodyProblem(k, "Input should be a valid string", "string_type"))
			return "", false
		}
		return v, true
	}
	for _, k := range []string{"firstName", "lastName", "addrOne", "addrTwo", "city", "country", "state", "zipCode"} {
		str(k)
	}
	if v, ok := str("email"); ok && v != "" {
		local, domain, at := strings.Cut(v, "@")
		if !at || local == "" || domain == "" {
			ps = append(ps, bodyProblem("email", "value is not a valid email address", "value_error"))
		}
	}
	str("phoneNo")
	if v, ok := str("gender"); ok && v != "" && !slices.Contains(spec.Genders(), v) {
		ps = append(ps, bodyProblem("gender", "Input should be 'male', 'female' or 'other'", "enum"))
	}
	if v, ok := str("dateOfBirth"); ok && v != "" {
		if _, err := time.Parse(spec.DateLayout, v); err != nil {
			ps = append(ps, bodyProblem("dateOfBirth", "Input should be a valid date", "date_from_datetime_parsing"))
		}
	}
	for _, k := range []string{"emailOptStatus", "smsOptStatus"} {
		if isNull(body[k]) {
			continue
		}
		n, ok := strictInt(body[k])
		switch {
		case !ok:
			ps = append(ps, bodyProblem(k, "Input should be a valid integer", "int_type"))
		case n != 0 && n != 1:
			ps = append(ps, bodyProblem(k, "Input should be 0 or 1", "literal_error"))
		}
	}
	for _, k := range []string{"tag", "playerType"} {
		if isNull(body[k]) {
			continue
		}
		var items []json.RawMessage
		if json.Unmarshal(body[k], &items) != nil {
			ps = append(ps, bodyProblem(k, "Input should be a valid list", "list_type"))
			continue
		}
		for _, it := range items {
			var v string
			if json.Unmarshal(it, &v) != nil {
				ps = append(ps, bodyProblem(k, "Input should be a valid string", "string_type"))
				break
			}
		}
	}
	return ps
}

// authenticate finds the account by x-account-id first, then checks the
// key and secret against it (§5): an unknown account is 403 whatever the
// key; another account's key and secret are 403 too (rule 2).
func (s *frameworkService) authenticate(h http.Header) (int, *frameworkRefusal) {
	key, secret, id := h.Get(spec.HeaderAPIKey), h.Get(spec.HeaderAPISecret), h.Get(spec.HeaderAccountID)
	acct := slices.IndexFunc(s.accounts, func(a control.Credentials) bool { return id != "" && a.AccountID == id })
	if acct < 0 {
		return 0, detail(http.StatusForbidden, spec.MsgUnauthorizedAccount)
	}
	if a := s.accounts[acct]; key == a.APIKey && secret == a.APISecret {
		return acct, nil
	}
	if slices.ContainsFunc(s.accounts, func(a control.Credentials) bool { return key == a.APIKey && secret == a.APISecret }) {
		return 0, detail(http.StatusForbidden, spec.MsgUnauthorizedAccount)
	}
	return 0, detail(http.StatusUnauthorized, spec.MsgInvalidCredentials)
}

// admit counts one request in acct's sliding window; a refused one is not
// counted. It returns what remains, or the seconds until a slot frees.
func (s *frameworkService) admit(acct int) (remaining, retryAfter int, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	kept := s.admitted[acct][:0]
	for _, t := range s.admitted[acct] {
		if now.Sub(t) < s.window {
			kept = append(kept, t)
		}
	}
	s.admitted[acct] = kept
	if len(kept) >= s.limit {
		return 0, max(int(math.Ceil(kept[0].Add(s.window).Sub(now).Seconds())), 1), false
	}
	s.admitted[acct] = append(kept, now)
	return s.limit - len(s.admitted[acct]), 0, true
}

// serve answers an admitted, valid request.
func (s *frameworkService) serve(op string, acct int, body map[string]json.RawMessage) (int, any) {
	switch op {
	case spec.PathCampaignList:
		limit, _ := strictInt(body["limit"])
		page, _ := strictInt(body["page"])
		cs := s.campaign[acct]
		pages := (len(cs) + int(limit) - 1) / int(limit)
		from := min((int(page)-1)*int(limit), len(cs))
		return http.StatusOK, map[string]any{"pageNo": page, "pageSize": limit, "totalPages": pages, "totalRecords": len(cs),
			"filteredRecords": len(cs), "campaigns": cs[from:min(from+int(limit), len(cs))]}
	case spec.PathCampaignStats:
		id, _ := strictInt(body["campaignId"])
		c, ok := s.byID[acct][int(id)]
		if !ok {
			return http.StatusNotFound, map[string]any{"detail": "Campaign not found"}
		}
		return http.StatusOK, altStats(int(id)%97, c["campaignChannel"].(string))
	}
	var email, phone string
	_ = json.Unmarshal(body["email"], &email)
	_ = json.Unmarshal(body["phoneNo"], &phone)
	s.mu.Lock()
	defer s.mu.Unlock()
	if email != "" && s.emails[acct][strings.ToLower(email)] {
		return http.StatusConflict, map[string]any{"detail": "Contact already exists"}
	}
	if id, ok := s.phones[acct][phone]; ok && email == "" {
		return http.StatusOK, map[string]any{"status": spec.StatusSuccess, "contactId": id}
	}
	var b [12]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	if email != "" {
		s.emails[acct][strings.ToLower(email)] = true
	}
	if phone != "" && email == "" {
		s.phones[acct][phone] = id
	}
	return http.StatusOK, map[string]any{"status": spec.StatusSuccess, "contactId": id}
}

// TestFrameworkImplementationPasses: frameworkService is a correct
// implementation in a framework's own shape; the normative profile must
// pass it, nothing failed or skipped (as TestTinyImplementationPasses).
func TestFrameworkImplementationPasses(t *testing.T) {
	wantNormativePass(t, false, func(accounts []control.Credentials) http.Handler {
		return newFrameworkService(accounts, altLimit, altWindow)
	})
}

// frameworkProbes are the silent probes of a framework's own shape (issue
// 28): requests the learner did not send, wrong in other fields and in two
// ways at once, whose answers show whether what was learned was
// generalised as the deployment does.
func frameworkProbes() []silentProbe {
	wrongSecret := map[string]string{spec.HeaderAPISecret: "not-the-secret"}
	return []silentProbe{
		{name: "a body that is no JSON elsewhere", path: spec.PathCampaignList, body: `{"limit": 1,, "page": 1}`},
		{name: "a body cut short", path: spec.PathCampaignStats, body: `{"campaignId": 1`},
		{name: "page as an integral float", path: spec.PathCampaignList, body: `{"limit": 5, "page": 1.0}`},
		{name: "campaignId as an integral float", path: spec.PathCampaignStats, body: `{"campaignId": 987654321.0}`},
		{name: "limit above 50 and page 0 at once", path: spec.PathCampaignList, body: `{"limit": 80, "page": 0}`},
		{name: "page as a string", path: spec.PathCampaignList, body: `{"limit": 5, "page": "2"}`},
		{name: "a body that is no JSON and a wrong secret", path: spec.PathCampaignList, body: `{"limit": 1, "page": ]}`, header: wrongSecret},
		{name: "limit above 50 and a wrong secret", path: spec.PathCampaignList, body: `{"limit": 80, "page": 1}`, header: wrongSecret},
		{name: "an unknown account and a wrong key", path: spec.PathCampaignStats, body: `{"campaignId": 1}`,
			header: map[string]string{spec.HeaderAPIKey: "not-a-key", spec.HeaderAccountID: "no-such-account"}},
		{name: "an unknown account and no campaignId", path: spec.PathCampaignStats, body: `{}`, header: map[string]string{spec.HeaderAccountID: "no-such-account"}},
		{name: "an unknown account and a body that is no JSON", path: spec.PathCampaignList, body: `{"limit": ]}`, header: map[string]string{spec.HeaderAccountID: "no-such-account"}},
		{name: "a body that is no JSON without campaignId", path: spec.PathCampaignStats, body: `{"channel": ]}`},
		{name: "a contact whose id is read", path: spec.PathContactAdd, body: fmt.Sprintf(`{"phoneNo": "+1202555%04d"}`, time.Now().UnixNano()%10000)},
	}
}

// innerShape is what a client reads inside a top-level value: the keys
// and types of an error's list of problems' first item
// ("detail[0].loc:array"), and a contactId's format (its length and
// alphabet: 8 digits are not 12, 24 hex digits are not ct_ and 24).
func innerShape(key string, v json.RawMessage, status int) []string {
	if key == "contactId" {
		var id string
		_ = json.Unmarshal(v, &id)
		return []string{"contactId=" + idShape(id)}
	}
	var items []map[string]json.RawMessage
	if status < 400 || json.Unmarshal(v, &items) != nil || len(items) == 0 {
		return nil
	}
	var out []string
	for k, iv := range items[0] {
		out = append(out, fmt.Sprintf("%s[0].%s:%s", key, k, profile.JSONType(iv)))
	}
	return out
}

// idShape describes an id as a client would check it: its length and
// alphabet, and a prefix of letters and punctuation before its digits.
func idShape(id string) string {
	all := func(ok func(r rune) bool) bool {
		return id != "" && !strings.ContainsFunc(id, func(r rune) bool { return !ok(r) })
	}
	digit := func(r rune) bool { return r >= '0' && r <= '9' }
	hexLower := func(r rune) bool { return digit(r) || r >= 'a' && r <= 'f' }
	switch {
	case all(digit):
		return fmt.Sprintf("%d digits", len(id))
	case all(hexLower):
		return fmt.Sprintf("%d lowercase hex digits", len(id))
	case len(id) == 36 && strings.Count(id, "-") == 4:
		return "uuid"
	}
	cut := strings.LastIndexFunc(id, func(r rune) bool { return !hexLower(r) }) + 1
	return fmt.Sprintf("%q then %d characters", id[:cut], len(id)-cut)
}
