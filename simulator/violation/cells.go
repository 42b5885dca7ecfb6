package violation

// One switch per cell of the conformance suite's matrix (steps/matrix):
// each breaks its rule for one operation, one account and one condition,
// and nowhere else, so that a suite which checks the rule only in some
// corners lets it through. They are generated from the matrix, named by
// matrix.CellSwitch, and kept apart from the hand-written catalogue
// (Cells, not Catalogue); Parse and Lookup know both.
//
// The account of a cell is a configured account by its place in the
// accounts file: the first is "primary", the second "second" (the suite's
// tests run with them in that order).

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/matrix"
)

// cells are the generated switches, in matrix order.
var cells = func() []Violation {
	var out []Violation
	for _, r := range matrix.Matrix() {
		for _, c := range r.Cells() {
			b, ok := cellBreach(c)
			if !ok {
				panic("violation: no switch for matrix cell " + c.String())
			}
			b.roles = true
			out = append(out, Violation{
				Name:     Name(matrix.CellSwitch(c)),
				Sections: r.Sections,
				Rule:     fmt.Sprintf("§%s: %s is broken: %s", strings.Join(r.Sections, ", §"), c, r.Statement),
				breach:   b,
			})
		}
	}
	return out
}()

// Cells returns the generated switches, one per matrix cell, in matrix
// order.
func Cells() []Violation { return append([]Violation(nil), cells...) }

// cellBreach builds the breach of one cell.
func cellBreach(c matrix.Cell) (breach, bool) {
	op := operationPath(c.Operation)
	mine := func(x *exchange) bool { return x.note.role == c.Account && x.operation() == op }
	switch c.Rule {
	case "auth-served":
		return breach{before: func(x *exchange) bool {
			if !mine(x) || !x.rightCredentials() {
				return false
			}
			x.answer(http.StatusForbidden, spec.MsgUnauthorizedAccount)
			return true
		}}, true
	case "auth-key", "auth-secret", "auth-account":
		header := map[string]string{"auth-key": spec.HeaderAPIKey, "auth-secret": spec.HeaderAPISecret, "auth-account": spec.HeaderAccountID}[c.Rule]
		loose, ok := looseComparisons[c.Condition]
		if !ok {
			return breach{}, false
		}
		return breach{before: func(x *exchange) bool {
			if x.operation() != op {
				return false
			}
			a, all := x.ownerBy(header)
			if a == nil || roleOf(a, all) != c.Account {
				return false
			}
			right := credentialOf(a, header)
			given, present := x.r.Header[http.CanonicalHeaderKey(header)]
			g := ""
			if present && len(given) > 0 {
				g = given[0]
			}
			if g != right && loose(g, right, present, func(v string) bool { return anyCredential(all, header, v) }) {
				x.setHeader(header, right)
			}
			return false
		}}, true
	case "rate-shared":
		switch c.Condition {
		case matrix.CondCounted:
			// Never counted (and so never refused).
			return breach{counter: cellCounter(c, func(context.Context, simulator.RateCounter, string, time.Time) (simulator.RateDecision, error) {
				return simulator.RateDecision{Allowed: true}, nil
			})}, true
		case matrix.CondCountedOnce:
			return breach{counter: cellCounter(c, func(ctx context.Context, next simulator.RateCounter, key string, now time.Time) (simulator.RateDecision, error) {
				if d, err := next.Take(ctx, key, now); err != nil || !d.Allowed {
					return d, err
				}
				return next.Take(ctx, key, now)
			})}, true
		case matrix.CondRefused:
			return breach{counter: cellCounter(c, func(ctx context.Context, next simulator.RateCounter, key string, now time.Time) (simulator.RateDecision, error) {
				d, err := next.Take(ctx, key, now)
				d.Allowed = true
				return d, err
			})}, true
		}
	case "rate-per-account":
		// The account's requests of the operation spend the other
		// account's budget.
		return breach{counter: cellCounter(c, func(ctx context.Context, next simulator.RateCounter, key string, now time.Time) (simulator.RateDecision, error) {
			if other := noteFrom(ctx).other; other != "" {
				key = other
			}
			return next.Take(ctx, key, now)
		})}, true
	case "rate-frees":
		// Once refused, the operation of the account stays refused until
		// its counter is reset through the control API.
		var mu sync.Mutex
		stuck := map[string]bool{}
		return breach{counter: func(next simulator.RateCounter) simulator.RateCounter {
			return &cellRateCounter{RateCounter: next, reset: func(key string) {
				mu.Lock()
				delete(stuck, key)
				mu.Unlock()
			}, take: func(ctx context.Context, key string, now time.Time) (simulator.RateDecision, error) {
				n := noteFrom(ctx)
				d, err := next.Take(ctx, key, now)
				if err != nil || n.role != c.Account || n.op != op {
					return d, err
				}
				mu.Lock()
				defer mu.Unlock()
				if !d.Allowed {
					stuck[key] = true
				} else if stuck[key] {
					d.Allowed, d.RetryAfter = false, time.Second
				}
				return d, nil
			}}
		}}, true
	case "list-envelope":
		limit, kind, field, ok := parseWalkCondition(c.Condition)
		if !ok {
			return breach{}, false
		}
		return breach{after: func(x *exchange) {
			if !mine(x) || x.status != http.StatusOK {
				return
			}
			if n, ok := integer(x.req, "limit"); !ok || n != int64(limit) || pageKind(x.page()) != kind {
				return
			}
			obj := x.object()
			if obj == nil {
				return
			}
			if field == "campaigns" {
				cs, _ := obj[field].([]any)
				if len(cs) > 0 {
					obj[field] = cs[:len(cs)-1]
				} else {
					obj[field] = []any{map[string]any{"Id": json.Number("1")}}
				}
			} else if n, err := jsonInt(obj[field]); err == nil {
				obj[field] = json.Number(strconv.FormatInt(n+1, 10))
			}
			x.changed()
		}}, true
	case "list-walk":
		limit, err := strconv.Atoi(strings.TrimPrefix(c.Condition, "limit "))
		if err != nil {
			return breach{}, false
		}
		return breach{campaigns: filterCampaigns(func(ctx context.Context, f *simulator.CampaignFilter) {
			if n := noteFrom(ctx); n.role == c.Account && f.Limit == limit && f.Offset > 0 {
				f.Offset--
			}
		})}, true
	case "list-fields":
		field, kind, ok := strings.Cut(c.Condition, " on ")
		if !ok {
			return breach{}, false
		}
		m, ok := fieldBreaks[field]
		k, kok := kindPreds[kind]
		if !ok || !kok {
			return breach{}, false
		}
		// Only on the last page of a walk (pages after the first): a suite
		// that checks the first pages only lets it through.
		return breach{after: campaign(field, m, k, lastPage, func(x *exchange, _ map[string]any) bool { return x.note.role == c.Account })}, true
	case "list-limit-max":
		limit, err := strconv.Atoi(strings.TrimPrefix(c.Condition, "limit "))
		if err != nil {
			return breach{}, false
		}
		return breach{before: func(x *exchange) bool {
			if n, ok := integer(x.req, "limit"); !mine(x) || !ok || n != int64(limit) {
				return false
			}
			x.answerEmptyPage(1, limit)
			return true
		}}, true
	case "list-page-min":
		page, err := strconv.Atoi(strings.TrimPrefix(c.Condition, "page "))
		if err != nil {
			return breach{}, false
		}
		return breach{before: func(x *exchange) bool {
			if n, ok := integer(x.req, "page"); !mine(x) || !ok || n != int64(page) {
				return false
			}
			x.answerEmptyPage(page, 10)
			return true
		}}, true
	case "contact-created":
		return breach{before: func(x *exchange) bool {
			if !mine(x) || x.req == nil || contactForm(x.req) != c.Condition {
				return false
			}
			x.answer(http.StatusBadRequest, "Contact refused")
			return true
		}}, true
	case "contact-values":
		field, value, _ := strings.Cut(c.Condition, " ")
		return breach{before: func(x *exchange) bool {
			if !mine(x) || x.req == nil || string(x.req[field]) != value {
				return false
			}
			x.answer(http.StatusBadRequest, field+" is not allowed")
			return true
		}}, true
	case "contact-required":
		return breach{before: func(x *exchange) bool {
			if !mine(x) || x.req == nil || given(x.req, "email") || given(x.req, "phoneNo") {
				return false
			}
			if empty := len(x.req) == 0; empty != (c.Condition == matrix.NoContactEmpty) {
				return false
			}
			x.status = http.StatusOK
			x.header.Set("Content-Type", spec.ContentType)
			x.setDoc(map[string]any{"status": "success", "contactId": "c-without-address"})
			return true
		}}, true
	case "stats-keys":
		key := statsKeyBreaks[c.Condition]
		if key == "" {
			return breach{}, false
		}
		return breach{after: at(key, drop, statsOK, func(x *exchange, _ map[string]any) bool {
			return x.note.role == c.Account && statsKindIs(x, c.Condition)
		})}, true
	case "contact-realdata":
		return realDataBreach(c, mine)
	case "list-concurrent":
		return cursorBreach(c)
	case "independence":
		return independenceBreach(c)
	case "auth-connection":
		return connAuthBreach(c, op)
	case "framing":
		return framingBreach(c, op)
	case "contact-concurrent":
		return concurrentContactBreach(c)
	case "stats-required":
		return breach{before: func(x *exchange) bool {
			if mine(x) && x.req != nil && !present(x.req, "campaignId") {
				x.req["campaignId"] = json.RawMessage("0")
				x.setRequest()
			}
			return false
		}}, true
	case "every-answer":
		return everyAnswerBreach(c)
	case "rate-holds":
		return rateHoldsBreach(c)
	case "rate-concurrent":
		return rateConcurrentBreach(c), true
	}
	return breach{}, false
}

// answerEmptyPage answers a Campaign List with a page of no campaigns that
// reports pageNo and pageSize as given, whatever the bounds of §8.
func (x *exchange) answerEmptyPage(pageNo, pageSize int) {
	x.status = http.StatusOK
	x.header.Set("Content-Type", spec.ContentType)
	x.setDoc(map[string]any{"pageNo": json.Number(strconv.Itoa(pageNo)), "pageSize": json.Number(strconv.Itoa(pageSize)),
		"totalPages": json.Number("0"), "totalRecords": json.Number("0"), "filteredRecords": json.Number("0"), "campaigns": []any{}})
}

// operationPath is the path of a matrix operation, looked up in the spec's
// table. The cells are built at init, so a matrix that names an operation
// the spec has not stops the package there instead of breaking another
// operation's cell.
func operationPath(name string) string {
	p, ok := spec.PathOf(name)
	if !ok {
		panic(fmt.Sprintf("violation: matrix operation %q is not in spec.Operations()", name))
	}
	return p
}

// roleOf names a configured account by its place in the accounts list:
// "primary", "second", or "" for any other.
func roleOf(a *simulator.Account, all []*simulator.Account) string {
	for i, c := range all[:min(len(all), 2)] {
		if c.AccountID == a.AccountID {
			return matrix.BothAccounts[i]
		}
	}
	return ""
}

// noteRoles notes which configured account a request is about (by its
// key, else its account id) and the other configured account's id.
func (x *exchange) noteRoles() {
	all, err := x.l.accounts.Accounts(x.r.Context())
	if err != nil {
		return
	}
	h := x.r.Header
	for _, by := range []string{spec.HeaderAPIKey, spec.HeaderAccountID} {
		for i, a := range all[:min(len(all), 2)] {
			if credentialOf(a, by) == h.Get(by) {
				x.note.role = matrix.BothAccounts[i]
				if len(all) > 1 {
					x.note.other = all[1-i].AccountID
				}
				return
			}
		}
	}
}

// rightCredentials reports whether the three headers are one account's.
func (x *exchange) rightCredentials() bool {
	all, err := x.l.accounts.Accounts(x.r.Context())
	if err != nil {
		return false
	}
	h := x.r.Header
	for _, a := range all {
		if a.APIKey == h.Get(spec.HeaderAPIKey) && a.APISecret == h.Get(spec.HeaderAPISecret) && a.AccountID == h.Get(spec.HeaderAccountID) {
			return true
		}
	}
	return false
}

// ownerBy finds the account the two headers other than header name, when
// both are that account's.
func (x *exchange) ownerBy(header string) (*simulator.Account, []*simulator.Account) {
	all, err := x.l.accounts.Accounts(x.r.Context())
	if err != nil {
		return nil, nil
	}
	h := x.r.Header
	for _, a := range all {
		ok := true
		for _, o := range []string{spec.HeaderAPIKey, spec.HeaderAPISecret, spec.HeaderAccountID} {
			if o != header && credentialOf(a, o) != h.Get(o) {
				ok = false
			}
		}
		if ok {
			return a, all
		}
	}
	return nil, all
}

func credentialOf(a *simulator.Account, header string) string {
	switch header {
	case spec.HeaderAPIKey:
		return a.APIKey
	case spec.HeaderAPISecret:
		return a.APISecret
	}
	return a.AccountID
}

func anyCredential(all []*simulator.Account, header, v string) bool {
	for _, a := range all {
		if credentialOf(a, header) == v {
			return true
		}
	}
	return false
}

// looseComparisons are the broken comparisons a real service might make,
// one per credential condition: each takes a value that is not the right
// one for it. known reports whether v is some account's value.
var looseComparisons = map[string]func(given, right string, present bool, known func(string) bool) bool{
	matrix.CondOtherValue: func(_, _ string, present bool, _ func(string) bool) bool { return present }, // the header is not checked
	matrix.CondFirstChar: func(g, r string, _ bool, _ func(string) bool) bool {
		return len(g) == len(r) && len(r) > 1 && g[1:] == r[1:]
	},
	matrix.CondMiddleChar: func(g, r string, _ bool, _ func(string) bool) bool {
		n := len(r)
		return len(g) == n && n > 2 && g[:n/2] == r[:n/2] && g[n/2+1:] == r[n/2+1:]
	},
	matrix.CondLastChar: func(g, r string, _ bool, _ func(string) bool) bool {
		return len(g) == len(r) && len(r) > 1 && g[:len(r)-1] == r[:len(r)-1]
	},
	matrix.CondCase:       func(g, r string, _ bool, _ func(string) bool) bool { return strings.EqualFold(g, r) },
	matrix.CondInnerSpace: func(g, r string, _ bool, _ func(string) bool) bool { return strings.ReplaceAll(g, " ", "") == r },
	matrix.CondNBSPSuffix: func(g, r string, _ bool, _ func(string) bool) bool { return strings.TrimSpace(g) == r },
	matrix.CondLatin1NBSP: func(g, r string, _ bool, _ func(string) bool) bool {
		return strings.TrimSpace(latin1(g)) == latin1(r)
	},
	matrix.CondIdeographicLead: func(g, r string, _ bool, _ func(string) bool) bool {
		return strings.TrimLeftFunc(g, unicode.IsSpace) == r
	},
	matrix.CondPrefix:       func(g, r string, _ bool, _ func(string) bool) bool { return strings.HasSuffix(g, r) },
	matrix.CondSuffix:       func(g, r string, _ bool, _ func(string) bool) bool { return strings.HasPrefix(g, r) },
	matrix.CondTruncated:    func(g, r string, _ bool, _ func(string) bool) bool { return g != "" && strings.HasPrefix(r, g) },
	matrix.CondHalf:         func(g, r string, _ bool, _ func(string) bool) bool { return g != "" && strings.HasPrefix(r, g) },
	matrix.CondFullwidth:    func(g, r string, _ bool, _ func(string) bool) bool { return fold(g, fullwidth) == r },
	matrix.CondCyrillic:     func(g, r string, _ bool, _ func(string) bool) bool { return fold(g, latinOf) == r },
	matrix.CondOtherAccount: func(g, _ string, _ bool, known func(string) bool) bool { return known(g) },
	matrix.CondEmpty:        func(g, _ string, present bool, _ func(string) bool) bool { return present && g == "" },
	matrix.CondMissing:      func(_, _ string, present bool, _ func(string) bool) bool { return !present },
}

// latin1 reads bytes as Latin-1, as Node.js and ASGI servers read header
// values.
func latin1(s string) string {
	rs := make([]rune, len(s))
	for i := range len(s) {
		rs[i] = rune(s[i])
	}
	return string(rs)
}

// fold maps every rune through f.
func fold(s string, f func(rune) rune) string {
	if !utf8.ValidString(s) {
		return s
	}
	return strings.Map(f, s)
}

// fullwidth folds fullwidth forms to ASCII, as Unicode NFKC does.
func fullwidth(r rune) rune {
	if r >= 0xFF01 && r <= 0xFF5E {
		return r - 0xFEE0
	}
	return r
}

// latinOf folds Cyrillic letters that look Latin, as a confusables
// skeleton does.
func latinOf(r rune) rune {
	if l, ok := latinOfCyrillic[r]; ok {
		return l
	}
	return r
}

// latinOfCyrillic inverts matrix.CyrillicLookalikes.
var latinOfCyrillic = func() map[rune]rune {
	m := make(map[rune]rune, len(matrix.CyrillicLookalikes))
	for l, c := range matrix.CyrillicLookalikes {
		m[c] = l
	}
	return m
}()

// cellRateCounter decides the requests of one cell its own way.
type cellRateCounter struct {
	simulator.RateCounter
	take  func(ctx context.Context, key string, now time.Time) (simulator.RateDecision, error)
	reset func(key string)
}

// Take implements simulator.RateCounter.
func (c *cellRateCounter) Take(ctx context.Context, key string, now time.Time) (simulator.RateDecision, error) {
	return c.take(ctx, key, now)
}

// Reset implements simulator.RateCounter.
func (c *cellRateCounter) Reset(ctx context.Context, key string) error {
	if c.reset != nil {
		c.reset(key)
	}
	return c.RateCounter.Reset(ctx, key)
}

// cellCounter takes the requests of the cell's operation and account with
// take, every other one faithfully.
func cellCounter(c matrix.Cell, take func(ctx context.Context, next simulator.RateCounter, key string, now time.Time) (simulator.RateDecision, error)) func(simulator.RateCounter) simulator.RateCounter {
	op := operationPath(c.Operation)
	return func(next simulator.RateCounter) simulator.RateCounter {
		return &cellRateCounter{RateCounter: next, take: func(ctx context.Context, key string, now time.Time) (simulator.RateDecision, error) {
			if n := noteFrom(ctx); n.role == c.Account && n.op == op {
				return take(ctx, next, key, now)
			}
			return next.Take(ctx, key, now)
		}}
	}
}

// parseWalkCondition reads "limit 7, last page, pageSize".
func parseWalkCondition(cond string) (limit int, kind, field string, ok bool) {
	parts := strings.Split(cond, ", ")
	if len(parts) != 3 {
		return 0, "", "", false
	}
	limit, err := strconv.Atoi(strings.TrimPrefix(parts[0], "limit "))
	return limit, parts[1], parts[2], err == nil
}

// pageKind names a page as the matrix does, by the faithful envelope.
func pageKind(p pageFacts) string {
	k := matrix.PageKinds
	switch {
	case p.PageNo > p.TotalPages:
		return k[3]
	case p.PageNo == 1:
		return k[0]
	case p.PageNo == p.TotalPages:
		return k[2]
	}
	return k[1]
}

// fieldBreaks puts each field of §2.2 out of its type or format.
var fieldBreaks = map[string]mut{
	"Id":                asString,
	"campaignName":      set(json.Number("7")),
	"campaignType":      set(json.Number("2")),
	"campaignChannel":   str(func(s string) any { return strings.ToUpper(s) }),
	"status":            set(json.Number("0")),
	"statusColor":       str(func(s string) any { return strings.TrimPrefix(s, "#") }),
	"active":            func(c map[string]any, k string) bool { c[k] = c[k] == json.Number("1"); return true },
	"scheduledOn":       str(stripMillis),
	"scheduledTimeZone": set(json.Number("-300")),
	"offset":            str(func(s string) any { return strings.Replace(s, ":", "", 1) }),
	"autoResend":        asString,
	"broadcastOn":       str(epochMillis),
	"broadcast":         asString,
	"createdAt":         str(func(s string) any { return s[:min(len(s), len(time.DateOnly))] }),
	"updatedAt":         null,
	"reason":            set(json.Number("0")),
}

// kindPreds hold for a campaign of a matrix kind, by its faithful fields.
var kindPreds = map[string]pred{
	matrix.KindEmail:   channel(spec.ChannelEmail),
	matrix.KindSMS:     channel(spec.ChannelSMS),
	matrix.KindStatic:  func(_ *exchange, o map[string]any) bool { return o["campaignType"] == json.Number("0") },
	matrix.KindDynamic: func(_ *exchange, o map[string]any) bool { return o["campaignType"] == json.Number("1") },
	matrix.KindDeleted: deleted,
	matrix.KindActive:  func(_ *exchange, o map[string]any) bool { return o["active"] == json.Number("1") },
}

// statsKeyBreaks is the key each kind of campaign's statistics loses.
var statsKeyBreaks = map[string]string{
	matrix.StatsEmailStatic:  "emailStat.Complained",
	matrix.StatsEmailDynamic: "emailStat.Hardbounce",
	matrix.StatsSMSStatic:    "smsStat.Failed",
	matrix.StatsSMSDynamic:   "smsStat.Delivered",
	matrix.StatsZero:         "emailStat.Opened",
}

// statsKindIs reports whether a Campaign Stats answer is about a campaign
// of the kind: all counts zero, or its channel and type.
func statsKindIs(x *exchange, kind string) bool {
	if kind == matrix.StatsZero {
		var orig map[string]map[string]json.Number
		return json.Unmarshal(x.orig, &orig) == nil && allZero(orig)
	}
	c := x.statsFacts().campaign
	if c == nil {
		return false
	}
	dynamic := c.CampaignType == spec.CampaignDynamic
	switch kind {
	case matrix.StatsEmailStatic:
		return c.CampaignChannel == spec.ChannelEmail && !dynamic
	case matrix.StatsEmailDynamic:
		return c.CampaignChannel == spec.ChannelEmail && dynamic
	case matrix.StatsSMSStatic:
		return c.CampaignChannel == spec.ChannelSMS && !dynamic
	}
	return c.CampaignChannel == spec.ChannelSMS && dynamic
}

func allZero(objs map[string]map[string]json.Number) bool {
	if len(objs) == 0 {
		return false
	}
	for _, o := range objs {
		for _, n := range o {
			if n != "0" {
				return false
			}
		}
	}
	return true
}

// contactForm names the matrix form of an Add Contact body.
func contactForm(f map[string]json.RawMessage) string {
	email, phone := given(f, "email"), given(f, "phoneNo")
	full := present(f, "firstName") && present(f, "tag") && present(f, "playerType")
	switch {
	case email && phone && full:
		return matrix.FormBothFull
	case email && phone:
		return matrix.FormBoth
	case email && full:
		return matrix.FormEmailFull
	case email:
		return matrix.FormEmail
	case phone && full:
		return matrix.FormPhoneFull
	case phone:
		return matrix.FormPhone
	}
	return ""
}
