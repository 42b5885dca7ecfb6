package steps

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"mime"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cucumber/godog"
)

// opRE matches the three operation names of spec §4.
const opRE = `(Add Contact|Campaign List|Campaign Stats)`

// InitializeScenario registers every step and the hooks that give each
// scenario its own state and record its result.
func (st *suiteState) InitializeScenario(sc *godog.ScenarioContext) {
	sc.Before(func(ctx context.Context, p *godog.Scenario) (context.Context, error) {
		res := st.results.start(p)
		return context.WithValue(ctx, stateKey{}, st.newScenarioState(p, res)), nil
	})
	sc.StepContext().After(func(ctx context.Context, step *godog.Step, status godog.StepResultStatus, err error) (context.Context, error) {
		if s := stateFrom(ctx); s != nil {
			st.results.step(s.result, step.Text, status, err)
		}
		return ctx, nil
	})

	// Credentials (spec §5).
	sc.Step(`^the client uses the (primary|second) account's credentials$`, clientUsesCredentials)
	sc.Step(`^the "(x-api-key|x-api-secret|x-account-id)" header is (wrong|missing|empty)$`, headerIs)
	sc.Step(`^the "(x-api-key|x-api-secret|x-account-id)" header holds the second account's value$`, headerHoldsSecond)
	sc.Step(`^a second account is configured$`, secondAccountConfigured)
	sc.Step(`^the simulator's control API is available$`, controlAPIAvailable)
	sc.Step(`^the account has at least (\d+) campaigns$`, accountHasAtLeast)

	// Requests.
	sc.Step(`^the client calls `+opRE+` with:$`, clientCallsWith)
	sc.Step(`^the client calls `+opRE+` with a valid request$`, clientCallsValid)
	sc.Step(`^the client calls Campaign List for page (-?\d+) with limit (-?\d+)$`, clientCallsListPage)
	sc.Step(`^the second account calls Campaign List for page (\d+) with limit (\d+)$`, secondCallsListPage)
	sc.Step(`^the client calls Campaign List for the page after the last one with limit (\d+)$`, clientCallsPageAfterLast)
	sc.Step(`^the client calls Campaign Stats for the (first|last) campaign of its list$`, clientCallsStatsFor)
	sc.Step(`^the client calls Campaign Stats for the first campaign of the second account's list$`, clientCallsStatsOfSecond)
	sc.Step(`^the client calls Campaign Stats for a campaign Id that no listed campaign has$`, clientCallsStatsUnknown)
	sc.Step(`^the client sends a (GET|PUT|DELETE|PATCH|HEAD) request to `+opRE+`$`, clientSendsMethod)
	sc.Step(`^the client calls `+opRE+` with content type "([^"]*)" and body:$`, clientCallsWithContentType)
	sc.Step(`^the client calls `+opRE+` with the raw body:$`, clientCallsRaw)
	sc.Step(`^the client calls `+opRE+` with a body of (\d+) KiB$`, clientCallsBigBody)
	sc.Step(`^the client calls the unknown operation "([^"]+)"$`, clientCallsUnknown)
	sc.Step(`^the client reads every page of its campaign list with a page size that gives at least two pages$`, clientReadsEveryPage)
	sc.Step(`^the client reads every page of its campaign list with limit (\d+)$`, clientReadsEveryPageWith)

	// Transport (spec §1, §9).
	sc.Step(`^the base address should use HTTPS$`, baseUsesHTTPS)
	sc.Step(`^the exchange should have used HTTPS$`, exchangeUsedHTTPS)
	sc.Step(`^the base address should end in "([^"]*)"$`, baseEndsIn)

	// Statuses, messages, bodies.
	sc.Step(`^the response status should be (\d+)$`, statusShouldBe)
	sc.Step(`^the response should be (\d+) with the message "([^"]*)"$`, statusWithMessage)
	sc.Step(`^the response should be (\d+) with the message "([^"]*)" or (\d+) with the message "([^"]*)"$`, statusWithMessageOr)
	sc.Step(`^the response should be (\d+) with an "error" field mentioning "([^"]*)"$`, statusWithErrorField)
	sc.Step(`^the response should not be a success$`, notSuccess)
	sc.Step(`^the response should not be a server error$`, notServerError)
	sc.Step(`^the response body should be JSON$`, bodyIsJSON)
	sc.Step(`^the response should be labelled as JSON$`, labelledJSON)
	sc.Step(`^the response header "([^"]+)" should contain "([^"]*)"$`, headerContains)
	sc.Step(`^the response should carry a "Retry-After" header of whole seconds$`, retryAfterSeconds)
	sc.Step(`^the response body should be a JSON object with exactly these fields:$`, bodyHasExactly)
	sc.Step(`^the "([^"]+)" object should have exactly these fields:$`, objectHasExactly)
	sc.Step(`^the response field "([^"]+)" should be "([^"]*)"$`, fieldIsString)
	sc.Step(`^the response field "([^"]+)" should be (-?\d+)$`, fieldIsInt)
	sc.Step(`^the response field "([^"]+)" should be a non-empty string$`, fieldNonEmptyString)
	sc.Step(`^the response field "([^"]+)" should equal the response field "([^"]+)"$`, fieldEqualsField)
	sc.Step(`^both answers should carry the same contactId$`, sameContactID)
	sc.Step(`^the simulator should hold a contact with the scenario's email address$`, simulatorHoldsContact)

	// Campaign List (spec §2.2, §4.2, §8).
	sc.Step(`^"totalPages" should be "totalRecords" divided by the page size, rounded up$`, totalPagesRoundedUp)
	sc.Step(`^the page should hold as many campaigns as the page size and the total allow$`, pageHoldsExpected)
	sc.Step(`^the page should hold at least 1 campaign$`, pageHoldsSome)
	sc.Step(`^the page should hold (\d+) campaigns$`, pageHoldsExactly)
	sc.Step(`^every campaign should have exactly these fields:$`, everyCampaignHas)
	sc.Step(`^every page should report the same totalRecords and totalPages$`, pagesAgree)
	sc.Step(`^every page but the last should be full$`, pagesFull)
	sc.Step(`^every campaign should appear exactly once across the pages$`, campaignsOnce)
	sc.Step(`^the response should be a client error, or a success whose "pageSize" is at most (\d+) with at most (\d+) campaigns$`, clientErrorOrCapped)
	sc.Step(`^the response should be a client error, or a success whose "pageNo" is at least 1$`, clientErrorOrPageAtLeastOne)
	sc.Step(`^the campaign Ids should be in ascending order across the pages$`, idsAscending)
	sc.Step(`^at least one campaign across the pages should be deleted$`, someDeleted)
	sc.Step(`^every campaign's "([^"]+)" should match "([^"]*)"$`, everyCampaignMatches)
	sc.Step(`^every campaign's "createdAt" should not be after its "updatedAt"$`, createdNotAfterUpdated)
	sc.Step(`^the two accounts' pages should share no campaign Id$`, accountsShareNoID)

	// Campaign Stats (spec §2.3).
	sc.Step(`^every statistic should be a count, an integer of 0 or more$`, statisticsAreCounts)
	sc.Step(`^no emailStat or smsStat count should exceed the count it derives from$`, statisticsFunnel)

	// Errors and rate limit (spec §7, §8).
	sc.Step(`^the simulator will answer the next `+opRE+` request with an unexpected failure$`, simulatorWillFail)
	sc.Step(`^the primary account starts with an unused rate-limit budget$`, startsWithUnusedBudget)
	sc.Step(`^the client sends as many requests as the limit allows, alternating Campaign List and Campaign Stats$`, sendsBurst)
	sc.Step(`^all of them should have succeeded$`, burstSucceeded)
	sc.Step(`^the service should refuse it with status 429 and exactly this JSON body:$`, refusedWith429)
	sc.Step(`^the primary account has used up its rate-limit budget$`, usedUpBudget)
	sc.Step(`^a full rate-limit window passes$`, fullWindowPasses)
}

// ---- credentials ----

func clientUsesCredentials(ctx context.Context, which string) error {
	s := stateFrom(ctx)
	if which == "second" {
		if !s.suite.cfg.Second.complete() {
			return skipf("no second account is configured")
		}
		// The scenario's client builds its headers from base.
		s.base = s.suite.cfg.Second
		return nil
	}
	s.base = s.suite.cfg.Primary
	return nil
}

func headerIs(ctx context.Context, header, how string) error {
	s := stateFrom(ctx)
	switch how {
	case "missing":
		s.overrides[header] = nil
	case "empty":
		v := ""
		s.overrides[header] = &v
	case "wrong":
		// Same length and alphabet as the real value, so only its content is
		// wrong.
		cur := credentialHeaders(s.base).Get(header)
		v := "wrong-" + randomHex(max(4, len(cur)/2))
		s.overrides[header] = &v
	}
	return nil
}

func headerHoldsSecond(ctx context.Context, header string) error {
	s := stateFrom(ctx)
	if !s.suite.cfg.Second.complete() {
		return skipf("no second account is configured")
	}
	v := credentialHeaders(s.suite.cfg.Second).Get(header)
	s.overrides[header] = &v
	return nil
}

func secondAccountConfigured(ctx context.Context) error {
	if !stateFrom(ctx).suite.cfg.Second.complete() {
		return skipf("no second account is configured (--second-api-key, --second-api-secret, --second-account-id)")
	}
	return nil
}

func controlAPIAvailable(ctx context.Context) error {
	if stateFrom(ctx).suite.admin == nil {
		return skipf("needs the simulator's control API (--admin-url, --admin-token)")
	}
	return nil
}

func accountHasAtLeast(ctx context.Context, n int64) error {
	s := stateFrom(ctx)
	info, err := s.campaigns(ctx, s.suite.cfg.Primary)
	if err != nil {
		return err
	}
	if info.total < n {
		return skipf("the account has %d campaigns; the scenario needs at least %d", info.total, n)
	}
	return nil
}

// ---- requests ----

func clientCallsWith(ctx context.Context, op string, doc *godog.DocString) error {
	s := stateFrom(ctx)
	return s.call(ctx, op, []byte(s.expand(doc.Content)))
}

// validBody is a request body each operation accepts: a new contact, the
// first page, the statistics of the account's first campaign.
func (s *scenarioState) validBody(ctx context.Context, op string) ([]byte, error) {
	switch op {
	case "Add Contact":
		return []byte(fmt.Sprintf(`{"email": %q, "firstName": "Conformance"}`, s.email)), nil
	case "Campaign List":
		return []byte(`{"limit": 1, "page": 1}`), nil
	}
	id, err := s.firstCampaignID(ctx, s.suite.cfg.Primary)
	if err != nil {
		if !errorsIsSkip(err) {
			return nil, err
		}
		// No campaign: an auth check still holds for any Id; a check that
		// needs a 200 skips (see statusShouldBe).
		s.invented = true
		id = 1
	}
	return []byte(fmt.Sprintf(`{"campaignId": %d}`, id)), nil
}

func clientCallsValid(ctx context.Context, op string) error {
	s := stateFrom(ctx)
	body, err := s.validBody(ctx, op)
	if err != nil {
		return err
	}
	return s.call(ctx, op, body)
}

func clientCallsListPage(ctx context.Context, page, limit int64) error {
	return stateFrom(ctx).call(ctx, "Campaign List", []byte(fmt.Sprintf(`{"limit": %d, "page": %d}`, limit, page)))
}

func secondCallsListPage(ctx context.Context, page, limit int64) error {
	s := stateFrom(ctx)
	if s.second == nil {
		return skipf("no second account is configured")
	}
	x := s.send(ctx, s.second, http.MethodPost, operations["Campaign List"], "application/json", []byte(fmt.Sprintf(`{"limit": %d, "page": %d}`, limit, page)))
	s.last, s.secondLast = x, x
	if x.err != nil {
		return s.failf("Campaign List of the second account got no answer")
	}
	return nil
}

func clientCallsPageAfterLast(ctx context.Context, limit int64) error {
	s := stateFrom(ctx)
	info, err := s.campaigns(ctx, s.suite.cfg.Primary)
	if err != nil {
		return err
	}
	page := int64(math.Ceil(float64(info.total)/float64(limit))) + 1
	return clientCallsListPage(ctx, page, limit)
}

func clientCallsStatsFor(ctx context.Context, which string) error {
	s := stateFrom(ctx)
	id, err := s.firstCampaignID(ctx, s.suite.cfg.Primary)
	if err != nil {
		return err
	}
	if which == "last" {
		id = s.suite.campaignsOf(s.suite.cfg.Primary).lastID
	}
	return s.call(ctx, "Campaign Stats", []byte(fmt.Sprintf(`{"campaignId": %d}`, id)))
}

func clientCallsStatsOfSecond(ctx context.Context) error {
	s := stateFrom(ctx)
	if !s.suite.cfg.Second.complete() {
		return skipf("no second account is configured")
	}
	id, err := s.firstCampaignID(ctx, s.suite.cfg.Second)
	if err != nil {
		return err
	}
	return s.call(ctx, "Campaign Stats", []byte(fmt.Sprintf(`{"campaignId": %d}`, id)))
}

func clientCallsStatsUnknown(ctx context.Context) error {
	s := stateFrom(ctx)
	info, err := s.campaigns(ctx, s.suite.cfg.Primary)
	if err != nil {
		return err
	}
	// Far beyond any listed Id, yet a valid int64 and a float64-exact
	// integer for targets written in JavaScript.
	id := max(info.lastID, 0) + 1_000_000_007
	for _, c := range info.firstPage {
		if v, _ := intOf(c["Id"]); v >= id {
			id = v + 1_000_000_007
		}
	}
	return s.call(ctx, "Campaign Stats", []byte(fmt.Sprintf(`{"campaignId": %d}`, id)))
}

func clientSendsMethod(ctx context.Context, method, op string) error {
	s := stateFrom(ctx)
	var body []byte
	if method != http.MethodGet && method != http.MethodHead {
		body = []byte(`{"limit": 1, "page": 1}`)
	}
	s.last = s.send(ctx, s.e, method, operations[op], "application/json", body)
	if s.last.err != nil {
		return s.failf("%s %s got no answer", method, op)
	}
	return nil
}

func clientCallsWithContentType(ctx context.Context, op, ct string, doc *godog.DocString) error {
	s := stateFrom(ctx)
	s.last = s.send(ctx, s.e, http.MethodPost, operations[op], ct, []byte(s.expand(doc.Content)))
	if s.last.err != nil {
		return s.failf("%s got no answer", op)
	}
	return nil
}

func clientCallsRaw(ctx context.Context, op string, doc *godog.DocString) error {
	s := stateFrom(ctx)
	return s.call(ctx, op, []byte(doc.Content))
}

func clientCallsBigBody(ctx context.Context, op string, kib int) error {
	s := stateFrom(ctx)
	pad := strings.Repeat("x", kib*1024)
	return s.call(ctx, op, []byte(fmt.Sprintf(`{"email": %q, "firstName": %q}`, s.email, pad)))
}

func clientCallsUnknown(ctx context.Context, path string) error {
	s := stateFrom(ctx)
	s.last = s.send(ctx, s.e, http.MethodPost, path, "application/json", []byte(`{}`))
	if s.last.err != nil {
		return s.failf("POST %s got no answer", path)
	}
	return nil
}

// maxPages bounds the pages one scenario reads, so a target with thousands
// of campaigns does not spend the whole budget on one check.
const maxPages = 20

func clientReadsEveryPage(ctx context.Context) error {
	s := stateFrom(ctx)
	info, err := s.campaigns(ctx, s.suite.cfg.Primary)
	if err != nil {
		return err
	}
	if info.total < 2 {
		return skipf("the account has %d campaigns: one page only, nothing to paginate", info.total)
	}
	// About three pages, the last one partial when possible, so that a
	// totalPages rounded down shows.
	limit := min(max((info.total+2)/3, 1), 50)
	if info.total%limit == 0 && limit > 2 {
		limit--
	}
	return s.readPages(ctx, info.total, limit)
}

func clientReadsEveryPageWith(ctx context.Context, limit int64) error {
	s := stateFrom(ctx)
	info, err := s.campaigns(ctx, s.suite.cfg.Primary)
	if err != nil {
		return err
	}
	if info.total == 0 {
		return skipf("the account has no campaigns to check")
	}
	return s.readPages(ctx, info.total, limit)
}

// readPages reads pages 1 to the last (at most maxPages) with limit, and
// keeps them for the checks across pages.
func (s *scenarioState) readPages(ctx context.Context, total, limit int64) error {
	pages := (total + limit - 1) / limit
	pages = min(pages, maxPages)
	for p := int64(1); p <= pages; p++ {
		if err := s.call(ctx, "Campaign List", []byte(fmt.Sprintf(`{"limit": %d, "page": %d}`, limit, p))); err != nil {
			return err
		}
		if s.last.status != http.StatusOK {
			return s.failf("page %d of %d with limit %d: status %d, want 200 (spec §4.2)", p, pages, limit, s.last.status)
		}
		s.pages = append(s.pages, s.last)
	}
	return nil
}

// ---- transport ----

func baseUsesHTTPS(ctx context.Context) error {
	s := stateFrom(ctx)
	if u := s.baseURL(); u.Scheme != "https" {
		return s.failf("the base address %s uses %q: spec §1 rule 1, all traffic uses HTTPS", s.suite.cfg.BaseURL, u.Scheme)
	}
	return nil
}

func exchangeUsedHTTPS(ctx context.Context) error {
	s := stateFrom(ctx)
	if s.suite.cfg.Handler != nil {
		return skipf("in-process run: the requests cross no network, so the transport cannot be checked")
	}
	if s.last == nil || !s.last.tls || !strings.HasPrefix(s.last.url, "https://") {
		return s.failf("the request did not travel over HTTPS (spec §1 rule 1)")
	}
	return nil
}

func baseEndsIn(ctx context.Context, suffix string) error {
	s := stateFrom(ctx)
	if p := strings.TrimSuffix(s.baseURL().Path, "/"); !strings.HasSuffix(p, suffix) {
		return s.failf("the base address %s has the path %q, which does not end in %s (spec §1 base addresses, §9: the version is the path segment /v3)", s.suite.cfg.BaseURL, p, suffix)
	}
	return nil
}

// ---- statuses, messages, bodies ----

func statusShouldBe(ctx context.Context, want int) error {
	s := stateFrom(ctx)
	if s.last == nil {
		return s.failf("no request was sent")
	}
	if s.last.status == want {
		return nil
	}
	if want == http.StatusOK && s.invented {
		return skipf("the account has no campaigns, so no real campaignId could be asked for")
	}
	if s.last.status == http.StatusTooManyRequests && !s.tags["@rate-limit"] {
		return s.failf("status 429, want %d: the suite's pacing met the target's rate limit. The target allows fewer than the %d requests per %s the run assumes (spec §8), or counts requests the suite does not expect", want, s.suite.pacer.limit, s.suite.pacer.window)
	}
	return s.failf("status %d, want %d", s.last.status, want)
}

// mentions reports whether the body carries the message: the spec shows no
// body shape for errors other than 429 (§7), so the suite looks for the text
// in the body, not for a field name.
func mentions(body []byte, msg string) bool {
	if strings.Contains(string(body), msg) {
		return true
	}
	// The text may be JSON-escaped ("\u0027", "\/"): compare decoded strings.
	v, err := decodeJSON(body)
	if err != nil {
		return false
	}
	found := false
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			found = found || strings.Contains(v, msg)
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(v)
	return found
}

func statusWithMessage(ctx context.Context, want int, msg string) error {
	s := stateFrom(ctx)
	if err := statusShouldBe(ctx, want); err != nil {
		return err
	}
	if _, err := s.last.json(); err != nil {
		return s.failf("%v: spec §1 rule 3, every response body is JSON", err)
	}
	if !mentions(s.last.rbody, msg) {
		return s.failf("the body does not carry the message %q", msg)
	}
	return nil
}

func statusWithMessageOr(ctx context.Context, a int, msgA string, b int, msgB string) error {
	s := stateFrom(ctx)
	switch s.last.status {
	case a:
		return statusWithMessage(ctx, a, msgA)
	case b:
		return statusWithMessage(ctx, b, msgB)
	}
	return s.failf("status %d, want %d (%s) or %d (%s)", s.last.status, a, msgA, b, msgB)
}

func statusWithErrorField(ctx context.Context, want int, text string) error {
	s := stateFrom(ctx)
	if err := statusShouldBe(ctx, want); err != nil {
		return err
	}
	m, err := s.last.object()
	if err != nil {
		return s.failf("%v", err)
	}
	msg, ok := m["error"].(string)
	if !ok {
		return s.failf(`the body has no string field "error"`)
	}
	if !strings.Contains(strings.ToLower(msg), strings.ToLower(text)) {
		return s.failf("the error %q does not mention %q", msg, text)
	}
	return nil
}

func notSuccess(ctx context.Context) error {
	s := stateFrom(ctx)
	if s.last.status/100 == 2 {
		return s.failf("status %d: the operation is defined for POST only (spec §1 rule 4, §4), yet %s succeeded", s.last.status, s.last.method)
	}
	return nil
}

func notServerError(ctx context.Context) error {
	s := stateFrom(ctx)
	if s.last.status >= 500 {
		return s.failf("status %d: a client's mistake is answered as a server failure", s.last.status)
	}
	return nil
}

func bodyIsJSON(ctx context.Context) error {
	s := stateFrom(ctx)
	if _, err := s.last.json(); err != nil {
		return s.failf("%v: spec §1 rule 3, every response body is JSON", err)
	}
	return nil
}

// labelledJSON checks the response's media type: application/json or a
// +json type, parameters allowed (spec §1 rule 3, read as: the body is JSON
// and says so).
func labelledJSON(ctx context.Context) error {
	s := stateFrom(ctx)
	ct := s.last.rheader.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		return s.failf("Content-Type is %q, want application/json: every response body is JSON (spec §1 rule 3)", ct)
	}
	return nil
}

func headerContains(ctx context.Context, name, text string) error {
	s := stateFrom(ctx)
	if v := s.last.rheader.Get(name); !strings.Contains(v, text) {
		return s.failf("header %s is %q, want it to contain %q", name, v, text)
	}
	return nil
}

func retryAfterSeconds(ctx context.Context) error {
	s := stateFrom(ctx)
	v := s.last.rheader.Get("Retry-After")
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return s.failf("Retry-After is %q, want a whole number of seconds", v)
	}
	return nil
}

// fieldRow is one row of a "field | type | format" table.
type fieldRow struct{ field, typ, format string }

func tableRows(t *godog.Table) ([]fieldRow, error) {
	if t == nil || len(t.Rows) < 2 {
		return nil, fmt.Errorf("the step needs a table with a header row and a row per field")
	}
	var rows []fieldRow
	for _, r := range t.Rows[1:] {
		var fr fieldRow
		for i, c := range r.Cells {
			switch strings.TrimSpace(t.Rows[0].Cells[i].Value) {
			case "field":
				fr.field = c.Value
			case "type":
				fr.typ = c.Value
			case "format":
				fr.format = c.Value
			}
		}
		rows = append(rows, fr)
	}
	return rows, nil
}

// checkObject checks that obj has exactly the table's fields, each of its
// type and format, and returns every problem found.
func checkObject(obj map[string]any, rows []fieldRow) []string {
	var problems []string
	want := make(map[string]bool)
	for _, r := range rows {
		want[r.field] = true
		v, ok := obj[r.field]
		if !ok {
			problems = append(problems, fmt.Sprintf("field %q is missing", r.field))
			continue
		}
		if p := checkType(v, r.typ); p != "" {
			problems = append(problems, fmt.Sprintf("field %q: %s", r.field, p))
			continue
		}
		if p := checkFormat(v, r.format); p != "" {
			problems = append(problems, fmt.Sprintf("field %q: %s", r.field, p))
		}
	}
	var extra []string
	for k := range obj {
		if !want[k] {
			extra = append(extra, k)
		}
	}
	slices.Sort(extra)
	for _, k := range extra {
		problems = append(problems, fmt.Sprintf("field %q is not in the spec", k))
	}
	return problems
}

func checkType(v any, typ string) string {
	got := kindOf(v)
	switch typ {
	case "null or string":
		if got == "null" || got == "string" {
			return ""
		}
	case got:
		return ""
	}
	return fmt.Sprintf("is %s, want %s", got, typ)
}

var (
	timestampRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`)
	offsetRE    = regexp.MustCompile(`^[+-]\d{2}:[0-5]\d$`)
	colourRE    = regexp.MustCompile(`^#(?:[0-9A-Fa-f]{3}|[0-9A-Fa-f]{4}|[0-9A-Fa-f]{6}|[0-9A-Fa-f]{8})$`)
)

// checkFormat checks the "format" column: the spec §2.2 formats.
func checkFormat(v any, format string) string {
	switch format {
	case "":
		return ""
	case "timestamp":
		s, _ := v.(string)
		if !timestampRE.MatchString(s) {
			return fmt.Sprintf("%q is not an ISO 8601 UTC timestamp with milliseconds (YYYY-MM-DDTHH:MM:SS.mmmZ)", s)
		}
		if _, err := time.Parse("2006-01-02T15:04:05.000Z", s); err != nil {
			return fmt.Sprintf("%q is not a real date and time", s)
		}
	case "utc offset":
		s, _ := v.(string)
		if !offsetRE.MatchString(s) {
			return fmt.Sprintf("%q is not a UTC offset of the form +HH:MM or -HH:MM", s)
		}
	case "hex colour":
		s, _ := v.(string)
		if !colourRE.MatchString(s) {
			return fmt.Sprintf("%q is not a hexadecimal colour with a leading #", s)
		}
	case "0 or 1":
		if i, _ := intOf(v); i != 0 && i != 1 {
			return fmt.Sprintf("%v is neither 0 nor 1", v)
		}
	case "email or sms":
		if s, _ := v.(string); s != "email" && s != "sms" {
			return fmt.Sprintf("%q is neither email nor sms", s)
		}
	default:
		return fmt.Sprintf("unknown format %q in the scenario", format)
	}
	return ""
}

func bodyHasExactly(ctx context.Context, t *godog.Table) error {
	s := stateFrom(ctx)
	rows, err := tableRows(t)
	if err != nil {
		return err
	}
	m, err := s.last.object()
	if err != nil {
		return s.failf("%v", err)
	}
	if p := checkObject(m, rows); len(p) > 0 {
		return s.failf("the body does not have exactly the spec's fields:\n  %s", strings.Join(p, "\n  "))
	}
	return nil
}

func objectHasExactly(ctx context.Context, name string, t *godog.Table) error {
	s := stateFrom(ctx)
	rows, err := tableRows(t)
	if err != nil {
		return err
	}
	m, err := s.last.object()
	if err != nil {
		return s.failf("%v", err)
	}
	o, ok := m[name].(map[string]any)
	if !ok {
		return s.failf("%q is %s, want an object", name, kindOf(m[name]))
	}
	if p := checkObject(o, rows); len(p) > 0 {
		return s.failf("%q does not have exactly the spec's keys:\n  %s", name, strings.Join(p, "\n  "))
	}
	return nil
}

// field returns a top-level field of the last JSON object answer.
func (s *scenarioState) field(name string) (any, error) {
	m, err := s.last.object()
	if err != nil {
		return nil, s.failf("%v", err)
	}
	v, ok := m[name]
	if !ok {
		return nil, s.failf("the body has no field %q", name)
	}
	return v, nil
}

func fieldIsString(ctx context.Context, name, want string) error {
	s := stateFrom(ctx)
	v, err := s.field(name)
	if err != nil {
		return err
	}
	if got, ok := v.(string); !ok || got != want {
		return s.failf("%q is %v, want the string %q", name, jsonText(v), want)
	}
	return nil
}

func fieldIsInt(ctx context.Context, name string, want int64) error {
	s := stateFrom(ctx)
	v, err := s.field(name)
	if err != nil {
		return err
	}
	if got, ok := intOf(v); !ok || got != want {
		return s.failf("%q is %v, want the integer %d", name, jsonText(v), want)
	}
	return nil
}

func fieldNonEmptyString(ctx context.Context, name string) error {
	s := stateFrom(ctx)
	v, err := s.field(name)
	if err != nil {
		return err
	}
	if got, ok := v.(string); !ok || got == "" {
		return s.failf("%q is %v, want a non-empty string", name, jsonText(v))
	}
	return nil
}

func fieldEqualsField(ctx context.Context, a, b string) error {
	s := stateFrom(ctx)
	va, err := s.field(a)
	if err != nil {
		return err
	}
	vb, err := s.field(b)
	if err != nil {
		return err
	}
	if !reflect.DeepEqual(va, vb) {
		return s.failf("%q is %v but %q is %v", a, jsonText(va), b, jsonText(vb))
	}
	return nil
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func sameContactID(ctx context.Context) error {
	s := stateFrom(ctx)
	if len(s.contactIDs) != 2 {
		return s.failf("%d of the two Add Contact answers carried a contactId", len(s.contactIDs))
	}
	if s.contactIDs[0] != s.contactIDs[1] {
		return s.failf("the contactIds differ: %q then %q", s.contactIDs[0], s.contactIDs[1])
	}
	return nil
}

func simulatorHoldsContact(ctx context.Context) error {
	s := stateFrom(ctx)
	if s.suite.admin == nil {
		return skipf("needs the simulator's control API")
	}
	cs, err := s.suite.admin.contacts(ctx, s.suite.cfg.Primary.AccountID)
	if err != nil {
		return fmt.Errorf("list contacts through the control API: %w", err)
	}
	for _, c := range cs {
		if e, _ := c["email"].(string); strings.EqualFold(e, s.email) {
			return nil
		}
	}
	return s.failf("the simulator holds %d contacts for the account, none with the email %s", len(cs), s.email)
}

// ---- campaign list ----

// page returns the last answer's envelope numbers and campaigns, checked
// for type.
type pageView struct {
	pageNo, pageSize, totalPages, totalRecords int64
	campaigns                                  []any
}

func (s *scenarioState) pageOf(x *exchange) (*pageView, error) {
	if x.status != http.StatusOK {
		return nil, s.failOn(x, "status %d, want 200", x.status)
	}
	m, err := x.object()
	if err != nil {
		return nil, s.failOn(x, "%v", err)
	}
	var p pageView
	for name, dst := range map[string]*int64{"pageNo": &p.pageNo, "pageSize": &p.pageSize, "totalPages": &p.totalPages, "totalRecords": &p.totalRecords} {
		v, ok := intOf(m[name])
		if !ok {
			return nil, s.failOn(x, "%q is %s, want an integer (spec §4.2)", name, kindOf(m[name]))
		}
		*dst = v
	}
	cs, ok := m["campaigns"].([]any)
	if !ok {
		return nil, s.failOn(x, `"campaigns" is %s, want an array (spec §4.2)`, kindOf(m["campaigns"]))
	}
	p.campaigns = cs
	return &p, nil
}

// requested returns the limit and page the last Campaign List asked for.
func (x *exchange) requested() (limit, page int64) {
	var req struct{ Limit, Page int64 }
	_ = json.Unmarshal(x.body, &req)
	return req.Limit, req.Page
}

func totalPagesRoundedUp(ctx context.Context) error {
	s := stateFrom(ctx)
	p, err := s.pageOf(s.last)
	if err != nil {
		return err
	}
	limit, _ := s.last.requested()
	want := (p.totalRecords + limit - 1) / limit
	if p.totalPages != want {
		return s.failf("totalPages is %d; %d records at %d per page make %d pages", p.totalPages, p.totalRecords, limit, want)
	}
	return nil
}

func pageHoldsExpected(ctx context.Context) error {
	s := stateFrom(ctx)
	p, err := s.pageOf(s.last)
	if err != nil {
		return err
	}
	limit, page := s.last.requested()
	want := min(max(p.totalRecords-(page-1)*limit, 0), limit)
	if int64(len(p.campaigns)) != want {
		return s.failf("page %d with limit %d holds %d campaigns; with %d records in all it should hold %d", page, limit, len(p.campaigns), p.totalRecords, want)
	}
	return nil
}

func pageHoldsSome(ctx context.Context) error {
	s := stateFrom(ctx)
	p, err := s.pageOf(s.last)
	if err != nil {
		return err
	}
	if len(p.campaigns) == 0 {
		if p.totalRecords == 0 {
			return skipf("the account has no campaigns to check")
		}
		return s.failf("the page is empty although totalRecords is %d", p.totalRecords)
	}
	return nil
}

func pageHoldsExactly(ctx context.Context, n int) error {
	s := stateFrom(ctx)
	p, err := s.pageOf(s.last)
	if err != nil {
		return err
	}
	if len(p.campaigns) != n {
		return s.failf("the page holds %d campaigns, want %d", len(p.campaigns), n)
	}
	return nil
}

func everyCampaignHas(ctx context.Context, t *godog.Table) error {
	s := stateFrom(ctx)
	rows, err := tableRows(t)
	if err != nil {
		return err
	}
	xs := s.pages
	if len(xs) == 0 {
		xs = []*exchange{s.last}
	}
	var problems []string
	for n, x := range xs {
		p, err := s.pageOf(x)
		if err != nil {
			return err
		}
		for i, c := range p.campaigns {
			o, ok := c.(map[string]any)
			if !ok {
				problems = append(problems, fmt.Sprintf("page %d, campaign %d is %s, not an object", n+1, i+1, kindOf(c)))
				continue
			}
			for _, pr := range checkObject(o, rows) {
				problems = append(problems, fmt.Sprintf("page %d, campaign %d (Id %v): %s", n+1, i+1, jsonText(o["Id"]), pr))
			}
		}
	}
	if len(problems) > 0 {
		if len(problems) > 20 {
			problems = append(problems[:20], fmt.Sprintf("… and %d more", len(problems)-20))
		}
		return s.failf("campaigns break the spec's record:\n  %s", strings.Join(problems, "\n  "))
	}
	return nil
}

func (s *scenarioState) pageViews() ([]*pageView, error) {
	var out []*pageView
	for _, x := range s.pages {
		p, err := s.pageOf(x)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

func pagesAgree(ctx context.Context) error {
	s := stateFrom(ctx)
	ps, err := s.pageViews()
	if err != nil {
		return err
	}
	for i, p := range ps {
		if p.totalRecords != ps[0].totalRecords || p.totalPages != ps[0].totalPages {
			return s.failOn(s.pages[i], "page %d reports %d records on %d pages; page 1 reported %d on %d", i+1, p.totalRecords, p.totalPages, ps[0].totalRecords, ps[0].totalPages)
		}
		limit, _ := s.pages[i].requested()
		if want := (p.totalRecords + limit - 1) / limit; p.totalPages != want {
			return s.failOn(s.pages[i], "totalPages is %d; %d records at %d per page make %d pages (spec §4.2)", p.totalPages, p.totalRecords, limit, want)
		}
		if p.pageNo != int64(i+1) {
			return s.failOn(s.pages[i], "page %d reports pageNo %d", i+1, p.pageNo)
		}
	}
	return nil
}

func pagesFull(ctx context.Context) error {
	s := stateFrom(ctx)
	ps, err := s.pageViews()
	if err != nil {
		return err
	}
	for i, p := range ps {
		limit, page := s.pages[i].requested()
		want := min(max(p.totalRecords-(page-1)*limit, 0), limit)
		if int64(len(p.campaigns)) != want {
			return s.failOn(s.pages[i], "page %d with limit %d holds %d campaigns, want %d of %d records", page, limit, len(p.campaigns), want, p.totalRecords)
		}
	}
	return nil
}

func campaignsOnce(ctx context.Context) error {
	s := stateFrom(ctx)
	ps, err := s.pageViews()
	if err != nil {
		return err
	}
	seen := make(map[int64]int)
	n := 0
	for i, p := range ps {
		for _, c := range p.campaigns {
			o, _ := c.(map[string]any)
			id, ok := intOf(o["Id"])
			if !ok {
				return s.failOn(s.pages[i], "a campaign on page %d has no integer Id", i+1)
			}
			if prev, dup := seen[id]; dup {
				return s.failOn(s.pages[i], "campaign %d appears on page %d and again on page %d: pages overlap", id, prev, i+1)
			}
			seen[id] = i + 1
			n++
		}
	}
	if ps[0].totalPages <= maxPages && int64(n) != ps[0].totalRecords {
		return s.failOn(s.pages[len(s.pages)-1], "the %d pages hold %d distinct campaigns; totalRecords is %d", len(ps), n, ps[0].totalRecords)
	}
	return nil
}

func clientErrorOrCapped(ctx context.Context, maxSize, maxCampaigns int64) error {
	s := stateFrom(ctx)
	if s.last.status/100 == 4 && s.last.status != http.StatusTooManyRequests {
		return nil
	}
	if s.last.status != http.StatusOK {
		return s.failf("status %d, want a client error (4xx) or 200", s.last.status)
	}
	p, err := s.pageOf(s.last)
	if err != nil {
		return err
	}
	if p.pageSize > maxSize || int64(len(p.campaigns)) > maxCampaigns {
		return s.failf("the page reports pageSize %d and holds %d campaigns; the maximum page size is %d (spec §4.2, §8)", p.pageSize, len(p.campaigns), maxSize)
	}
	return nil
}

func clientErrorOrPageAtLeastOne(ctx context.Context) error {
	s := stateFrom(ctx)
	if s.last.status/100 == 4 && s.last.status != http.StatusTooManyRequests {
		return nil
	}
	if s.last.status != http.StatusOK {
		return s.failf("status %d, want a client error (4xx) or 200", s.last.status)
	}
	p, err := s.pageOf(s.last)
	if err != nil {
		return err
	}
	if p.pageNo < 1 {
		return s.failf("the answer reports pageNo %d; page numbers start at 1 (spec §4.2, §8)", p.pageNo)
	}
	return nil
}

func idsAscending(ctx context.Context) error {
	s := stateFrom(ctx)
	ps, err := s.pageViews()
	if err != nil {
		return err
	}
	prev := int64(math.MinInt64)
	for i, p := range ps {
		for _, c := range p.campaigns {
			o, _ := c.(map[string]any)
			id, _ := intOf(o["Id"])
			if id <= prev {
				return s.failOn(s.pages[i], "campaign %d follows campaign %d: not in ascending Id order", id, prev)
			}
			prev = id
		}
	}
	return nil
}

func someDeleted(ctx context.Context) error {
	s := stateFrom(ctx)
	ps, err := s.pageViews()
	if err != nil {
		return err
	}
	for _, p := range ps {
		for _, c := range p.campaigns {
			o, _ := c.(map[string]any)
			if a, ok := intOf(o["active"]); ok && a == 0 {
				return nil
			}
		}
	}
	return s.failf("no listed campaign has active 0: deleted campaigns are not listed")
}

func everyCampaignMatches(ctx context.Context, field, pattern string) error {
	s := stateFrom(ctx)
	re, err := regexp.Compile(pattern)
	if err != nil {
		return fmt.Errorf("scenario pattern %q: %w", pattern, err)
	}
	p, err := s.pageOf(s.last)
	if err != nil {
		return err
	}
	for _, c := range p.campaigns {
		o, _ := c.(map[string]any)
		if v, _ := o[field].(string); !re.MatchString(v) {
			return s.failf("campaign %v: %s %q does not match %s", jsonText(o["Id"]), field, v, pattern)
		}
	}
	return nil
}

func createdNotAfterUpdated(ctx context.Context) error {
	s := stateFrom(ctx)
	p, err := s.pageOf(s.last)
	if err != nil {
		return err
	}
	for _, c := range p.campaigns {
		o, _ := c.(map[string]any)
		cs, _ := o["createdAt"].(string)
		us, _ := o["updatedAt"].(string)
		ct, err1 := time.Parse(time.RFC3339Nano, cs)
		ut, err2 := time.Parse(time.RFC3339Nano, us)
		if err1 != nil || err2 != nil || ct.After(ut) {
			return s.failf("campaign %v: createdAt %q, updatedAt %q", jsonText(o["Id"]), cs, us)
		}
	}
	return nil
}

func accountsShareNoID(ctx context.Context) error {
	s := stateFrom(ctx)
	mine := s.ownLast
	if mine == nil || s.secondLast == nil {
		return s.failf("the scenario needs both accounts' pages")
	}
	a, err := s.pageOf(mine)
	if err != nil {
		return err
	}
	b, err := s.pageOf(s.secondLast)
	if err != nil {
		return err
	}
	ids := make(map[int64]bool)
	for _, c := range a.campaigns {
		o, _ := c.(map[string]any)
		id, _ := intOf(o["Id"])
		ids[id] = true
	}
	for _, c := range b.campaigns {
		o, _ := c.(map[string]any)
		if id, _ := intOf(o["Id"]); ids[id] {
			return s.failOn(s.secondLast, "campaign %d is listed for both accounts", id)
		}
	}
	return nil
}

// ---- campaign stats ----

func (s *scenarioState) statObjects() (map[string]map[string]any, error) {
	m, err := s.last.object()
	if err != nil {
		return nil, s.failf("%v", err)
	}
	out := make(map[string]map[string]any)
	for _, k := range []string{"emailStat", "smsStat"} {
		o, ok := m[k].(map[string]any)
		if !ok {
			return nil, s.failf("%q is %s, want an object (spec §2.3)", k, kindOf(m[k]))
		}
		out[k] = o
	}
	return out, nil
}

func statisticsAreCounts(ctx context.Context) error {
	s := stateFrom(ctx)
	objs, err := s.statObjects()
	if err != nil {
		return err
	}
	for name, o := range objs {
		for k, v := range o {
			if i, ok := intOf(v); !ok || i < 0 {
				return s.failf("%s.%s is %s; counts are integers of 0 or more (spec §2.3)", name, k, jsonText(v))
			}
		}
	}
	return nil
}

func statisticsFunnel(ctx context.Context) error {
	s := stateFrom(ctx)
	objs, err := s.statObjects()
	if err != nil {
		return err
	}
	n := func(o map[string]any, k string) int64 { v, _ := intOf(o[k]); return v }
	e, m := objs["emailStat"], objs["smsStat"]
	checks := []struct {
		ok   bool
		what string
	}{
		{n(e, "Delivered")+n(e, "Hardbounce")+n(e, "Softbounce")+n(e, "Failed") <= n(e, "Sent"), "emailStat Delivered+Hardbounce+Softbounce+Failed <= Sent"},
		{n(e, "Opened") <= n(e, "Delivered"), "emailStat Opened <= Delivered"},
		{n(e, "Clicked") <= n(e, "Opened"), "emailStat Clicked <= Opened"},
		{n(e, "Unsubscribe") <= n(e, "Delivered") && n(e, "Complained") <= n(e, "Delivered"), "emailStat Unsubscribe, Complained <= Delivered"},
		{n(m, "Delivered")+n(m, "Failed") <= n(m, "Sent"), "smsStat Delivered+Failed <= Sent"},
	}
	for _, c := range checks {
		if !c.ok {
			return s.failf("incoherent statistics: want %s", c.what)
		}
	}
	return nil
}

// ---- errors and rate limit ----

func simulatorWillFail(ctx context.Context, op string) error {
	s := stateFrom(ctx)
	if s.suite.admin == nil {
		return skipf("a 500 cannot be forced on a target without the simulator's control API (--admin-url, --admin-token)")
	}
	// Read what the valid request needs first, so the fault hits the
	// scenario's own request.
	if op == "Campaign Stats" {
		if _, err := s.validBody(ctx, op); err != nil {
			return err
		}
	}
	if err := s.suite.admin.fail(ctx, operations[op], 1); err != nil {
		return fmt.Errorf("inject a fault through the control API: %w", err)
	}
	return nil
}

func startsWithUnusedBudget(ctx context.Context) error {
	s := stateFrom(ctx)
	// The burst alternates with Campaign Stats: learn a campaignId first.
	if _, err := s.firstCampaignID(ctx, s.suite.cfg.Primary); err != nil {
		return err
	}
	id := s.suite.cfg.Primary.AccountID
	if reset, err := s.resetBudget(ctx, id); reset || err != nil {
		return err
	}
	return s.suite.pacer.waitFresh(ctx, id, s.suite.pacer.limit+3)
}

// resetBudget empties the account's rate counter through the simulator's
// control API, when the run has one, and reports whether it did.
func (s *scenarioState) resetBudget(ctx context.Context, accountID string) (bool, error) {
	if s.suite.admin == nil {
		return false, nil
	}
	if err := s.suite.admin.resetRate(ctx, accountID); err != nil {
		return false, fmt.Errorf("reset the rate counter through the control API: %w", err)
	}
	s.suite.pacer.forget(accountID)
	return true, nil
}

func sendsBurst(ctx context.Context) error {
	s := stateFrom(ctx)
	id, err := s.firstCampaignID(ctx, s.suite.cfg.Primary)
	if err != nil {
		return err
	}
	n := s.suite.pacer.limit
	s.burst = s.burst[:0]
	for i := range n {
		op, body := "Campaign List", []byte(`{"limit": 1, "page": 1}`)
		if i%2 == 1 {
			op, body = "Campaign Stats", []byte(fmt.Sprintf(`{"campaignId": %d}`, id))
		}
		if err := s.call(ctx, op, body); err != nil {
			return err
		}
		s.burst = append(s.burst, s.last)
	}
	return nil
}

func burstSucceeded(ctx context.Context) error {
	s := stateFrom(ctx)
	for i, x := range s.burst {
		if x.status != http.StatusOK {
			return s.failOn(x, "request %d of %d was answered %d, want 200: the spec allows %d requests per %s per account (§8)", i+1, len(s.burst), x.status, s.suite.pacer.limit, s.suite.pacer.window)
		}
	}
	return nil
}

// inconclusive reports why a 101st request that was let through does not
// prove a fault: the burst crossed a clock-aligned window boundary (by the
// server's Date headers), or took longer than a window. Empty means
// conclusive.
func (s *scenarioState) inconclusive() string {
	if len(s.burst) == 0 {
		return ""
	}
	first := s.burst[0]
	w := s.suite.pacer.window
	if s.last.recv.Sub(first.sent) >= w {
		return fmt.Sprintf("the requests took %s, longer than the %s window", s.last.recv.Sub(first.sent).Round(time.Millisecond), w)
	}
	if same, known := s.suite.pacer.sameServerWindow(first.sent, s.last.recv, first.rheader.Get("Date"), s.last.rheader.Get("Date")); known && !same {
		return fmt.Sprintf("by the server's clock (Date headers %s to %s) the requests may have crossed the boundary of a clock-aligned window", first.rheader.Get("Date"), s.last.rheader.Get("Date"))
	}
	return ""
}

func refusedWith429(ctx context.Context, doc *godog.DocString) error {
	s := stateFrom(ctx)
	if s.last.status != http.StatusTooManyRequests {
		if why := s.inconclusive(); why != "" && s.last.status == http.StatusOK {
			return skipf("inconclusive, run again: %s", why)
		}
		return s.failf("status %d, want 429: request %d of the window was not refused; the limit is %d per %s per account, all operations together (spec §8)",
			s.last.status, len(s.burst)+1, s.suite.pacer.limit, s.suite.pacer.window)
	}
	want, err := decodeJSON([]byte(doc.Content))
	if err != nil {
		return fmt.Errorf("the scenario's expected body: %w", err)
	}
	got, err := s.last.json()
	if err != nil {
		return s.failf("the 429 body is not JSON: spec §7 shows it as a JSON object with one string field \"error\"")
	}
	if !reflect.DeepEqual(got, want) {
		return s.failf("the 429 body is %s, want %s (spec §7: one string field \"error\" holding %q)", cut(s.last.rbody), strings.TrimSpace(doc.Content), msgRateLimit)
	}
	return nil
}

func usedUpBudget(ctx context.Context) error {
	s := stateFrom(ctx)
	// Learn the campaign list before spending the budget: later steps may
	// need a campaignId.
	if _, err := s.campaigns(ctx, s.suite.cfg.Primary); err != nil {
		return err
	}
	id := s.suite.cfg.Primary.AccountID
	if _, err := s.resetBudget(ctx, id); err != nil {
		return err
	}
	// Two windows' worth at most: a clock-aligned counter may reset once
	// during the loop.
	limit := 2*s.suite.pacer.limit + 2
	for i := 0; i < limit; i++ {
		if err := s.call(ctx, "Campaign List", []byte(`{"limit": 1, "page": 1}`)); err != nil {
			return err
		}
		switch s.last.status {
		case http.StatusTooManyRequests:
			s.exhaustedAt = s.last.sent
			return nil
		case http.StatusOK:
		default:
			return s.failf("status %d while spending the budget, want 200 or 429", s.last.status)
		}
	}
	return s.failf("%d requests in a row were accepted; the limit is %d per %s per account (spec §8)", limit, s.suite.pacer.limit, s.suite.pacer.window)
}

func fullWindowPasses(ctx context.Context) error {
	s := stateFrom(ctx)
	w := s.suite.pacer.window
	if s.suite.admin != nil {
		if err := s.suite.admin.advance(ctx, w+time.Second); err != nil {
			return fmt.Errorf("advance the simulator's clock: %w", err)
		}
		return nil
	}
	// A full window after the refused request: every counted request has
	// left a sliding window, and a clock-aligned window has turned over.
	wait := time.Until(s.exhaustedAt.Add(w + s.suite.pacer.margin))
	if wait > 0 {
		fmt.Fprintf(s.suite.cfg.Log, "conformance: waiting %s for the rate-limit window to pass (spec §8)\n", wait.Round(100*time.Millisecond))
		return s.suite.pacer.sleep(ctx, wait)
	}
	return nil
}
