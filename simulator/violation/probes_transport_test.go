package violation_test

import (
	"io"
	"net/http"
	"strings"

	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/simulator/violation"
)

const textPlain = "text/plain; charset=utf-8"

const validContact = `{"email":"probe@example.com","firstName":"Pat"}`

// Spec §1, §4, §9: JSON, methods, paths.
func init() {
	register(map[violation.Name]probe{
		"json-content-type": {run: func(p *pair) {
			p.expect(list(5, 1), func(a *answer) { a.Type = textPlain })
			p.expect(stats(0).with("x-api-key", "nope"), func(a *answer) { a.Type = textPlain })
		}},
		"json-label-errors": {run: func(p *pair) {
			p.expect(list(5, 1).with("x-api-key", "nope"), func(a *answer) { a.Type = textPlain })
			p.expect(contact(`{}`), func(a *answer) { a.Type = textPlain })
			p.same(list(5, 1))
		}},
		"json-label-contact": {run: func(p *pair) {
			p.expect(contact(validContact), func(a *answer) { a.Type = "text/html; charset=utf-8" })
			p.same(contact(`{}`))
			p.same(list(5, 1))
		}},
		"json-errors-plain-text": {run: func(p *pair) {
			bare := func(msg string) func(a *answer) {
				return func(a *answer) { a.Type, a.Doc, a.Raw = textPlain, nil, []byte(msg) }
			}
			p.expect(list(5, 1).with("x-api-secret", "nope"), bare(spec.MsgInvalidCredentials))
			p.expect(contact(validContact).with("x-account-id", "nope"), bare(spec.MsgUnauthorizedAccount))
			p.same(contact(`{}`))
		}},
		"json-trailing-data": {run: func(p *pair) {
			p.expect(stats(p.emailCampaign().ID), func(a *answer) { a.Doc, a.Raw = nil, append(a.Raw, "{}\n"...) })
			p.same(stats(0))
			p.same(list(5, 1))
		}},
		"json-request-charset-refused": {run: func(p *pair) {
			for _, c := range []call{list(5, 1), contact(validContact), stats(p.smsCampaign().ID)} {
				p.expect(c.with("Content-Type", "application/json"), func(a *answer) {
					errorAnswer(a, http.StatusUnsupportedMediaType, "Content-Type must be application/json; charset=utf-8")
				})
				p.same(c)
			}
			// The server's order stands: credentials first.
			p.same(list(5, 1).with("Content-Type", "application/json").with("x-api-key", "nope"))
		}},
		"get-served": {run: func(p *pair) {
			for _, op := range spec.Paths() {
				for _, m := range []string{http.MethodGet, http.MethodPut, http.MethodDelete} {
					p.expect(call{method: m, op: op}, func(a *answer) {
						a.Status, a.Doc = http.StatusOK, map[string]any{"status": "success"}
					})
				}
			}
			p.same(list(5, 1))
		}},
		"op-stats-missing": {run: func(p *pair) {
			p.expect(stats(p.smsCampaign().ID), func(a *answer) { errorAnswer(a, http.StatusNotFound, "Not found") })
			p.same(list(5, 1))
			p.same(contact(validContact))
		}},
		"op-contact-post-refused": {run: func(p *pair) {
			p.expect(contact(validContact), func(a *answer) {
				errorAnswer(a, http.StatusMethodNotAllowed, "Method POST is not allowed")
			})
			p.same(list(5, 1))
		}},
		"version-path-unversioned": {listen: true, run: func(p *pair) {
			for _, op := range spec.Paths() {
				p.expect(post(op, `{}`), func(a *answer) { errorAnswer(a, http.StatusNotFound, "Not found") })
			}
			want := p.f.do(list(5, 1))
			moved := list(5, 1)
			moved.path = "/partner/webhook/campaign/list"
			if got := p.b.do(moved); !got.equal(want) {
				p.t.Fatalf("unversioned path: got %s, want %s", got, want)
			}
			// The simulator reports the base it really serves, and serves it.
			if u := p.b.sim.URL(); !strings.HasSuffix(u, "/partner/webhook") || strings.Contains(u, "/v3") {
				p.t.Fatalf("URL() = %q, want the unversioned base", u)
			}
			a := p.b.sim.Accounts[0]
			req, _ := http.NewRequest(http.MethodPost, p.b.sim.URL()+"/campaign/list", strings.NewReader(`{"limit":5,"page":1}`))
			for k, v := range map[string]string{"Content-Type": "application/json", "x-api-key": a.APIKey, "x-api-secret": a.APISecret, "x-account-id": a.AccountID} {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				p.t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if got := toAnswer(resp.StatusCode, resp.Header, body); got.Status != http.StatusOK || !got.equal(want) {
				p.t.Fatalf("over HTTP at URL(): %s, want %s", got, want)
			}
		}},
	})
}
