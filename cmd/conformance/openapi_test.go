package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"

	"github.com/partner-v3/conformance-kit/fixtures"
	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/suite"
)

// The OpenAPI document (fixtures/openapi.yaml) against the simulator: every
// answer of a whole conformance run validates against it, and an answer
// that breaks it is caught. The validator is kin-openapi's openapi3filter,
// which reads OpenAPI 3.1 and validates 3.1 documents with JSON Schema
// 2020-12.

// exchange is one request and the answer it drew, as the wire carried them.
type exchange struct {
	method, path string
	reqHeader    http.Header
	reqBody      []byte
	status       int
	header       http.Header
	body         []byte
}

func (x *exchange) String() string {
	return fmt.Sprintf("%s %s -> %d %.200s", x.method, x.path, x.status, x.body)
}

// openAPIDoc loads and validates the document once per test.
func openAPIDoc(tb testing.TB) *openapi3.T {
	tb.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(fixtures.OpenAPI)
	if err != nil {
		tb.Fatalf("load fixtures/openapi.yaml: %v", err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		tb.Fatalf("fixtures/openapi.yaml is not a valid OpenAPI document: %v", err)
	}
	if !doc.IsOpenAPI31OrLater() {
		tb.Fatalf("fixtures/openapi.yaml is OpenAPI %s, want 3.1", doc.OpenAPI)
	}
	return doc
}

// route finds the document's operation for a request to the simulator: its
// path relative to the base address (spec §1) and its method. nil when the
// document has none (another method, a path that is no operation, or a
// path outside the base address such as /openapi.json).
func route(doc *openapi3.T, method, path string) *routers.Route {
	rel, ok := strings.CutPrefix(path, spec.BasePath)
	if !ok {
		return nil
	}
	item := doc.Paths.Value(rel)
	if item == nil {
		return nil
	}
	op := item.GetOperation(method)
	if op == nil {
		return nil
	}
	return &routers.Route{Spec: doc, Path: rel, PathItem: item, Method: method, Operation: op}
}

// headersPresent is the document's security (spec §5) as a validator can
// check it: each of the three headers is sent. Whether they are right is
// the server's to say.
func headersPresent(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	if in.RequestValidationInput.Request.Header.Get(in.SecurityScheme.Name) == "" {
		return fmt.Errorf("header %s missing", in.SecurityScheme.Name)
	}
	return nil
}

// validate checks one exchange against the document. Responses are always
// checked; requests only when the answer was 200, since the suite sends bad
// requests on purpose. routed is false when the document has no operation
// for the request.
func validate(doc *openapi3.T, x *exchange) (routed bool, problems []string) {
	rt := route(doc, x.method, x.path)
	if rt == nil {
		return false, nil
	}
	req, err := http.NewRequest(x.method, "https://simulator.test"+x.path, bytes.NewReader(x.reqBody))
	if err != nil {
		return true, []string{err.Error()}
	}
	req.Header = x.reqHeader.Clone()
	opts := &openapi3filter.Options{AuthenticationFunc: headersPresent, IncludeResponseStatus: true, MultiError: true}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: map[string]string{}, Route: rt, Options: opts}
	if x.status == http.StatusOK {
		if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
			problems = append(problems, "request: "+oneLine(err))
		}
	}
	err = openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in,
		Status:                 x.status,
		Header:                 x.header,
		Body:                   io.NopCloser(bytes.NewReader(x.body)),
		Options:                opts,
	})
	if err != nil {
		problems = append(problems, "response: "+oneLine(err))
	}
	return true, problems
}

func oneLine(err error) string {
	var me openapi3.MultiError
	if errors.As(err, &me) {
		parts := make([]string, len(me))
		for i, e := range me {
			parts[i] = oneLine(e)
		}
		return strings.Join(parts, "; ")
	}
	return strings.Join(strings.Fields(err.Error()), " ")
}

// recordingHandler passes every request to next and keeps the exchange.
type recordingHandler struct {
	next http.Handler
	mu   sync.Mutex
	log  []*exchange
}

func (h *recordingHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	rec := &bodyRecorder{ResponseWriter: w}
	// A deliberately dropped connection (a fault the suite injects)
	// re-panics through here with no answer to check.
	h.next.ServeHTTP(rec, r)
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	x := &exchange{method: r.Method, path: r.URL.Path, reqHeader: r.Header.Clone(), reqBody: body,
		status: rec.status, header: w.Header().Clone(), body: rec.body.Bytes()}
	h.mu.Lock()
	h.log = append(h.log, x)
	h.mu.Unlock()
}

type bodyRecorder struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (r *bodyRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *bodyRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}

func (r *bodyRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// TestOpenAPIDocumentValidatesTheRun runs every normative and simulator
// scenario against a simulator whose partner listener records each
// exchange, then validates each against fixtures/openapi.yaml. Requests the
// document has no operation for (another method, an unknown path) must
// have drawn the simulator's documented 404 or 405 (x-simulator-choices).
func TestOpenAPIDocumentValidatesTheRun(t *testing.T) {
	doc := openAPIDoc(t)
	s := MustOpenSimulator(t)
	rec := &recordingHandler{next: s.Handler()}
	srv := httptest.NewUnstartedServer(rec)
	srv.TLS = s.Cert.TLSConfig()
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)

	dir := t.TempDir()
	args := simulatorArgs(t, s)
	setFlag(args, "--base-url", srv.URL+spec.BasePath)
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), append(args, "--tags", "@normative,@simulator", "--format", "progress", "--report-dir", dir), &stdout, &stderr)
	if code != exitPass {
		t.Fatalf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitPass, stdout.String(), stderr.String())
	}
	if r := readSummary(t, dir); r.Verdict != suite.VerdictPass {
		t.Fatalf("verdict %s, want pass", r.Verdict)
	}

	rec.mu.Lock()
	log := slices.Clone(rec.log)
	rec.mu.Unlock()
	if len(log) < 100 {
		t.Fatalf("only %d exchanges recorded; the run did not go through the recorder", len(log))
	}
	validated, statuses := 0, map[string]int{}
	var failures []string
	for _, x := range log {
		routed, problems := validate(doc, x)
		if !routed {
			if x.status != http.StatusNotFound && x.status != http.StatusMethodNotAllowed {
				failures = append(failures, fmt.Sprintf("%s: no operation in the document, and not the simulator's documented 404 or 405", x))
			}
			continue
		}
		validated++
		statuses[fmt.Sprintf("%s %d", x.path[len(spec.BasePath):], x.status)]++
		for _, p := range problems {
			failures = append(failures, fmt.Sprintf("%s\n    %s", x, p))
		}
	}
	if len(failures) > 0 {
		t.Errorf("%d of %d exchanges do not validate against fixtures/openapi.yaml:\n  %s", len(failures), len(log), strings.Join(failures, "\n  "))
	}
	seen := make([]string, 0, len(statuses))
	for k, n := range statuses {
		seen = append(seen, fmt.Sprintf("%s x%d", k, n))
	}
	sort.Strings(seen)
	t.Logf("%d exchanges, %d against an operation of the document: %s", len(log), validated, strings.Join(seen, ", "))
	// The run must have exercised every documented status the spec names.
	for _, want := range []string{"/contact/add 200", "/contact/add 400", "/campaign/list 200", "/campaign/stats 200",
		"/campaign/stats 400", "/campaign/list 401", "/campaign/list 403", "/campaign/list 429", "/contact/add 500"} {
		if statuses[want] == 0 {
			t.Errorf("the run drew no %q: the check did not see that answer", want)
		}
	}
}

// TestOpenAPIDocumentCatchesBreaches: answers (and 200-answered requests)
// that break the spec are reported invalid, and answers the spec allows but
// the simulator does not give (unlisted fields, another error shape, a
// status the spec does not show) are not. Without the second half a
// document that forbade too much would pass; without the first, one that
// allowed everything.
func TestOpenAPIDocumentCatchesBreaches(t *testing.T) {
	doc := openAPIDoc(t)
	campaign := func(edit func(map[string]any)) map[string]any {
		c := map[string]any{
			"Id": 1001, "campaignName": "Spring sale", "campaignType": 0, "campaignChannel": "email",
			"status": "Sent", "statusColor": "#2E7D32", "active": 1, "scheduledOn": "2025-03-01T09:00:00.000Z",
			"scheduledTimeZone": "CET", "offset": "+01:00", "autoResend": 0, "broadcastOn": "2025-03-01T09:00:00.000Z",
			"broadcast": 1, "createdAt": "2025-02-20T14:12:05.123Z", "updatedAt": "2025-03-01T09:00:01.456Z", "reason": nil,
		}
		if edit != nil {
			edit(c)
		}
		return c
	}
	page := func(edit func(map[string]any)) string {
		return mustJSON(t, map[string]any{"pageNo": 1, "pageSize": 1, "totalPages": 1, "totalRecords": 1,
			"filteredRecords": 1, "campaigns": []any{campaign(edit)}})
	}
	stats := func(edit func(email, sms map[string]any)) string {
		email := map[string]any{"Sent": 3, "Opened": 2, "Delivered": 3, "Hardbounce": 0, "Softbounce": 0, "Failed": 0, "Clicked": 1, "Unsubscribe": 0, "Complained": 0}
		sms := map[string]any{"Sent": 0, "Delivered": 0, "Failed": 0}
		if edit != nil {
			edit(email, sms)
		}
		return mustJSON(t, map[string]any{"emailStat": email, "smsStat": sms})
	}
	const list, stat, add = "/campaign/list", "/campaign/stats", "/contact/add"
	listReq, statReq, addReq := `{"limit":1,"page":1}`, `{"campaignId":1001}`, `{"phoneNo":"+15550100123"}`
	tests := []struct {
		name        string
		op, reqBody string
		status      int
		contentType string
		body        string
		valid       bool
	}{
		{"a faithful campaign page is valid", list, listReq, 200, "", page(nil), true},
		{"a campaign with a field the spec does not list is valid", list, listReq, 200, "", page(func(c map[string]any) { c["segment"] = "vip" }), true},
		{"a campaign with a string reason is valid", list, listReq, 200, "", page(func(c map[string]any) { c["reason"] = "paused by owner" }), true},
		{"a #RGB colour is valid (spec §2.2 fixes no digit count)", list, listReq, 200, "", page(func(c map[string]any) { c["statusColor"] = "#2E7" }), true},
		{"a campaign without Id is invalid", list, listReq, 200, "", page(func(c map[string]any) { delete(c, "Id") }), false},
		{"a campaign without reason is invalid", list, listReq, 200, "", page(func(c map[string]any) { delete(c, "reason") }), false},
		{"a string Id is invalid", list, listReq, 200, "", page(func(c map[string]any) { c["Id"] = "1001" }), false},
		{"a timestamp without milliseconds is invalid", list, listReq, 200, "", page(func(c map[string]any) { c["createdAt"] = "2025-02-20T14:12:05Z" }), false},
		{"a timestamp with an offset instead of Z is invalid", list, listReq, 200, "", page(func(c map[string]any) { c["updatedAt"] = "2025-03-01T09:00:01.456+00:00" }), false},
		{"an offset without a colon is invalid", list, listReq, 200, "", page(func(c map[string]any) { c["offset"] = "+0100" }), false},
		{"a named colour is invalid", list, listReq, 200, "", page(func(c map[string]any) { c["statusColor"] = "green" }), false},
		{"active 2 is invalid", list, listReq, 200, "", page(func(c map[string]any) { c["active"] = 2 }), false},
		{"a channel other than email or sms is invalid", list, listReq, 200, "", page(func(c map[string]any) { c["campaignChannel"] = "push" }), false},
		{"a numeric reason is invalid", list, listReq, 200, "", page(func(c map[string]any) { c["reason"] = 3 }), false},
		{"a page without filteredRecords is invalid", list, listReq, 200, "", `{"pageNo":1,"pageSize":1,"totalPages":0,"totalRecords":0,"campaigns":[]}`, false},
		{"faithful statistics are valid", stat, statReq, 200, "", stats(nil), true},
		{"statistics without Complained are invalid", stat, statReq, 200, "", stats(func(e, _ map[string]any) { delete(e, "Complained") }), false},
		{"a count given as text is invalid", stat, statReq, 200, "", stats(func(_, s map[string]any) { s["Sent"] = "0" }), false},
		{"a negative count is invalid", stat, statReq, 200, "", stats(func(_, s map[string]any) { s["Failed"] = -1 }), false},
		{"a faithful Add Contact answer is valid", add, addReq, 200, "", `{"status":"success","contactId":"ct_1"}`, true},
		{"an Add Contact status other than success is invalid", add, addReq, 200, "", `{"status":"ok","contactId":"ct_1"}`, false},
		{"a numeric contactId is invalid", add, addReq, 200, "", `{"status":"success","contactId":1}`, false},
		{"the exact 429 is valid", list, listReq, 429, "", `{"error":"Rate limit exceeded. Try again later."}`, true},
		{"a 429 with another message is invalid", list, listReq, 429, "", `{"error":"Too many requests"}`, false},
		{"a 429 with a second field is invalid", stat, statReq, 429, "", `{"error":"Rate limit exceeded. Try again later.","retryAfter":3}`, false},
		{"a 429 with the message elsewhere is invalid", add, addReq, 429, "", `{"message":"Rate limit exceeded. Try again later."}`, false},
		{"a 401 in another shape is valid (spec §7: not shown)", list, listReq, 401, "", `{"message":"Invalid API credentials"}`, true},
		{"a 422 for an unknown campaign is valid (spec §4.3: not shown)", stat, statReq, 422, "", `{"detail":"no such campaign"}`, true},
		{"a 503 is valid (not shown)", stat, statReq, 503, "", `{"error":"maintenance"}`, true},
		{"a 302 is invalid", list, listReq, 302, "", `{}`, false},
		{"a 201 is invalid (spec §4.1: success is 200)", add, addReq, 201, "", `{"status":"success","contactId":"ct_1"}`, false},
		{"a body that is not JSON is invalid (spec §1 rule 3)", list, listReq, 500, "text/plain", `Internal server error`, false},
		{"a 200 to limit 51 is invalid (spec §4.2)", list, `{"limit":51,"page":1}`, 200, "", page(nil), false},
		{"a 200 to page 0 is invalid (spec §4.2)", list, `{"limit":1,"page":0}`, 200, "", page(nil), false},
		{"a 200 to a list request without page is invalid", list, `{"limit":1}`, 200, "", page(nil), false},
		{"a 200 to Add Contact with neither email nor phoneNo is invalid (spec §4.1)", add, `{"firstName":"Jane"}`, 200, "", `{"status":"success","contactId":"ct_1"}`, false},
		{"a 200 to Add Contact with email only is valid", add, `{"email":"jane@example.com","tag":["a"]}`, 200, "", `{"status":"success","contactId":"ct_1"}`, true},
		{"a 200 to Add Contact with both email and phoneNo is valid (spec §2.1: at least one)", add, `{"email":"jane@example.com","phoneNo":"+15550100123"}`, 200, "", `{"status":"success","contactId":"ct_1"}`, true},
		{"a 200 to Add Contact with a numeric phoneNo and no email is invalid (spec §2.1)", add, `{"phoneNo":15550100123}`, 200, "", `{"status":"success","contactId":"ct_1"}`, false},
		{"a 200 to Add Contact with gender unknown is invalid (spec §2.1)", add, `{"email":"jane@example.com","gender":"x"}`, 200, "", `{"status":"success","contactId":"ct_1"}`, false},
		{"a 200 to Campaign Stats without campaignId is invalid (spec §4.3)", stat, `{}`, 200, "", stats(nil), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ct := tt.contentType
			if ct == "" {
				ct = "application/json"
			}
			x := &exchange{
				method: http.MethodPost, path: spec.BasePath + tt.op,
				reqHeader: http.Header{"Content-Type": {"application/json"}, "X-Api-Key": {"k"}, "X-Api-Secret": {"s"}, "X-Account-Id": {"a"}},
				reqBody:   []byte(tt.reqBody), status: tt.status, header: http.Header{"Content-Type": {ct}}, body: []byte(tt.body),
			}
			routed, problems := validate(doc, x)
			if !routed {
				t.Fatalf("POST %s found no operation in the document", tt.op)
			}
			if got := len(problems) == 0; got != tt.valid {
				t.Fatalf("valid=%v, want %v; problems: %v", got, tt.valid, problems)
			}
		})
	}
	if rt := route(doc, http.MethodGet, spec.BasePath+list); rt != nil {
		t.Errorf("GET %s found an operation; every operation is POST (spec §1 rule 4)", list)
	}
}

func mustJSON(tb testing.TB, v any) string {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}
