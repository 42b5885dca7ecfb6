package violation

import (
	"encoding/json"
	"mime"
	"net/http"
	"regexp"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// Request-side switches: they rewrite a request before the server reads
// it, so that the faithful server serves what the broken rule lets through,
// or answer it themselves.

// credentials are a request's §5 headers.
type credentials struct{ key, secret, account string }

// rewriteCredentials completes or corrects a request's headers when the
// broken rule accepts them: fix returns the headers the server is to see
// and true, or false to leave the request alone. The x-account-id check
// (§5 rule 2) and a missing header are decided in the server's middleware,
// from the headers, so this is where a switch can reach them.
func rewriteCredentials(fix func(c credentials, all []*simulator.Account) (credentials, bool)) func(*exchange) bool {
	return func(x *exchange) bool {
		if x.operation() == "" {
			return false
		}
		all, err := x.l.accounts.Accounts(x.r.Context())
		if err != nil {
			return false
		}
		h := x.r.Header
		c := credentials{h.Get(spec.HeaderAPIKey), h.Get(spec.HeaderAPISecret), h.Get(spec.HeaderAccountID)}
		if fixed, ok := fix(c, all); ok && fixed != c {
			x.setHeader(spec.HeaderAPIKey, fixed.key)
			x.setHeader(spec.HeaderAPISecret, fixed.secret)
			x.setHeader(spec.HeaderAccountID, fixed.account)
		}
		return false
	}
}

// fillMissing is the fix of a switch that serves a request lacking one
// credential (the one slot points at) when the other two are one
// account's: the request is given that account's.
func fillMissing(slot func(*credentials) *string) func(credentials, []*simulator.Account) (credentials, bool) {
	return func(c credentials, all []*simulator.Account) (credentials, bool) {
		if *slot(&c) != "" {
			return c, false
		}
		for _, a := range all {
			own := credentials{a.APIKey, a.APISecret, a.AccountID}
			filled := c
			*slot(&filled) = *slot(&own)
			if filled == own {
				return filled, true
			}
		}
		return c, false
	}
}

// owner returns the account whose key and secret both match, or nil.
func owner(c credentials, all []*simulator.Account) *simulator.Account {
	for _, a := range all {
		if a.APIKey == c.key && a.APISecret == c.secret {
			return a
		}
	}
	return nil
}

// prefix8 is the part of a credential a prefix switch compares.
func prefix8(s string) string { return s[:min(len(s), 8)] }

// sameAccount fills the account id in from the key and secret's owner when
// wrong holds for the id given.
func sameAccount(wrong func(given string, owner *simulator.Account, all []*simulator.Account) bool) func(*exchange) bool {
	return rewriteCredentials(func(c credentials, all []*simulator.Account) (credentials, bool) {
		a := owner(c, all)
		if a == nil || c.account == a.AccountID || !wrong(c.account, a, all) {
			return c, false
		}
		c.account = a.AccountID
		return c, true
	})
}

// answerOn answers every request to op ("*": any operation) whose method
// methodOK holds for.
func answerOn(op string, methodOK func(string) bool, status int, body map[string]any) func(*exchange) bool {
	return func(x *exchange) bool {
		if got := x.operation(); got == "" || op != "*" && got != op || !methodOK(x.r.Method) {
			return false
		}
		x.status = status
		x.header.Set("Content-Type", spec.ContentType)
		x.setDoc(body)
		return true
	}
}

func isPost(m string) bool    { return m == http.MethodPost }
func isNotPost(m string) bool { return m != http.MethodPost }

// rewriteBody edits the fields of a JSON object request to op; fix
// reports whether it changed them.
func rewriteBody(op string, fix func(x *exchange, f map[string]json.RawMessage) bool) func(*exchange) bool {
	return func(x *exchange) bool {
		if x.operation() == op && x.req != nil && fix(x, x.req) {
			x.setRequest()
		}
		return false
	}
}

var (
	dmyRE = regexp.MustCompile(`^"(\d{2})/(\d{2})/(\d{4})"$`)
	ymdRE = regexp.MustCompile(`^"\d{4}-\d{2}-\d{2}"$`)
	idRE  = regexp.MustCompile(`^"(-?\d+)"$`)
)

// placeholderPhone stands in for a missing phoneNo so the server validates
// the rest of a contact; the contact store takes it out again.
const placeholderPhone = `"+10000000000"`

// charsetless reports whether a Content-Type is application/json without
// parameters.
func charsetless(ct string) bool {
	mt, params, err := mime.ParseMediaType(ct)
	return err == nil && mt == spec.ContentType && len(params) == 0
}

// refusedLabel is a Content-Type the server refuses, put in for one it
// would accept.
const refusedLabel = "application/x-refused"
