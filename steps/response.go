package steps

// Checks of an answer that every section's scenarios share: status, the
// spec's messages (§4, §7), and the fields of a JSON body (§2).

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strings"

	"github.com/cucumber/godog"

	"github.com/partner-v3/conformance-kit/steps/answer"
	"github.com/partner-v3/conformance-kit/steps/session"
)

func (s *scenario) registerBodies(sc *godog.ScenarioContext) {
	s.registerRequests(sc)
	sc.Step(`^the response status should be (\d+)$`, s.statusShouldBe)
	sc.Step(`^the response should be (\d+) with the message "([^"]*)"$`, s.statusWithMessage)
	sc.Step(`^the response should be (\d+) with an "error" field mentioning "([^"]*)"$`, s.statusWithErrorField)
	sc.Step(`^the response should not be a server error$`, s.notServerError)
	sc.Step(`^the response body should be a JSON object with these fields:$`, s.bodyHasFields)
	sc.Step(`^the response body should be a JSON object with exactly these fields:$`, s.bodyHasExactly)
	sc.Step(`^the "([^"]+)" object should have these fields:$`, s.objectHasFields)
	sc.Step(`^the response field "([^"]+)" should equal the response field "([^"]+)"$`, s.fieldEqualsField)
}

func (s *scenario) statusShouldBe(want int) error {
	if s.Last == nil {
		return s.Failf("no request was sent")
	}
	if s.Last.Status == want {
		return nil
	}
	if want == http.StatusOK && s.Invented {
		return session.Skipf("the account has no campaigns, so no real campaignId could be asked for")
	}
	return s.Failf("status %d, want %d", s.Last.Status, want)
}

// statusWithMessage checks the status and that the body, JSON, carries the
// spec's message exactly as the spec writes it (§4, §7: the messages are
// contract; case counts).
func (s *scenario) statusWithMessage(want int, msg string) error {
	if err := s.statusShouldBe(want); err != nil {
		return err
	}
	if !session.IsJSON(s.Last) {
		return s.Failf("the body is not JSON: every response body is JSON (spec §1 rule 3)")
	}
	if !answer.Mentions(s.Last.ResponseBody, msg) {
		return s.Failf("the body does not carry the message %q as the spec writes it", msg)
	}
	return nil
}

func (s *scenario) statusWithErrorField(want int, text string) error {
	if err := s.statusShouldBe(want); err != nil {
		return err
	}
	m, err := s.Last.Object()
	if err != nil {
		return s.Failf("%v", err)
	}
	msg, ok := m["error"].(string)
	if !ok {
		return s.Failf(`the body has no string field "error"`)
	}
	if !strings.Contains(strings.ToLower(msg), strings.ToLower(text)) {
		return s.Failf("the error %q does not mention %q", msg, text)
	}
	return nil
}

func (s *scenario) notServerError() error {
	if s.Last.Status >= 500 {
		return s.Failf("status %d: a client's mistake is answered as a server failure", s.Last.Status)
	}
	return nil
}

// checkFields checks obj against the table, names it what in messages, and
// fails on a spec field missing or of the wrong type. Fields the table does
// not list fail when exact (the simulator's own choices), and are a warning
// otherwise: the spec lists fields but never forbids others.
func (s *scenario) checkFields(x *session.Exchange, what string, obj map[string]any, rows []answer.FieldRow, exact bool) error {
	problems, extra := answer.CheckObject(obj, rows)
	if exact {
		for _, k := range extra {
			problems = append(problems, fmt.Sprintf("field %q is not in the spec", k))
		}
	} else if len(extra) > 0 {
		s.Warn(nil, x, "%s carries fields the spec does not list: %s", what, answer.Quoted(extra))
	}
	if len(problems) > 0 {
		return s.FailOn(x, "%s does not have the spec's fields:\n  %s", what, strings.Join(problems, "\n  "))
	}
	return nil
}

// fieldsOfBody are the step's table of fields and the last answer's body,
// which must be a JSON object (else the step fails).
func (s *scenario) fieldsOfBody(t *godog.Table) ([]answer.FieldRow, map[string]any, error) {
	rows, err := tableRows(t)
	if err != nil {
		return nil, nil, err
	}
	m, err := s.Last.Object()
	if err != nil {
		return nil, nil, s.Failf("%v", err)
	}
	return rows, m, nil
}

func (s *scenario) bodyFields(t *godog.Table, exact bool) error {
	rows, m, err := s.fieldsOfBody(t)
	if err != nil {
		return err
	}
	return s.checkFields(s.Last, "the body", m, rows, exact)
}

func (s *scenario) bodyHasFields(t *godog.Table) error  { return s.bodyFields(t, false) }
func (s *scenario) bodyHasExactly(t *godog.Table) error { return s.bodyFields(t, true) }

func (s *scenario) objectHasFields(name string, t *godog.Table) error {
	rows, m, err := s.fieldsOfBody(t)
	if err != nil {
		return err
	}
	o, ok := m[name].(map[string]any)
	if !ok {
		return s.Failf("%q is %s, want an object", name, answer.KindOf(m[name]))
	}
	return s.checkFields(s.Last, fmt.Sprintf("%q", name), o, rows, false)
}

// field returns a top-level field of the last JSON object answer.
func (s *scenario) field(name string) (any, error) {
	m, err := s.Last.Object()
	if err != nil {
		return nil, s.Failf("%v", err)
	}
	v, ok := m[name]
	if !ok {
		return nil, s.Failf("the body has no field %q", name)
	}
	return v, nil
}

func (s *scenario) fieldEqualsField(a, b string) error {
	va, err := s.field(a)
	if err != nil {
		return err
	}
	vb, err := s.field(b)
	if err != nil {
		return err
	}
	if !reflect.DeepEqual(va, vb) {
		return s.Failf("%q is %v but %q is %v", a, answer.JSONText(va), b, answer.JSONText(vb))
	}
	return nil
}

// ---- requests every section sends ----

func (s *scenario) registerRequests(sc *godog.ScenarioContext) {
	sc.Step(`^the client calls `+opRE+` with:$`, s.clientCallsWith)
	sc.Step(`^the client calls `+opRE+` with a valid request$`, s.clientCallsValid)
}

func (s *scenario) clientCallsWith(ctx context.Context, op string, doc *godog.DocString) error {
	return s.Call(ctx, op, []byte(s.Expand(doc.Content)))
}

func (s *scenario) clientCallsValid(ctx context.Context, op string) error {
	body, err := s.ValidBody(ctx, op)
	if err != nil {
		return err
	}
	return s.Call(ctx, op, body)
}
