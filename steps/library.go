// Package steps is the conformance suite's step library: the godog step
// definitions (on httpexpect) behind the scenarios of package features, one
// file per spec section, as methods on each scenario's state.
//
// The library judges; it does not run. The runner (package steps/suite)
// builds an Env (the paced, recorded HTTP client, the accounts, the pacer,
// the simulator's control API when there is one) and hands it to New, then
// registers Library.InitializeScenario with godog and reads Results.
//
// Every check is a FAILURE, which fails the scenario, or a WARNING, which
// does not: spec fields missing or of the wrong type fail; fields the spec
// does not list, unusual media-type parameters and headers that contradict
// each other are warnings.
package steps

import (
	"context"
	"regexp"
	"strings"
	"time"

	"github.com/cucumber/godog"

	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/answer"
	"github.com/partner-v3/conformance-kit/steps/internal/target"
	"github.com/partner-v3/conformance-kit/steps/result"
	"github.com/partner-v3/conformance-kit/steps/session"
)

// Env is what the step library needs from the runner: the run's
// resolved target (its client, accounts, pacer, control API, secrets),
// and what the library alone uses.
type Env struct {
	target.Target
	// Examples names outline rows by their values, by ExampleKey.
	Examples map[string]string
	// Observer holds every answer of the run to what the spec says of
	// every response (rule every-answer); its Transport must carry the
	// run's requests (Client's and the preflight's). May be nil: the
	// scenario of rule every-answer then fails, and nothing else is held.
	Observer *answer.Observer
}

// ExampleKey is the key of Env.Examples for a scenario of file uri built
// from the gherkin nodes astNodeIDs (the outline and its row).
func ExampleKey(uri string, astNodeIDs []string) string {
	return uri + "#" + strings.Join(astNodeIDs, ",")
}

// Library is the step library of one run.
type Library struct {
	env Env
	run *session.Run // what the run's scenarios share
}

// New returns the step library for one run against env's target.
func New(env Env) *Library {
	l := &Library{env: env}
	l.run = session.NewRun(&l.env.Target, l.env.Observer)
	return l
}

// Results returns the scenarios' results in the order they started.
func (l *Library) Results() []*result.ScenarioResult { return l.run.Results() }

// FinishObserver reports what the observer found and no scenario has
// reported: the answers that came after the scenario of rule every-answer
// ran (the @rate-limit scenario's, in file order), or all of them when no
// such scenario ran. They fail that scenario's result, or a result of the
// observer's own added for them. After it, the observer holds no more
// answers (the deployment profile's probes come after the verdict and
// never change it). The runner calls it once, after the scenarios, before
// Results.
func (l *Library) FinishObserver() { l.run.FinishObserver() }

// scenario is one scenario's state (session.Scenario: its credentials,
// exchanges, cells) and what its steps remember between them; every step
// is a method on it.
type scenario struct {
	*session.Scenario

	secondLast *session.Exchange
	// proof is the last try of the rate-limit bursts; inconclusive says
	// why it could not decide after every try.
	proof        *rateProof
	inconclusive string
	exhaustedAt  time.Time
	pages        []*session.Exchange
	// walks are an account's campaign list read at every limit of the
	// matrix, by walkRole.
	walks    []*walk
	walkRole string
	// concurrent and independence are the reads of rules list-concurrent
	// and independence (state_rules.go), for their Then steps.
	concurrent   []*concurrentRun
	independence []*independenceRun
}

// opRE matches the three operation names of spec §4.
var opRE = oneOf(spec.Names())

// oneOf is a regular expression group matching exactly one of ss.
func oneOf(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = regexp.QuoteMeta(s)
	}
	return "(" + strings.Join(q, "|") + ")"
}

type stateKey struct{}

// InitializeScenario gives the scenario about to run its own state and
// registers every step as a method on it. godog calls it once per scenario.
func (l *Library) InitializeScenario(sc *godog.ScenarioContext) {
	s := &scenario{Scenario: l.run.NewScenario()}
	sc.Before(func(ctx context.Context, p *godog.Scenario) (context.Context, error) {
		s.Begin(p, l.env.Examples[ExampleKey(p.Uri, p.AstNodeIds)])
		return context.WithValue(ctx, stateKey{}, s), nil
	})
	sc.StepContext().After(func(ctx context.Context, step *godog.Step, status godog.StepResultStatus, err error) (context.Context, error) {
		s.StepDone(step.Text, status, err)
		return ctx, nil
	})
	sc.After(func(ctx context.Context, _ *godog.Scenario, _ error) (context.Context, error) {
		s.End()
		return ctx, nil
	})
	s.registerTransport(sc)
	s.registerAuth(sc)
	s.registerBodies(sc)
	s.registerContact(sc)
	s.registerCampaignList(sc)
	s.registerWalk(sc)
	s.registerCampaignStats(sc)
	s.registerErrors(sc)
	s.registerRateLimit(sc)
	s.registerRealData(sc)
	s.registerState(sc)
	s.registerObserver(sc)
	s.registerConnections(sc)
}

// ScenarioResult is the outcome of one scenario (package result); the
// name stays here for the users of the Go API, whose runs' results it
// types (docs/conformance.md, "Go API").
type ScenarioResult = result.ScenarioResult

// Finding is one failure or warning of a scenario (package result); the
// name stays here for the users of the Go API.
type Finding = result.Finding
