package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// altDefectCase is one single-rule defect of the alternative
// implementation: the sentence of the spec it breaks, the sections a
// scenario that catches it is tagged with, and the hook that breaks it.
type altDefectCase struct {
	name     string
	sentence string   // the spec's words the defect breaks
	sections []string // a failure in one of these is the right reason
	defect   altDefect
}

// String names the defect and the sentence it breaks.
func (d altDefectCase) String() string { return d.name + " (breaks " + d.sentence + ")" }

// loosely compares header h with eq, every other header exactly.
func loosely(h string, eq func(given, right string) bool) func(op, header string, acct int, given, right string) bool {
	return func(_, header string, _ int, given, right string) bool {
		if header == h {
			return eq(given, right)
		}
		return given == right
	}
}

// costs makes op spend n requests of the budget, every other operation one.
func costs(op string, n int) func(string, int) int {
	return func(o string, _ int) int {
		if o == op {
			return n
		}
		return 1
	}
}

// oneMore lets op through one request past the limit.
func oneMore(op string) func(string, int, int) int {
	return func(o string, _, limit int) int {
		if o == op {
			return limit + 1
		}
		return limit
	}
}

// foldFullwidth maps the fullwidth forms U+FF01..U+FF5E to ASCII, as an
// NFKC normalisation would.
func foldFullwidth(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 0xFF01 && r <= 0xFF5E {
			return r - 0xFEE0
		}
		return r
	}, s)
}

// altDefects breaks one sentence of the spec each, in a corner a suite
// that checks each rule once (one operation, one account, one page) would
// miss: the suite has to derive its checks from every rule on every
// operation, account, field and page to catch them all.
func altDefects() []altDefectCase {
	const (
		rate     = "§8: 100 requests per minute per account, all operations together (one shared counter per account); exceeding it yields HTTP 429"
		rule1    = "§5 rule 1: when x-api-key or x-api-secret is incorrect, the service answers 401"
		rule2    = "§5 rule 2: when x-account-id does not match, the service answers 403"
		envelope = "§4.2: pageNo: page number returned; pageSize: page size used; totalPages: number of pages; filteredRecords: count of records after filtering"
		record   = "§2.2: the campaign record's fields, types and formats"
		contact  = "§4.1, §2.1: a contact with email or phoneNo is created: 200 {\"status\": \"success\", \"contactId\": <string>, identifier of the created contact}"
		stats    = "§2.3: emailStat and smsStat carry every key, all values integers (counts)"
	)
	s8, s5, s42, s22, s41, s23 := []string{"8"}, []string{"5"}, []string{"4.2"}, []string{"2.2"}, []string{"4.1", "2.1"}, []string{"2.3"}
	return []altDefectCase{
		// §8: one shared counter per account. The runs allow 20 per
		// window: "the 101st" is the 21st there.
		{"rate: Add Contact is refused once the budget is spent but never counts", rate, s8, altDefect{cost: costs(spec.PathContactAdd, 0)}},
		{"rate: Campaign Stats is refused once the budget is spent but never counts", rate, s8, altDefect{cost: costs(spec.PathCampaignStats, 0)}},
		{"rate: Campaign List is refused once the budget is spent but never counts", rate, s8, altDefect{cost: costs(spec.PathCampaignList, 0)}},
		{"rate: Add Contact counts twice", rate, s8, altDefect{cost: costs(spec.PathContactAdd, 2)}},
		{"rate: Campaign Stats counts twice", rate, s8, altDefect{cost: costs(spec.PathCampaignStats, 2)}},
		{"rate: the second account's budget is one smaller (99 of 100)", rate, s8, altDefect{limit: func(_ string, acct, limit int) int { return limit - acct }}},
		{"rate: the 101st request is admitted when it is an Add Contact", rate, s8, altDefect{limit: oneMore(spec.PathContactAdd)}},
		{"rate: the 101st request is admitted when it is a Campaign Stats", rate, s8, altDefect{limit: oneMore(spec.PathCampaignStats)}},
		{"rate: the 101st request is admitted when it is a Campaign List", rate, s8, altDefect{limit: oneMore(spec.PathCampaignList)}},

		// §5: credentials compared exactly, on every operation, for every
		// account.
		{"auth: the secret is compared case-insensitively", rule1, s5, altDefect{match: loosely("x-api-secret", strings.EqualFold)}},
		{"auth: the key is compared after trimming Unicode whitespace", rule1, s5, altDefect{match: loosely("x-api-key", func(g, r string) bool { return strings.TrimSpace(g) == r })}},
		{"auth: the account id is compared on its first 12 characters", rule2, s5, altDefect{match: loosely("x-account-id", func(g, r string) bool { return len(g) >= 12 && g[:12] == r[:12] })}},
		{"auth: the secret is compared without its first character", rule1, s5, altDefect{match: loosely("x-api-secret", func(g, r string) bool { return len(g) == len(r) && g != "" && g[1:] == r[1:] })}},
		{"auth: the key is compared after folding fullwidth letters to ASCII", rule1, s5, altDefect{match: loosely("x-api-key", func(g, r string) bool { return foldFullwidth(g) == r })}},
		{"auth: an account id cut short is accepted", rule2, s5, altDefect{match: loosely("x-account-id", func(g, r string) bool { return g != "" && strings.HasPrefix(r, g) })}},
		{"auth: a key with characters appended is accepted", rule1, s5, altDefect{match: loosely("x-api-key", func(g, r string) bool { return strings.HasPrefix(g, r) })}},
		{"auth: Campaign Stats does not check the secret", rule1, s5, altDefect{match: func(op, h string, _ int, g, r string) bool {
			return g == r || op == spec.PathCampaignStats && h == "x-api-secret"
		}}},
		{"auth: only the second account's secret is compared case-insensitively", rule1, s5, altDefect{match: func(_, h string, acct int, g, r string) bool {
			return g == r || acct == 1 && h == "x-api-secret" && strings.EqualFold(g, r)
		}}},
		{"auth: Add Contact refuses the second account with 403", rule2, s5, altDefect{forbid: func(op string, acct int) bool { return acct == 1 && op == spec.PathContactAdd }}},

		// §4.2: the envelope is right on every page, at every limit.
		{"list: pageSize is the number of campaigns on a short last page", envelope, s42, altDefect{envelope: func(p altPage, env map[string]any) {
			if n := len(env["campaigns"].([]any)); p.page == p.pages && n < p.limit {
				env["pageSize"] = n
			}
		}}},
		{"list: pageNo is one short on the pages after the fourth", envelope, s42, altDefect{envelope: func(p altPage, env map[string]any) {
			if p.page > 4 && p.page <= p.pages {
				env["pageNo"] = p.page - 1
			}
		}}},
		{"list: totalPages is one short at limit 1", envelope, s42, altDefect{envelope: func(p altPage, env map[string]any) {
			if p.limit == 1 {
				env["totalPages"] = p.pages - 1
			}
		}}},
		{"list: totalPages is rounded down at limit 49", envelope, s42, altDefect{envelope: func(p altPage, env map[string]any) {
			if p.limit == 49 {
				env["totalPages"] = p.records / p.limit
			}
		}}},
		{"list: at limit 7 each page after the first repeats the last campaign of the page before", envelope, s42, altDefect{from: func(p altPage, from int) int {
			if p.limit == 7 && p.page > 1 {
				return from - 1
			}
			return from
		}}},
		{"list: filteredRecords exceeds totalRecords from page 3 on", envelope, s42, altDefect{envelope: func(p altPage, env map[string]any) {
			if p.page >= 3 {
				env["filteredRecords"] = env["totalRecords"].(int) + 1
			}
		}}},

		// §2.2: every field of every campaign, whatever its kind and page.
		{"record: deleted campaigns' updatedAt has no milliseconds", record, s22, altDefect{campaign: func(_ altPage, c map[string]any) {
			if c["active"] == 0 {
				c["updatedAt"] = c["updatedAt"].(string)[:19] + "Z"
			}
		}}},
		{"record: sms campaigns' offset has no colon", record, s22, altDefect{campaign: func(_ altPage, c map[string]any) {
			if c["campaignChannel"] == "sms" {
				c["offset"] = strings.Replace(c["offset"].(string), ":", "", 1)
			}
		}}},
		{"record: dynamic campaigns' statusColor has no leading #", record, s22, altDefect{campaign: func(_ altPage, c map[string]any) {
			if c["campaignType"] == 1 {
				c["statusColor"] = strings.TrimPrefix(c["statusColor"].(string), "#")
			}
		}}},
		{"record: on the last page at limit 7 campaignType is a string", record, s22, altDefect{campaign: func(p altPage, c map[string]any) {
			if p.limit == 7 && p.page == p.pages {
				c["campaignType"] = fmt.Sprint(c["campaignType"])
			}
		}}},

		// §4.1, §2.1: every valid contact is created, with an identifier of
		// its own.
		{"contact: a phone-only contact with every optional field is refused", contact, s41, altDefect{contact: func(b map[string]any, id string) (int, any) {
			if b["email"] == nil && len(b) >= 15 {
				return http.StatusBadRequest, nil
			}
			return http.StatusOK, id
		}}},
		{"contact: contactId is a number when both email and phoneNo are given", contact, s41, altDefect{contact: func(b map[string]any, id string) (int, any) {
			if b["email"] != nil && b["phoneNo"] != nil {
				return http.StatusOK, crc32.ChecksumIEEE([]byte(id))
			}
			return http.StatusOK, id
		}}},
		{"contact: two contacts with the same firstName get the same contactId", contact, s41, altDefect{contact: func(b map[string]any, id string) (int, any) {
			if name, ok := b["firstName"].(string); ok {
				return http.StatusOK, "c-" + name
			}
			return http.StatusOK, id
		}}},

		// §2.3: every key, an integer, for every kind of campaign.
		{"stats: a dynamic sms campaign's smsStat has no Failed", stats, s23, altDefect{stats: func(c map[string]any, st map[string]map[string]any) {
			if c["campaignType"] == 1 && c["campaignChannel"] == "sms" {
				delete(st["smsStat"], "Failed")
			}
		}}},
		{"stats: a count of zero is written 0.0", stats, s23, altDefect{stats: func(_ map[string]any, st map[string]map[string]any) {
			for _, o := range st {
				for k, v := range o {
					if v == 0 {
						o[k] = json.Number("0.0")
					}
				}
			}
		}}},
	}
}

// TestAlternativeDefectsAreCaught: the alternative implementation, right
// but for one sentence of the spec, must fail the normative profile (exit
// 1) in a scenario of the section that sentence belongs to. Each defect
// hides in a corner; a defect the suite lets through is reported NOT
// CAUGHT. The runs use a limit of altLimit per altWindow (2 s; 4 s under -race),
// the two accounts and 72 and 61 campaigns (several pages at limit 7 and
// 49, some deleted, both channels, both types). The defects are those of
// altDefects and the real-data ones of altRealDataDefects (§4.1, §2.1).
func TestAlternativeDefectsAreCaught(t *testing.T) {
	waitsForWindows(t)
	defects := append(altDefects(), altRealDataDefects()...)
	// verdicts[i] is what became of defect i and by[i] the scenarios that
	// caught it, for the summary at the end.
	verdicts, by := make([]string, len(defects)), make([]string, len(defects))
	var caught atomic.Int32
	t.Cleanup(func() {
		var b strings.Builder
		for i, d := range defects {
			fmt.Fprintf(&b, "\n  %-8s %s", cmp.Or(verdicts[i], "no verdict"), d.name)
			if by[i] != "" {
				fmt.Fprintf(&b, "\n             by %s", by[i])
			}
		}
		t.Logf("caught %d of %d single-rule defects:%s", caught.Load(), len(defects), b.String())
	})
	altTable(t, len(defects), func(i int) (string, altTarget) {
		return defects[i].name, altTarget{defect: defects[i].defect, limit: altLimit}
	}, func(t *testing.T, i int, r altRun) {
		defer func() {
			if t.Skipped() {
				verdicts[i] = "skipped"
			}
		}()
		scs := wantCaught(t, r, defects[i].String(), altCatch{sections: defects[i].sections})
		if scs == nil {
			verdicts[i] = "MISSED"
			return
		}
		caught.Add(1)
		verdicts[i], by[i] = "caught", strings.Join(scs, "; ")
	})
}

// altProbe is one request of a probe: the account whose credentials it
// carries, the operation, the body, and what it changes in the headers.
type altProbe struct {
	acct int
	op   string
	body string
	tune func(h http.Header)
}

// answers sends the probes to h in order and returns each answer as its
// status and body.
func answers(h http.Handler, accounts []altCredentials, probes []altProbe) []string {
	out := make([]string, len(probes))
	for i, p := range probes {
		req := httptest.NewRequest(http.MethodPost, spec.BasePath+"/"+p.op, strings.NewReader(p.body))
		req.Header.Set("Content-Type", "application/json")
		a := accounts[p.acct]
		req.Header.Set("x-api-key", a.APIKey)
		req.Header.Set("x-api-secret", a.APISecret)
		req.Header.Set("x-account-id", a.AccountID)
		if p.tune != nil {
			p.tune(req.Header)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		out[i] = fmt.Sprintf("%d %s", w.Code, w.Body.String())
	}
	return out
}

// altCredentials are an account's three headers.
type altCredentials = control.Credentials

// altProbeSets are request sequences that between them reach every corner
// the defects hide in: each credential tampered with on each operation for
// each account, every page at the limits the defects pick, the contacts
// they pick, the statistics of every campaign, and a budget spent by each
// operation then tried by each. Each set runs on a fresh service.
func altProbeSets(accounts []altCredentials) (sets [][]altProbe, limits []int) {
	ops := spec.Paths()
	valid := map[string]string{
		spec.PathContactAdd:    `{"email": "probe@example.com"}`,
		spec.PathCampaignList:  `{"limit": 1, "page": 1}`,
		spec.PathCampaignStats: fmt.Sprintf(`{"campaignId": %d}`, altCampaignID(0, 0)),
	}
	set := func(h string, f func(string) string) func(http.Header) {
		return func(hd http.Header) { hd.Set(h, f(hd.Get(h))) }
	}
	tunes := []func(http.Header){
		set("x-api-secret", strings.ToUpper),
		set("x-api-secret", func(v string) string { return "X" + v[1:] }),
		set("x-api-secret", func(string) string { return "" }),
		set("x-api-key", func(v string) string { return v + "\u00a0" }),
		set("x-api-key", func(v string) string { return v + "-more" }),
		set("x-api-key", func(v string) string { return string(rune(0xFEE0+rune(v[0]))) + v[1:] }),
		set("x-account-id", func(v string) string { return v[:len(v)-3] }),
		set("x-account-id", func(v string) string { return v[:12] + "other" }),
	}
	var auth []altProbe
	for acct := range accounts {
		for _, op := range ops {
			auth = append(auth, altProbe{acct: acct, op: op, body: valid[op]})
			for _, tune := range tunes {
				auth = append(auth, altProbe{acct: acct, op: op, body: valid[op], tune: tune})
			}
		}
	}
	var list []altProbe
	for _, limit := range []int{1, 7, 10, 49, 50} {
		for page := 1; page <= 72/limit+2; page++ {
			list = append(list, altProbe{op: spec.PathCampaignList, body: fmt.Sprintf(`{"limit": %d, "page": %d}`, limit, page)})
		}
	}
	contacts := []altProbe{
		{op: spec.PathContactAdd, body: `{"phoneNo": "+12025550101", "firstName": "Ada", "lastName": "Lovelace", "addrOne": "1 Sq", "addrTwo": "Flat 3", "city": "London", "country": "UK", "state": "LND", "zipCode": "SW1", "gender": "female", "dateOfBirth": "1990-12-10", "emailOptStatus": 1, "smsOptStatus": 0, "tag": ["vip"], "playerType": ["casual"]}`},
		{op: spec.PathContactAdd, body: `{"email": "both@example.com", "phoneNo": "+12025550102"}`},
		{op: spec.PathContactAdd, body: `{"email": "grace1@example.com", "firstName": "Grace"}`},
		{op: spec.PathContactAdd, body: `{"email": "grace2@example.com", "firstName": "Grace"}`},
	}
	var stats []altProbe
	for acct := range accounts {
		for i := range altAccountCampaigns[acct] {
			stats = append(stats, altProbe{acct: acct, op: spec.PathCampaignStats, body: fmt.Sprintf(`{"campaignId": %d}`, altCampaignID(acct, i))})
		}
	}
	sets = [][]altProbe{auth, list, contacts, stats}
	limits = []int{1 << 20, 1 << 20, 1 << 20, 1 << 20}
	// A budget of 20 spent by one operation, then each operation tried;
	// the second account's whole budget.
	for _, spender := range ops {
		for _, then := range ops {
			var burst []altProbe
			for range 20 {
				burst = append(burst, altProbe{op: spender, body: valid[spender]})
			}
			sets, limits = append(sets, append(burst, altProbe{op: then, body: valid[then]})), append(limits, 20)
		}
	}
	var second []altProbe
	for range 20 {
		second = append(second, altProbe{acct: 1, op: spec.PathCampaignList, body: valid[spec.PathCampaignList]})
	}
	return append(sets, second), append(limits, 20)
}

// TestAlternativeDefectsAreObservable: every defect changes at least one
// answer of the probes, so a defect the suite lets through is a gap of the
// suite, not a hook that does nothing. The probes run in-process, with a
// window too long to turn over.
func TestAlternativeDefectsAreObservable(t *testing.T) {
	accounts := altAccounts(t)
	sets, limits := altProbeSets(accounts)
	const window = 1000 * time.Hour
	for _, tt := range altDefects() {
		t.Run(tt.name, func(t *testing.T) {
			for i, probes := range sets {
				right := answers(newAltService(accounts, limits[i], window, altOptions{}, altDefect{}), accounts, probes)
				wrong := answers(newAltService(accounts, limits[i], window, altOptions{}, tt.defect), accounts, probes)
				for j := range probes {
					if right[j] != wrong[j] {
						r, w := differ(right[j], wrong[j])
						t.Logf("request %d of probe set %d (%s %s): right …%s…, broken …%s…", j+1, i+1, probes[j].op, probes[j].body, r, w)
						return
					}
				}
			}
			t.Errorf("no probe tells the defect from the right service: %s", tt.name)
		})
	}
}

// differ returns a and b from a little before where they first differ.
func differ(a, b string) (string, string) {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	from := max(i-24, 0)
	cut := func(s string) string { return strings.TrimSpace(s[from:min(len(s), i+40)]) }
	return cut(a), cut(b)
}
