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
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/partner-v3/conformance-kit/steps/answer"

	"github.com/partner-v3/conformance-kit/steps/result"

	"github.com/cucumber/godog"

	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/internal/target"
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

// skipsWrite reports whether the run may not send operation name: a
// read-only run sends nothing that writes (spec Operation.Writes). name
// comes from the matrix, which holds its operations to the spec's.
func (e Env) skipsWrite(name string) bool {
	if !e.ReadOnly {
		return false
	}
	op, err := spec.OperationNamed(name)
	if err != nil {
		panic(err)
	}
	return op.Writes
}

// ExampleKey is the key of Env.Examples for a scenario of file uri built
// from the gherkin nodes astNodeIDs (the outline and its row).
func ExampleKey(uri string, astNodeIDs []string) string {
	return uri + "#" + strings.Join(astNodeIDs, ",")
}

// Library is the step library of one run.
type Library struct {
	env Env

	mu        sync.Mutex
	campaigns map[string]*CampaignInfo // by account id
	results   []*result.ScenarioResult
	observer  *answer.Observer // env.Observer
}

// New returns the step library for one run against env's target.
func New(env Env) *Library {
	return &Library{env: env, campaigns: make(map[string]*CampaignInfo), observer: env.Observer}
}

// Results returns the scenarios' results in the order they started.
func (l *Library) Results() []*result.ScenarioResult {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.results)
}

type stateKey struct{}

// InitializeScenario gives the scenario about to run its own state and
// registers every step as a method on it. godog calls it once per scenario.
func (l *Library) InitializeScenario(sc *godog.ScenarioContext) {
	s := &scenario{lib: l, env: &l.env, tags: map[string]bool{}, Overrides: map[string]*string{}}
	sc.Before(func(ctx context.Context, p *godog.Scenario) (context.Context, error) {
		s.Begin(p)
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

// begin records the scenario's identity.
func (s *scenario) Begin(p *godog.Scenario) {
	r := &result.ScenarioResult{Name: p.Name, Feature: p.Uri, Status: result.StatusPassed, Example: s.env.Examples[ExampleKey(p.Uri, p.AstNodeIds)]}
	for _, t := range p.Tags {
		r.Tags = append(r.Tags, t.Name)
		s.tags[t.Name] = true
		if id, ok := strings.CutPrefix(t.Name, "@spec-"); ok && !slices.Contains(r.Sections, id) {
			r.Sections = append(r.Sections, id)
		}
	}
	slices.SortFunc(r.Sections, result.CompareSections)
	s.Result, s.started = r, time.Now()
	s.Email = "conformance-" + s.env.RunID + "-" + RandomHex(5) + "@" + s.env.EmailDomain
	s.phone = RandomPhone()
	s.email2 = "conformance-" + s.env.RunID + "-" + RandomHex(5) + "@" + s.env.EmailDomain
	s.phone2 = RandomPhone()
	for s.phone2 == s.phone {
		s.phone2 = RandomPhone()
	}
	s.Base = s.env.Primary
	s.Client = s.Expect(func() http.Header { return s.headers() })
	s.PrimaryClient = s.Expect(func() http.Header { return CredentialHeaders(s.env.Primary) })
	if s.env.Second.Complete() {
		s.SecondClient = s.Expect(func() http.Header { return CredentialHeaders(s.env.Second) })
	}
	s.lib.mu.Lock()
	s.lib.results = append(s.lib.results, r)
	s.lib.mu.Unlock()
}

// stepDone folds one step's outcome into the scenario's result: the first
// failure wins; a skip counts only while nothing failed.
func (s *scenario) StepDone(text string, status godog.StepResultStatus, err error) {
	s.lib.mu.Lock()
	defer s.lib.mu.Unlock()
	r := s.Result
	if r.Status == result.StatusFailed {
		return
	}
	switch status {
	case godog.StepFailed, godog.StepUndefined, godog.StepPending, godog.StepAmbiguous:
		r.Status, r.Step = result.StatusFailed, text
		var f *Failure
		switch {
		case errors.As(err, &f):
			r.Failure = &f.Finding
		case err != nil:
			// Not a finding of the library's own (a control API error, a
			// table the step cannot read): its text may quote an answer.
			r.Failure = &result.Finding{Level: result.LevelFailure, Sections: r.Sections, Message: s.env.Secrets.String(err.Error())}
		default:
			r.Failure = &result.Finding{Level: result.LevelFailure, Sections: r.Sections, Message: "step " + status.String()}
		}
		r.Message = r.Failure.Message
	case godog.StepSkipped:
		if errors.Is(err, ErrInconclusive) {
			r.Status, r.Step = result.StatusInconclusive, text
			r.Message = strings.TrimPrefix(err.Error(), godog.ErrSkip.Error()+": ")
			return
		}
		if err != nil && errors.Is(err, godog.ErrSkip) && r.Status == result.StatusPassed {
			r.Status, r.Step = result.StatusSkipped, text
			r.Message = s.env.Secrets.String(strings.TrimPrefix(err.Error(), godog.ErrSkip.Error()+": "))
		}
	}
}

// end stamps the scenario's duration.
func (s *scenario) End() {
	s.lib.mu.Lock()
	defer s.lib.mu.Unlock()
	s.Result.Duration = time.Since(s.started)
}

// ScenarioResult is the outcome of one scenario (package result); the
// name stays here for the users of the Go API, whose runs' results it
// types (docs/conformance.md, "Go API").
type ScenarioResult = result.ScenarioResult

// Finding is one failure or warning of a scenario (package result); the
// name stays here for the users of the Go API.
type Finding = result.Finding
