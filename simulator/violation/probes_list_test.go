package violation_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/spec"
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
		"list-total-pages-plus-one": {run: func(p *pair) {
			p.expect(list(40, 1), setField("totalPages", num(4)))
			p.same(list(50, 1)) // 120/50 rounded down, plus one, is right
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
		"list-order-random": {run: func(p *pair) {
			f1, b1 := p.both(list(50, 1))
			b2 := p.b.do(list(50, 1))
			if slices.Equal(ids(b1), ids(f1)) || slices.Equal(ids(b1), ids(b2)) {
				p.t.Fatalf("page 1 is in Id order or the same twice: %v", ids(b1))
			}
			all := p.account()
			for _, id := range ids(b1) {
				if !slices.ContainsFunc(all, func(c *simulator.Campaign) bool { return fmt.Sprint(c.ID) == id }) {
					p.t.Fatalf("Id %s is not the account's", id)
				}
			}
			delete(f1.obj(), "campaigns")
			delete(b1.obj(), "campaigns")
			if !f1.equal(b1) {
				p.t.Fatalf("the envelope changed: %s, want %s", b1, f1)
			}
		}},
		"list-no-filtered": {run: func(p *pair) { p.expect(list(50, 1), dropField("filteredRecords")) }},
		"list-filtered-string": {run: func(p *pair) {
			p.expect(list(50, 1), func(a *answer) { asString(a, "filteredRecords") })
		}},
		"list-filtered-exceeds-total": {run: func(p *pair) { p.expect(list(50, 1), setField("filteredRecords", num(125))) }},
		"list-page-no-string":         {run: func(p *pair) { p.expect(list(50, 2), func(a *answer) { asString(a, "pageNo") }) }},
		"list-page-no-always-one": {run: func(p *pair) {
			p.expect(list(50, 2), setField("pageNo", num(1)))
			p.same(list(50, 1))
		}},
		"list-total-records-page": {run: func(p *pair) {
			p.expect(list(50, lastPage), setField("totalRecords", num(20)))
			p.expect(list(10, 1), setField("totalRecords", num(10)))
		}},
		"list-total-records-string": {run: func(p *pair) {
			p.expect(list(50, lastPage), func(a *answer) { asString(a, "totalRecords") })
			p.same(list(50, 2))
			p.same(list(50, 1))
		}},
		"list-page-size-fixed": {run: func(p *pair) {
			p.expect(list(50, 1), setField("pageSize", num(10)))
			p.expect(list(7, 2), setField("pageSize", num(10)))
		}},
		"list-page-size-null-last": {run: func(p *pair) {
			p.expect(list(50, lastPage), setField("pageSize", nil))
			p.same(list(50, 2))
		}},
		"list-last-page-short": {run: func(p *pair) {
			p.expect(list(50, lastPage), func(a *answer) {
				cs := a.obj()["campaigns"].([]any)
				a.obj()["campaigns"] = cs[:len(cs)-1]
			})
			p.same(list(50, 2))
			p.same(list(50, pastEndPage))
		}},
		"list-last-page-empty": {run: func(p *pair) {
			p.expect(list(50, lastPage), setField("campaigns", []any{}))
			p.same(list(50, 2))
		}},
		"list-past-end-500": {run: func(p *pair) {
			p.expect(list(50, pastEndPage), func(a *answer) { errorAnswer(a, http.StatusInternalServerError, spec.MsgInternal) })
			p.same(list(50, lastPage))
		}},
		"list-past-end-campaigns-null": {run: func(p *pair) {
			p.expect(list(50, pastEndPage), setField("campaigns", nil))
			p.same(list(50, lastPage))
		}},
		"list-past-end-no-page-no": {run: func(p *pair) {
			p.expect(list(50, pastEndPage), dropField("pageNo"))
			p.same(list(50, lastPage))
		}},
		"list-campaigns-object": {run: func(p *pair) {
			p.expect(list(5, 1), func(a *answer) {
				m := map[string]any{}
				for _, c := range a.obj()["campaigns"].([]any) {
					m[fmt.Sprint(c.(map[string]any)["Id"])] = c
				}
				a.obj()["campaigns"] = m
			})
		}},
		"list-envelope-wrapped": {run: func(p *pair) {
			p.expect(list(5, 1), func(a *answer) { a.Doc = map[string]any{"data": a.Doc} })
			p.same(list(5, 0))
		}},
		"list-limit-51-served": {run: func(p *pair) {
			for page := 1; page <= 2; page++ {
				_, b := p.status(list(51, page), http.StatusBadRequest, http.StatusOK)
				all := p.account()
				var want []string
				for _, c := range all[(page-1)*51 : page*51] {
					want = append(want, fmt.Sprint(c.ID))
				}
				if got := ids(b); !slices.Equal(got, want) {
					p.t.Fatalf("page %d: %v, want %v", page, got, want)
				}
				env := b.obj()
				if env["pageSize"] != num(51) || env["totalPages"] != num(3) || env["pageNo"] != num(int64(page)) || env["totalRecords"] != num(120) {
					p.t.Fatalf("page %d envelope: %s", page, b)
				}
			}
			p.same(list(50, 1))
			p.same(list(52, 1))
		}},
		"list-limit-50-refused": {run: func(p *pair) {
			p.status(list(50, 1), http.StatusOK, http.StatusBadRequest)
			p.same(list(49, 1))
		}},
		"list-page-zero-served": {run: func(p *pair) {
			p.status(list(10, 0), http.StatusBadRequest, http.StatusOK)
			want := p.f.do(list(10, 1))
			want.obj()["pageNo"] = num(0)
			if got := p.b.do(list(10, 0)); !got.equal(want) {
				p.t.Fatalf("page 0: %s, want %s", got, render(want))
			}
			p.same(list(10, -1))
		}},
		"list-page-negative-served": {run: func(p *pair) {
			p.status(list(10, -1), http.StatusBadRequest, http.StatusOK)
			want := p.f.do(list(10, 1))
			want.obj()["pageNo"] = num(-1)
			if got := p.b.do(list(10, -1)); !got.equal(want) {
				p.t.Fatalf("page -1: %s, want %s", got, render(want))
			}
			p.same(list(10, 0))
		}},
		"list-missing-limit-500": {run: func(p *pair) {
			p.expect(post(spec.PathCampaignList, `{"page":1}`), func(a *answer) {
				errorAnswer(a, http.StatusInternalServerError, spec.MsgInternal)
			})
			p.same(post(spec.PathCampaignList, `{"limit":5}`))
			p.same(list(51, 1))
		}},
		"list-missing-page-500": {run: func(p *pair) {
			p.expect(post(spec.PathCampaignList, `{"limit":5}`), func(a *answer) {
				errorAnswer(a, http.StatusInternalServerError, spec.MsgInternal)
			})
			p.same(post(spec.PathCampaignList, `{"page":1,"limit":"5"}`))
			p.same(list(5, 0))
		}},
		"list-id-duplicate": {run: func(p *pair) {
			for _, page := range []int{1, 2} {
				p.expect(list(10, page), func(a *answer) {
					cs := a.obj()["campaigns"].([]any)
					cs[1].(map[string]any)["Id"] = cs[0].(map[string]any)["Id"]
				})
			}
		}},
	})
}
