package probe

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/internal/pace"
	"github.com/partner-v3/conformance-kit/steps/internal/target"
	"github.com/partner-v3/conformance-kit/steps/learn"
)

var acct = control.Credentials{APIKey: "key-1", APISecret: "secret-1", AccountID: "acct-1"}

// fake is a small partner API whose silent-point choices the table sets:
// the zero value is one deployment, each field a way another differs.
type fake struct {
	unknownPathEchoes bool   // the 404's message names the path
	rateHeaders       bool   // X-RateLimit-* on every answer
	idPrefix          string // contactId's prefix before 24 hex digits
	numericIDs        bool   // contactId is 12 digits
	newestFirst       bool   // campaigns by Id descending
	limit422          bool   // a limit above 50 is 422 with a list of problems
	noContentTypeOK   bool   // a body without Content-Type is read as JSON
	bodyFirst         bool   // the body is checked before the credentials
	deleteAllowsAll   bool   // Allow lists every method
	idOffset          int    // added to every campaign Id (other data)
	reasons           bool   // every other campaign has a reason (other data)
	campaigns         int    // how many campaigns the account has (0: 7)
	shuffledNames     bool   // campaign names not in Id order (other data)
	byName            bool   // campaigns by campaignName

	mu    sync.Mutex
	times []time.Time
}

func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.times = append(f.times, time.Now())
	f.mu.Unlock()
	send := func(status int, v any) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		if f.rateHeaders {
			w.Header().Set("X-RateLimit-Limit", "100")
			w.Header().Set("X-RateLimit-Remaining", "50")
		}
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
	fail := func(status int, msg string) { send(status, map[string]string{"error": msg}) }
	op, ok := strings.CutPrefix(r.URL.Path, spec.BasePath+"/")
	if !ok || !slices.Contains(spec.Paths(), op) {
		msg := "Not found"
		if f.unknownPathEchoes {
			msg = "No route for " + r.Method + " " + r.URL.Path
		}
		fail(http.StatusNotFound, msg)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", map[bool]string{true: "GET, POST, PUT, DELETE", false: "POST"}[f.deleteAllowsAll])
		fail(http.StatusMethodNotAllowed, "Method not allowed")
		return
	}
	auth := func() bool {
		if r.Header.Get(spec.HeaderAPIKey) != acct.APIKey || r.Header.Get(spec.HeaderAPISecret) != acct.APISecret {
			fail(http.StatusUnauthorized, spec.MsgInvalidCredentials)
			return false
		}
		if r.Header.Get(spec.HeaderAccountID) != acct.AccountID {
			fail(http.StatusForbidden, spec.MsgUnauthorizedAccount)
			return false
		}
		return true
	}
	if !f.bodyFirst && !auth() {
		return
	}
	ct := r.Header.Get("Content-Type")
	if !strings.HasPrefix(ct, "application/json") && (ct != "" || !f.noContentTypeOK) {
		fail(http.StatusUnsupportedMediaType, "Content-Type must be application/json")
		return
	}
	b, _ := io.ReadAll(r.Body)
	var body map[string]any
	if err := json.Unmarshal(b, &body); err != nil || body == nil {
		fail(http.StatusBadRequest, "Malformed JSON body")
		return
	}
	if f.bodyFirst && !auth() {
		return
	}
	switch op {
	case spec.PathContactAdd:
		if body["email"] == nil && body["phoneNo"] == nil {
			fail(http.StatusBadRequest, spec.MsgEmailOrPhoneRequired)
			return
		}
		id := any(f.idPrefix + "0123456789abcdef01234567")
		if f.numericIDs {
			id = "123456789012"
		}
		send(http.StatusOK, map[string]any{"status": "success", "contactId": id})
	case spec.PathCampaignList:
		limit, lok := body["limit"].(float64)
		page, pok := body["page"].(float64)
		switch {
		case !lok || !pok:
			fail(http.StatusBadRequest, "limit and page are required integers")
			return
		case limit > 50 && f.limit422:
			send(http.StatusUnprocessableEntity, map[string]any{"errors": []map[string]string{{"field": "limit", "problem": "too large"}}})
			return
		case limit > 50 || limit < 1 || page < 1:
			fail(http.StatusBadRequest, "limit must be 1 to 50 and page at least 1")
			return
		}
		ids := f.ids()
		if f.newestFirst {
			slices.Reverse(ids)
		}
		if f.byName {
			slices.SortFunc(ids, func(a, b int) int { return strings.Compare(f.name(a), f.name(b)) })
		}
		from, to := min(int((page-1)*limit), len(ids)), min(int(page*limit), len(ids))
		var cs []map[string]any
		for _, id := range ids[from:to] {
			c := map[string]any{"Id": id, "campaignName": f.name(id), "reason": nil}
			if f.reasons && id%2 == 0 {
				c["reason"] = "paused by the partner"
			}
			cs = append(cs, c)
		}
		send(http.StatusOK, map[string]any{"pageNo": page, "pageSize": limit, "totalPages": (len(ids) + int(limit) - 1) / int(limit),
			"totalRecords": len(ids), "filteredRecords": len(ids), "campaigns": cs})
	case spec.PathCampaignStats:
		id, ok := body["campaignId"].(float64)
		switch {
		case body["campaignId"] == nil:
			fail(http.StatusBadRequest, spec.MsgCampaignIDRequired)
		case !ok:
			fail(http.StatusBadRequest, "campaignId must be an integer")
		case !slices.Contains(f.ids(), int(id)):
			fail(http.StatusNotFound, fmt.Sprintf("Campaign %v not found", id))
		default:
			send(http.StatusOK, map[string]any{"campaignId": id, "emailStat": map[string]int{"Sent": 1}, "smsStat": map[string]int{"Sent": 2}})
		}
	}
}

// ids are the account's campaign Ids.
func (f *fake) ids() []int {
	ids := []int{11, 12, 13, 14, 15, 16, 17}
	for n := len(ids); n < f.campaigns; n++ {
		ids = append(ids, 11+n)
	}
	for i := range ids {
		ids[i] += f.idOffset
	}
	return ids
}

// name is campaign id's campaignName: in Id order, or not.
func (f *fake) name(id int) string {
	if f.shuffledNames {
		return fmt.Sprintf("c%03d", id*37%101)
	}
	return fmt.Sprint("c", id)
}

// maxInWindow is the most requests the fake received within any window.
func (f *fake) maxInWindow(w time.Duration) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	most := 0
	for i, t := range f.times {
		n := 0
		for _, u := range f.times[i:] {
			if u.Sub(t) < w {
				n++
			}
		}
		most = max(most, n)
	}
	return most
}

// serve serves h and returns it as a target whose client the pacer paces
// at limit per window.
func serve(t *testing.T, h http.Handler, limit int, window time.Duration) target.Target {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	base, err := url.Parse(srv.URL + spec.BasePath)
	if err != nil {
		t.Fatal(err)
	}
	p := pace.New(limit, window, io.Discard)
	return target.Target{BaseURL: base, Pacer: p, Primary: acct, EmailDomain: "example.com",
		Client: &http.Client{Transport: &pace.Transport{Base: srv.Client().Transport, Pacer: p, Primary: acct}}}
}

func TestRunFindsWhatAClientSeesDifferently(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		a, b *fake // a nil: fake{}
		// differ are request classes that must differ, each with a word of
		// its difference; every class not listed must agree.
		differ map[string]string
	}{
		{name: "the same deployment twice agrees on every request class", b: &fake{}},
		{name: "a message that echoes the path differs on every unknown path", b: &fake{unknownPathEchoes: true}, differ: map[string]string{
			"http.unknownPath": "message", "another unknown path": "message", "an operation's path with a tail": "message",
			"an operation's path with a trailing slash": "message", "GET on an unknown path": "message",
			"no x-account-id on an unknown path": "message", "an unknown account and an unknown path": "message",
		}},
		{name: "rate-limit headers on every answer differ everywhere", b: &fake{rateHeaders: true}, differ: map[string]string{"*": "rate-limit headers"}},
		{name: "a contactId prefix shows in the id format", b: &fake{idPrefix: "ct_"}, differ: map[string]string{
			"contact.duplicateEmail": "id format", "contact.duplicatePhone": "id format", "a new contact": "id format",
			"contact.validation.gender.value": "id format", "contact.validation.dateOfBirth.format": "id format",
			"contact.validation.dateOfBirth.date": "id format", "contact.validation.optStatus.value": "id format",
			"contact.validation.optStatus.type": "id format", "contact.validation.list.type": "id format",
			"contact.validation.list.item": "id format", "contact.validation.string.type": "id format",
			"contact.validation.country.freeText": "id format", "contact.validation.email.format": "id format",
			"contact.validation.string.empty": "id format", "contact.validation.field.unknown": "id format",
			"contact.validation.list.null": "id format", "contact.validation.email.type": "id format",
			"contact.validation.phoneNo.type":            "id format",
			"contact.validation.optStatus.integralFloat": "id format",
			"a contact with gender in capitals":          "id format", "a contact with month 13": "id format",
			"a contact with opt status -1": "id format", "a contact with opt status 1.0": "id format",
			"a contact with a tag list holding null": "id format", "a contact with email a number": "id format",
			"a contact with two unknown fields": "id format",
		}},
		{name: "newest first shows in the order of pages", b: &fake{newestFirst: true}, differ: map[string]string{
			"campaignList.order": "order of pages", "pages 1 to 3 of 2 campaigns": "order of pages",
		}},
		{name: "other campaigns, their Ids echoed and a reason null or not, are data: every class agrees", b: &fake{idOffset: 1000, reasons: true}},
		{name: "two pages at the largest page where the other side has one are data: every class agrees", b: &fake{campaigns: 60}},
		{name: "pages in Id order whose names are in order too agree with a side sorting by name", b: &fake{byName: true, shuffledNames: true}},
		{name: "by name where the other side lists by Id, names out of Id order, differs in the order of pages", a: &fake{shuffledNames: true}, b: &fake{byName: true, shuffledNames: true},
			differ: map[string]string{"campaignList.order": "order of pages", "pages 1 to 3 of 2 campaigns": "order of pages"}},
		{name: "a framework's 422 with a list of problems differs in status, body and message", b: &fake{limit422: true}, differ: map[string]string{
			"campaignList.limitAboveMax": "status", "limit 51": "status",
		}},
		{name: "a body without Content-Type read as JSON differs only there", b: &fake{noContentTypeOK: true}, differ: map[string]string{
			"Campaign List without a Content-Type": "status", "Add Contact without a Content-Type": "status",
		}},
		{name: "the body checked before the credentials shows where both are wrong", b: &fake{bodyFirst: true}, differ: map[string]string{
			"a wrong secret and malformed JSON": "status", "a wrong secret and no Content-Type": "status",
		}},
		{name: "another Allow header differs on the other methods", b: &fake{deleteAllowsAll: true}, differ: map[string]string{
			"http.otherMethod": "Allow", "PUT on an operation": "Allow", "DELETE on an operation": "Allow", "GET with a wrong secret": "Allow",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := tt.a
			if a == nil {
				a = &fake{}
			}
			rep, err := Run(context.Background(), Env{A: serve(t, a, 1000, time.Minute), B: serve(t, tt.b, 1000, time.Minute)})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := rep.Total, len(Probes()); got != want {
				t.Fatalf("Total=%d, want %d (one per request class)", got, want)
			}
			var wrong []string
			agree := 0
			for _, res := range rep.Results {
				word, want := tt.differ[res.Name]
				if _, all := tt.differ["*"]; all {
					word, want = tt.differ["*"], true
				}
				got := strings.Join(res.Differences, "; ")
				switch {
				case !want && got != "":
					wrong = append(wrong, fmt.Sprintf("%s: differs, want agreement: %s", res.Name, got))
				case want && got == "":
					wrong = append(wrong, fmt.Sprintf("%s: agrees, want a difference in %q\n    A %v\n    B %v", res.Name, word, res.Observations[0], res.Observations[1]))
				case want && !strings.Contains(got, word):
					wrong = append(wrong, fmt.Sprintf("%s: differs in %s, want %q", res.Name, got, word))
				case !want:
					agree++
				}
			}
			if len(wrong) > 0 {
				t.Errorf("%d request classes compared wrongly:\n  %s", len(wrong), strings.Join(wrong, "\n  "))
			}
			if got := rep.Agree; got != agree {
				t.Errorf("Agree=%d, want %d", got, agree)
			}
			if got, want := rep.Agreed(), len(tt.differ) == 0; got != want {
				t.Errorf("Agreed()=%v, want %v", got, want)
			}
			var sends int
			for _, p := range Probes() {
				sends += p.sends()
			}
			for k, s := range rep.Sides {
				if s.Sent != sends {
					t.Errorf("side %c: Sent=%d, want %d", 'A'+k, s.Sent, sends)
				}
			}
		})
	}
}

// TestRunStaysWithinTheBudget: with a budget smaller than the probes, the
// pacer holds them back (§8): no window holds more than the limit on
// either side, and both sides still get every request.
func TestRunStaysWithinTheBudget(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("waits for rate-limit windows")
	}
	const limit, window = 30, time.Second
	a, b := &fake{}, &fake{}
	rep, err := Run(context.Background(), Env{A: serve(t, a, limit, window), B: serve(t, b, limit, window)})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Agreed() {
		t.Errorf("agreement %d/%d between two identical sides", rep.Agree, rep.Total)
	}
	for k, f := range []*fake{a, b} {
		if got := f.maxInWindow(window); got > limit {
			t.Errorf("side %c received %d requests within %s, above the limit of %d", 'A'+k, got, window, limit)
		}
		if got := len(f.times); got != rep.Sides[k].Sent || got <= limit {
			t.Errorf("side %c received %d requests, reported %d; the test needs more than %d", 'A'+k, got, rep.Sides[k].Sent, limit)
		}
	}
}

func TestObserve(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		status  int
		header  map[string]string
		body    string
		shape   []string
		message string
		rate    []string
		ids     map[string]string
		media   string
	}{
		{name: "a flat error body", status: 400, body: `{"error": "Bad limit", "code": 7}`,
			shape: []string{"code:integer", "error:string"}, message: "Bad limit", media: "application/json",
			header: map[string]string{"Content-Type": "application/json; charset=utf-8"}},
		{name: "a nested error names its message by key, not by position", status: 404, body: `{"requestId": "9f3a2c", "error": {"code": "E1", "message": "No route"}}`,
			shape: []string{"error.code:string", "error.message:string", "requestId:string"}, message: "No route", ids: map[string]string{"requestId": "6 hex (lower case)"}},
		{name: "a list of problems is its paths, the first problem's text the message", status: 422, body: `{"detail": [{"loc": ["body", "limit"], "msg": "too big"}]}`,
			shape: []string{"detail[].loc[]:string", "detail[].msg:string"}, message: "too big"},
		{name: "a spec message is found under any key", status: 401, body: `{"x": "1", "why": "Invalid API credentials"}`,
			shape: []string{"why:string", "x:string"}, message: "Invalid API credentials"},
		{name: "a success has no message, and its ids a format", status: 200, body: `{"status": "success", "contactId": "ct_0123456789abcdef01234567"}`,
			shape: []string{"contactId:string", "status:string"}, ids: map[string]string{"contactId": "ct_ + 24 hex (lower case)"}},
		{name: "numeric ids: digits at the top, a listed Id is data", status: 200, body: `{"contactId": 12345678, "campaigns": [{"Id": 5, "reason": null}, {"Id": 6, "reason": "x"}]}`,
			shape: []string{"campaigns[].Id:integer", "campaigns[].reason:null", "campaigns[].reason:string", "contactId:integer"}, ids: map[string]string{"contactId": "8 digits"}},
		{name: "a uuid", status: 200, body: `{"id": "0F8FAD5B-D9CB-469F-A165-70867728950E"}`, shape: []string{"id:string"}, ids: map[string]string{"id": "uuid (upper case)"}},
		{name: "rate-limit headers by name", status: 429, body: `{"error": "Rate limit exceeded. Try again later."}`,
			header: map[string]string{"Retry-After": "3", "RateLimit-Policy": "100;w=60", "X-RateLimit-Remaining": "0", "X-Request-Id": "r"},
			shape:  []string{"error:string"}, message: spec.MsgRateLimit, rate: []string{"Ratelimit-Policy", "Retry-After", "X-Ratelimit-Remaining"}},
		{name: "not JSON", status: 404, body: `404 page not found`, shape: []string{"not JSON"}, media: "text/plain",
			header: map[string]string{"Content-Type": "text/plain; charset=utf-8"}},
		{name: "an empty body", status: 204, body: ``, shape: []string{"empty"}},
		{name: "trailing data is not one JSON value", status: 400, body: `{} {}`, shape: []string{"not JSON"}},
		{name: "empty containers are leaves", status: 200, body: `{"campaigns": [], "meta": {}}`, shape: []string{"campaigns:array", "meta:object"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resp := &http.Response{StatusCode: tt.status, Header: http.Header{}}
			for k, v := range tt.header {
				resp.Header.Set(k, v)
			}
			o := observe(resp, []byte(tt.body), nil, nil)
			if !slices.Equal(o.Shape, tt.shape) {
				t.Errorf("Shape=%q, want %q", o.Shape, tt.shape)
			}
			if o.Message != tt.message {
				t.Errorf("Message=%q, want %q", o.Message, tt.message)
			}
			if !slices.Equal(o.RateHeaders, tt.rate) {
				t.Errorf("RateHeaders=%q, want %q", o.RateHeaders, tt.rate)
			}
			if fmt.Sprint(o.IDs) != fmt.Sprint(tt.ids) && len(o.IDs)+len(tt.ids) > 0 {
				t.Errorf("IDs=%v, want %v", o.IDs, tt.ids)
			}
			if o.MediaType != tt.media {
				t.Errorf("MediaType=%q, want %q", o.MediaType, tt.media)
			}
		})
	}
}

// TestMessageWithTheSidesDataReadsAlike: a message that names the Id the
// request took from the side's data reads as its placeholder, so two
// sides with other campaigns agree on the template.
func TestMessageWithTheSidesDataReadsAlike(t *testing.T) {
	t.Parallel()
	resp := &http.Response{StatusCode: 400, Header: http.Header{}}
	a := observe(resp, []byte(`{"error": "campaignId \"17\" must be an integer (17 is listed)"}`), map[string]string{"17": "{campaignId}"}, nil)
	b := observe(resp, []byte(`{"error": "campaignId \"1017\" must be an integer (1017 is listed)"}`), map[string]string{"1017": "{campaignId}"}, nil)
	if a.Message != b.Message || !strings.Contains(a.Message, "{campaignId}") {
		t.Errorf("messages %q and %q, want one template naming {campaignId}", a.Message, b.Message)
	}
	c := observe(resp, []byte(`{"error": "campaign 170 not found"}`), map[string]string{"17": "{campaignId}"}, nil)
	if c.Message != "campaign 170 not found" {
		t.Errorf("Message=%q: only whole numbers are the side's Id", c.Message)
	}
}

func TestProbesCoverEveryLearnedRequestClass(t *testing.T) {
	t.Parallel()
	names := map[string]bool{}
	learned := 0
	for _, p := range Probes() {
		if names[p.Name] {
			t.Errorf("two probes named %q", p.Name)
		}
		names[p.Name] = true
		if d := p.describe(); len(d) > 300 {
			t.Errorf("%s is described in %d bytes: a report line must stay short", p.Name, len(d))
		}
		if p.Learned {
			learned++
		}
	}
	for _, r := range learn.Requests() {
		if !names[r.Choice] {
			t.Errorf("no probe of the learner's request class %s", r.Choice)
		}
	}
	// The learner's requests, and the smallest body of its body-limit
	// probe, which learn.Requests leaves to the learner's sizes.
	if got, want := learned, len(learn.Requests())+1; got != want {
		t.Errorf("%d probes marked learned, want %d (learn.Requests and http.bodyLimit)", got, want)
	}
	if other := len(names) - learned; other < 30 {
		t.Errorf("%d probes the profile did not learn from, want more", other)
	}
}
