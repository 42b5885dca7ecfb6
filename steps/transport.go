package steps

// Spec §1 (HTTPS, JSON bodies labelled as such, POST only, the base
// address) and §9 (the version is the path segment /v3).

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/cucumber/godog"

	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/session"
)

func (s *scenario) registerTransport(sc *godog.ScenarioContext) {
	sc.Step(`^the base address should use HTTPS$`, s.baseUsesHTTPS)
	sc.Step(`^the exchange should have used HTTPS$`, s.exchangeUsedHTTPS)
	sc.Step(`^the base address should end in "([^"]*)"$`, s.baseEndsIn)
	sc.Step(`^the client sends a (GET|PUT|DELETE|PATCH|HEAD) request to `+opRE+`$`, s.clientSendsMethod)
	sc.Step(`^the client calls `+opRE+` with content type "([^"]*)" and body:$`, s.clientCallsWithContentType)
	sc.Step(`^the client calls `+opRE+` with the raw body:$`, s.clientCallsRaw)
	sc.Step(`^the client calls `+opRE+` with a body of (\d+) KiB$`, s.clientCallsBigBody)
	sc.Step(`^the client calls the unknown operation "([^"]+)"$`, s.clientCallsUnknown)
	sc.Step(`^the response should not be a success$`, s.notSuccess)
	sc.Step(`^the response body should be JSON$`, s.bodyIsJSON)
	sc.Step(`^the response should be labelled as JSON$`, s.labelledJSON)
	sc.Step(`^the response header "([^"]+)" should contain "([^"]*)"$`, s.headerContains)
}

func (s *scenario) baseUsesHTTPS() error {
	if u := s.Target.BaseURL; u.Scheme != "https" {
		return s.Failf("the base address %s uses %q: spec §1 rule 1, all traffic uses HTTPS", u, u.Scheme)
	}
	return nil
}

func (s *scenario) exchangeUsedHTTPS() error {
	if s.Target.InProcess {
		return session.Skipf("in-process run: the requests cross no network, so the transport cannot be checked")
	}
	if s.Last == nil || !s.Last.TLS || !strings.HasPrefix(s.Last.URL, "https://") {
		return s.Failf("the request did not travel over HTTPS (spec §1 rule 1)")
	}
	return nil
}

func (s *scenario) baseEndsIn(suffix string) error {
	u := s.Target.BaseURL
	if p := strings.TrimSuffix(u.Path, "/"); !strings.HasSuffix(p, suffix) {
		return s.Failf("the base address %s has the path %q, which does not end in %s (spec §1 base addresses, §9: the version is the path segment /v3)", u, p, suffix)
	}
	return nil
}

func (s *scenario) clientSendsMethod(ctx context.Context, method, op string) error {
	var body []byte
	if method != http.MethodGet && method != http.MethodHead {
		body = []byte(`{"limit": 1, "page": 1}`)
	}
	return s.Took(s.Send(ctx, s.Client, method, session.Operations[op], spec.ContentType, body), method+" "+op)
}

func (s *scenario) clientCallsWithContentType(ctx context.Context, op, ct string, doc *godog.DocString) error {
	return s.Took(s.Send(ctx, s.Client, http.MethodPost, session.Operations[op], ct, []byte(s.Expand(doc.Content))), op)
}

func (s *scenario) clientCallsRaw(ctx context.Context, op string, doc *godog.DocString) error {
	return s.Call(ctx, op, []byte(doc.Content))
}

func (s *scenario) clientCallsBigBody(ctx context.Context, op string, kib int) error {
	pad := strings.Repeat("x", kib*1024)
	return s.Call(ctx, op, fmt.Appendf(nil, `{"email": %q, "firstName": %q}`, s.Email, pad))
}

func (s *scenario) clientCallsUnknown(ctx context.Context, path string) error {
	return s.Took(s.Send(ctx, s.Client, http.MethodPost, path, spec.ContentType, []byte(`{}`)), "POST "+path)
}

func (s *scenario) notSuccess() error {
	if s.Last.Status/100 == 2 {
		return s.Failf("status %d: the operation is defined for POST only (spec §1 rule 4, §4), yet %s succeeded", s.Last.Status, s.Last.Method)
	}
	return nil
}

func (s *scenario) bodyIsJSON() error {
	if _, err := s.Last.JSON(); err != nil {
		return s.Failf("%v: spec §1 rule 3, every response body is JSON", err)
	}
	return nil
}

// labelledJSON checks the response's media type: application/json or a
// +json type, parameters allowed (spec §1 rule 3, read as: the body is JSON
// and says so). Every answer is inspected for unusual types and
// parameters, which are warnings (session.Scenario.Send).
func (s *scenario) labelledJSON() error {
	if p := session.LabelProblem(s.Last); p != "" {
		return s.Failf("%s", p)
	}
	return nil
}

func (s *scenario) headerContains(name, text string) error {
	if v := s.Last.ResponseHeader.Get(name); !strings.Contains(v, text) {
		return s.Failf("header %s is %q, want it to contain %q", name, v, text)
	}
	return nil
}
