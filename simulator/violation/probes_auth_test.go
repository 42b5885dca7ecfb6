package violation_test

import (
	"net/http"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/simulator/violation"
)

// page is the Campaign List request the authentication probes send.
func page() call { return list(5, 1) }

// served: the switched simulator serves c (a variant of page()) as the
// primary account's own request; the faithful one refuses it.
func (p *pair) served(c call, refused int) {
	p.t.Helper()
	_, b := p.status(c, refused, http.StatusOK)
	if want := p.f.do(page()); !b.equal(want) {
		p.t.Fatalf("served, but not as the primary account: %s, want %s", b, want)
	}
}

// refused: both simulators refuse c alike.
func (p *pair) refused(c call, status int) {
	p.t.Helper()
	if a := p.same(c); a.Status != status {
		p.t.Fatalf("status %d, want %d", a.Status, status)
	}
}

func (p *pair) accounts() (a, b *simulator.Account) {
	return p.f.sim.Accounts[0], p.f.sim.Accounts[1]
}

// Spec §5 and its §7 errors.
func init() {
	register(map[violation.Name]probe{
		"auth-secret-ignored": {run: func(p *pair) {
			p.served(page().with("x-api-secret", "wrong-secret"), http.StatusUnauthorized)
			p.served(page().with("x-api-secret", "-"), http.StatusUnauthorized)
			p.refused(page().with("x-api-key", "wrong-key"), http.StatusUnauthorized)
		}},
		"auth-key-ignored": {run: func(p *pair) {
			p.served(page().with("x-api-key", "wrong-key"), http.StatusUnauthorized)
			p.refused(page().with("x-api-secret", "wrong-secret"), http.StatusUnauthorized)
		}},
		"auth-secret-any-account": {run: func(p *pair) {
			_, b := p.accounts()
			p.served(page().with("x-api-secret", b.APISecret), http.StatusUnauthorized)
			p.refused(page().with("x-api-secret", "wrong-secret"), http.StatusUnauthorized)
		}},
		"auth-secret-prefix": {run: func(p *pair) {
			a, _ := p.accounts()
			p.served(page().with("x-api-secret", a.APISecret[:8]+"-not-the-rest"), http.StatusUnauthorized)
			p.refused(page().with("x-api-secret", "x"+a.APISecret[1:]), http.StatusUnauthorized)
		}},
		"auth-key-prefix": {run: func(p *pair) {
			a, _ := p.accounts()
			p.served(page().with("x-api-key", a.APIKey[:8]+"-not-the-rest"), http.StatusUnauthorized)
			p.refused(page().with("x-api-key", "x"+a.APIKey[1:]), http.StatusUnauthorized)
		}},
		"auth-missing-key-accepted": {run: func(p *pair) {
			_, b := p.accounts()
			p.served(page().with("x-api-key", "-"), http.StatusUnauthorized)
			p.refused(page().with("x-api-key", "-").with("x-account-id", b.AccountID), http.StatusUnauthorized)
			p.refused(page().with("x-api-key", "wrong-key"), http.StatusUnauthorized)
		}},
		"auth-missing-secret-accepted": {run: func(p *pair) {
			_, b := p.accounts()
			p.served(page().with("x-api-secret", "-"), http.StatusUnauthorized)
			p.refused(page().with("x-api-secret", "-").with("x-account-id", b.AccountID), http.StatusUnauthorized)
			p.refused(page().with("x-api-secret", "wrong-secret"), http.StatusUnauthorized)
		}},
		"auth-account-ignored": {run: func(p *pair) {
			p.served(page().with("x-account-id", "acc_unknown"), http.StatusForbidden)
			p.served(page().with("x-account-id", "-"), http.StatusForbidden)
			p.refused(page().with("x-api-secret", "wrong-secret"), http.StatusUnauthorized)
		}},
		"auth-missing-account-accepted": {run: func(p *pair) {
			_, b := p.accounts()
			p.served(page().with("x-account-id", "-"), http.StatusForbidden)
			p.refused(page().with("x-account-id", b.AccountID), http.StatusForbidden)
			p.refused(page().with("x-account-id", "acc_unknown"), http.StatusForbidden)
		}},
		"auth-account-any-known": {run: func(p *pair) {
			_, b := p.accounts()
			p.served(page().with("x-account-id", b.AccountID), http.StatusForbidden)
			p.refused(page().with("x-account-id", "acc_unknown"), http.StatusForbidden)
			p.refused(page().with("x-account-id", "-"), http.StatusForbidden)
		}},
		"auth-account-prefix": {run: func(p *pair) {
			a, _ := p.accounts()
			p.served(page().with("x-account-id", a.AccountID[:8]+"not-the-rest"), http.StatusForbidden)
			p.refused(page().with("x-account-id", "x"+a.AccountID[1:]), http.StatusForbidden)
		}},
		"auth-401-as-403": {run: func(p *pair) {
			p.expect(page().with("x-api-key", "wrong-key"), func(a *answer) { a.Status = http.StatusForbidden })
			p.refused(page().with("x-account-id", "acc_unknown"), http.StatusForbidden)
		}},
		"auth-403-as-401": {run: func(p *pair) {
			p.expect(page().with("x-account-id", "acc_unknown"), func(a *answer) { a.Status = http.StatusUnauthorized })
			p.refused(page().with("x-api-key", "wrong-key"), http.StatusUnauthorized)
		}},
		"auth-401-as-500": {run: func(p *pair) {
			for _, op := range spec.Paths() {
				p.expect(post(op, `{}`).with("x-api-secret", "wrong-secret"), func(a *answer) {
					errorAnswer(a, http.StatusInternalServerError, spec.MsgInternal)
				})
			}
			p.refused(page().with("x-account-id", "acc_unknown"), http.StatusForbidden)
		}},
		"error-403-as-404": {run: func(p *pair) {
			for _, op := range spec.Paths() {
				p.expect(post(op, `{}`).with("x-account-id", "acc_unknown"), func(a *answer) {
					errorAnswer(a, http.StatusNotFound, "Account not found")
				})
			}
			p.refused(page().with("x-api-key", "wrong-key"), http.StatusUnauthorized)
		}},
		"auth-401-message": {run: func(p *pair) {
			for _, op := range spec.Paths() {
				p.expect(post(op, `{}`).with("x-api-key", "wrong-key"), func(a *answer) { a.obj()["error"] = "Invalid credentials" })
			}
			p.refused(page().with("x-account-id", "acc_unknown"), http.StatusForbidden)
		}},
		"auth-403-message": {run: func(p *pair) {
			for _, op := range spec.Paths() {
				p.expect(post(op, `{}`).with("x-account-id", "acc_unknown"), func(a *answer) { a.obj()["error"] = "Account access denied" })
			}
			p.refused(page().with("x-api-key", "wrong-key"), http.StatusUnauthorized)
		}},
		"auth-401-message-list": {run: func(p *pair) {
			p.expect(page().with("x-api-key", "wrong-key"), func(a *answer) { a.obj()["error"] = "Invalid credentials supplied" })
			p.refused(contact(validContact).with("x-api-key", "wrong-key"), http.StatusUnauthorized)
			p.refused(stats(1).with("x-api-key", "wrong-key"), http.StatusUnauthorized)
		}},
		"auth-403-message-stats": {run: func(p *pair) {
			p.expect(stats(1).with("x-account-id", "acc_unknown"), func(a *answer) {
				a.obj()["error"] = "Access to this account is not allowed"
			})
			p.refused(page().with("x-account-id", "acc_unknown"), http.StatusForbidden)
			p.refused(contact(validContact).with("x-account-id", "acc_unknown"), http.StatusForbidden)
		}},
	})
}
