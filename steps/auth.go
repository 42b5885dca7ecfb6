package steps

// Spec §5: every request carries x-api-key, x-api-secret and x-account-id;
// a wrong key or secret is answered 401 "Invalid API credentials" (rule 1),
// an account identifier that does not match 403 "Unauthorized account
// access" (rule 2).

import (
	"github.com/cucumber/godog"
)

func (s *scenario) registerAuth(sc *godog.ScenarioContext) {
	sc.Step(`^the client uses the (primary|second) account's credentials$`, s.clientUsesCredentials)
	sc.Step(`^the "(x-api-key|x-api-secret|x-account-id)" header is (wrong|missing|empty)$`, s.headerIs)
	sc.Step(`^the "(x-api-key|x-api-secret|x-account-id)" header differs from the right one in its last character$`, s.headerDiffersAtEnd)
	sc.Step(`^the "(x-api-key|x-api-secret|x-account-id)" header holds the second account's value$`, s.headerHoldsSecond)
	sc.Step(`^a second account is configured$`, s.secondAccountConfigured)
}

func (s *scenario) clientUsesCredentials(which string) error {
	if which == "second" {
		if !s.env.Second.Complete() {
			return skipf("no second account is configured")
		}
		// The scenario's client builds its headers from base.
		s.base = s.env.Second
		return nil
	}
	s.base = s.env.Primary
	return nil
}

func (s *scenario) headerIs(header, how string) error {
	switch how {
	case "missing":
		s.overrides[header] = nil
	case "empty":
		v := ""
		s.overrides[header] = &v
	case "wrong":
		// About the length of the real value, so only its content is wrong.
		cur := credentialHeaders(s.base).Get(header)
		v := "wrong-" + randomHex(max(4, len(cur)/2))
		s.overrides[header] = &v
	}
	return nil
}

// headerDiffersAtEnd keeps all of the right value but its last character,
// so that a service comparing only a prefix is caught.
func (s *scenario) headerDiffersAtEnd(header string) error {
	cur := []byte(credentialHeaders(s.base).Get(header))
	if len(cur) == 0 {
		return skipf("the %s of the account is empty", header)
	}
	last := &cur[len(cur)-1]
	switch {
	case *last == 'z':
		*last = 'y'
	case *last == 'Z':
		*last = 'Y'
	case *last == '9':
		*last = '8'
	case *last >= 0x21 && *last < 0x7e:
		*last++
	default:
		*last = 'x'
	}
	v := string(cur)
	s.overrides[header] = &v
	return nil
}

func (s *scenario) headerHoldsSecond(header string) error {
	if !s.env.Second.Complete() {
		return skipf("no second account is configured")
	}
	v := credentialHeaders(s.env.Second).Get(header)
	s.overrides[header] = &v
	return nil
}

func (s *scenario) secondAccountConfigured() error {
	if !s.env.Second.Complete() {
		return skipf("no second account is configured (--second-api-key, --second-api-secret, --second-account-id)")
	}
	return nil
}
