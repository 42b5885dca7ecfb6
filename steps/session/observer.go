package session

// The whole-run observer's side in a run (rule every-answer): what
// answer.Observer found and no scenario has reported goes into the results.

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/partner-v3/conformance-kit/steps/answer"
	"github.com/partner-v3/conformance-kit/steps/matrix"
	"github.com/partner-v3/conformance-kit/steps/result"
)

// unreported returns the observer's failures not yet reported, leaving out
// those a scenario already reports (answer.Observer.Unreported). Warnings
// go to the scenario that met them (or the observer's own, for the
// preflight's).
func (r *Run) unreported(own *result.ScenarioResult, last bool) []answer.Observation {
	if r.observer == nil {
		return nil
	}
	warnings, fails := r.observer.Unreported(last)
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ob := range warnings {
		if res := cmp.Or(ob.Sender, own); res != nil {
			addWarning(res, result.Finding{Level: result.LevelWarning, Sections: ob.Sections, Message: fmt.Sprintf("%s: %s", ob.Cell, ob.Problem), Exchange: ob.Exchange})
		}
	}
	return fails
}

// addWarning adds a warning to a result, once per message. The caller
// holds the run's lock.
func addWarning(r *result.ScenarioResult, f result.Finding) {
	for i := range r.Warnings {
		if w := &r.Warnings[i]; w.Message == f.Message {
			w.Count++
			return
		}
	}
	f.Count = 1
	r.Warnings = append(r.Warnings, f)
}

// FinishObserver reports what the observer found and no scenario has
// reported: the answers that came after the scenario of rule every-answer
// ran (the @rate-limit scenario's, in file order), or all of them when no
// such scenario ran. They fail that scenario's result, or a result of the
// observer's own added for them. After it, the observer holds no more
// answers (the deployment profile's probes come after the verdict and
// never change it). The runner calls it once, after the scenarios, before
// Results.
func (r *Run) FinishObserver() {
	own := r.observerResult()
	fails := r.unreported(own, true)
	if len(fails) == 0 {
		return
	}
	f := answer.Failure(fails, r.target.Secrets)
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case own == nil:
		res := &result.ScenarioResult{Name: "Every answer of the run holds to what the spec says of every response (the whole-run observer)",
			Feature: "(the whole run)", Tags: []string{"@normative", matrix.Tag(answer.EveryAnswer)}, Sections: slices.Clone(matrix.AnswerSections),
			Status: result.StatusFailed, Step: "the whole-run observer", Failure: f, Message: f.Message}
		r.results = append(r.results, res)
	case own.Status == result.StatusFailed && own.Failure != nil:
		// Its step already failed on earlier answers: the later ones join.
		own.Failure.Message += "\nafter the scenario ran, " + f.Message
		own.Message = own.Failure.Message
		for _, s := range f.Sections {
			if !slices.Contains(own.Failure.Sections, s) {
				own.Failure.Sections = append(own.Failure.Sections, s)
			}
		}
		slices.SortFunc(own.Failure.Sections, result.CompareSections)
	default:
		own.Status, own.Step, own.Failure, own.Message = result.StatusFailed, "the whole-run observer, after the scenario ran", f, f.Message
	}
}

// observerResult is the result of the last scenario of rule every-answer
// that ran; nil when none did.
func (r *Run) observerResult() *result.ScenarioResult {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, res := range slices.Backward(r.results) {
		if slices.Contains(res.Tags, matrix.Tag(answer.EveryAnswer)) {
			return res
		}
	}
	return nil
}

// ObservedFailure fails with every answer of the run so far that broke
// what the spec says of every response, unless the scenario that drew it
// already failed on it; nil when there is none. The observer's warnings
// go to the scenarios that met them (this one for its own). It is an
// error when the run has no observer.
func (s *Scenario) ObservedFailure() error {
	if s.run.observer == nil {
		return fmt.Errorf("the run has no observer of its answers (steps.Env.Observer)")
	}
	fails := s.run.unreported(s.Result, false)
	if len(fails) == 0 {
		return nil
	}
	f := answer.Failure(fails, s.Target.Secrets)
	return &failure{*f}
}
