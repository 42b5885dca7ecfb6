package violation_test

import (
	"encoding/json"
	"fmt"

	"github.com/partner-v3/conformance-kit/simulator/violation"
)

// The default seed gives the primary account 120 campaigns: with limit 50,
// pages 1 and 2 are full, page 3 (the last) holds 20 and page 4 is past
// the end.
const (
	lastPage    = 3
	pastEndPage = 4
)

func ids(a answer) []string {
	var out []string
	cs, _ := a.obj()["campaigns"].([]any)
	for _, c := range cs {
		out = append(out, fmt.Sprint(c.(map[string]any)["Id"]))
	}
	return out
}

func setField(key string, v any) func(a *answer) {
	return func(a *answer) { a.obj()[key] = v }
}

func dropField(key string) func(a *answer) {
	return func(a *answer) { delete(a.obj(), key) }
}

func asString(a *answer, key string) { a.obj()[key] = a.obj()[key].(json.Number).String() }

// Spec §4.2 and §8: Campaign List's envelope and paging.
func init() {
	register(map[violation.Name]probe{
		"list-page-size-capped": {run: func(p *pair) {
			p.expect(list(50, 1), func(a *answer) { a.obj()["campaigns"] = a.obj()["campaigns"].([]any)[:20] })
			p.same(list(20, 1))
		}},
		"list-total-pages-floor": {run: func(p *pair) {
			p.expect(list(50, 1), setField("totalPages", num(2)))
			p.same(list(40, 1)) // 120/40: nothing to round
		}},
		"list-pages-overlap": {run: func(p *pair) {
			p.expect(list(10, 2), func(a *answer) {
				a.obj()["campaigns"] = p.f.do(list(19, 1)).obj()["campaigns"].([]any)[9:]
			})
			p.same(list(10, 1))
		}},
		"list-page-zero-based": {run: func(p *pair) {
			p.expect(list(10, 1), func(a *answer) { a.obj()["campaigns"] = p.f.do(list(10, 2)).obj()["campaigns"] })
		}},
		"list-no-filtered":    {run: func(p *pair) { p.expect(list(50, 1), dropField("filteredRecords")) }},
		"list-page-no-string": {run: func(p *pair) { p.expect(list(50, 2), func(a *answer) { asString(a, "pageNo") }) }},
	})
}
