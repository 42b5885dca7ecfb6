package steps

// Spec §8: 100 requests per minute per account, all operations together
// (one shared counter per account); exceeding it yields 429, whose body is
// exactly {"error": "Rate limit exceeded. Try again later."} (§7). Rules
// rate-shared, rate-per-account and rate-frees of the matrix; rate-holds
// and rate-concurrent (§8 over time and under concurrency) are in
// rate_time.go.

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/cucumber/godog"

	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/answer"
	"github.com/partner-v3/conformance-kit/steps/matrix"
	"github.com/partner-v3/conformance-kit/steps/session"
)

// MaxBurstAttempts bounds how often a rate-limit proof that could not
// decide (its requests crossed a window boundary, or took longer than a
// window) is tried again after a quiet window.
const MaxBurstAttempts = 3

// ErrInconclusive marks a step that could not decide a normative rule, even
// after MaxBurstAttempts tries: the run is incomplete, never a pass.
var ErrInconclusive = session.ErrInconclusive

func (s *scenario) registerRateLimit(sc *godog.ScenarioContext) {
	sc.Step(`^each account starts with an unused rate-limit budget$`, s.accountsStartFresh)
	sc.Step(`^each account sends as many requests as the limit allows, Add Contact, Campaign List and Campaign Stats in turn, the second account its last (\d+) and (\d+) more in flight at the same time, then one more of each operation, and late in the window one more of each operation on the run's connection and on a new connection$`, s.sendsBurstsAndLate)
	sc.Step(`^each account fills the rest of its budget, Add Contact, Campaign List and Campaign Stats in turn, its last requests in flight at the same time, then sends one more of each operation, another one first$`, s.refillsBurstsTogether)
	s.registerRateTime(sc)
	sc.Step(`^all of them but the last of each operation should have succeeded$`, s.burstsSucceeded)
	sc.Step(`^the last Add Contact, Campaign List and Campaign Stats request of each account should be refused with status 429 and exactly this JSON body:$`, s.nextRefused)
	sc.Step(`^each account's Add Contact, Campaign List and Campaign Stats should be served again$`, s.servedAgain)
	sc.Step(`^the primary account has used up its rate-limit budget$`, s.usedUpBudget)
	sc.Step(`^a full rate-limit window passes$`, s.fullWindowPasses)
	sc.Step(`^the response should carry a "Retry-After" header of whole seconds$`, s.retryAfterSeconds)
}

// rateRoles are the accounts a rate-limit scenario spends: both when the run
// has two.
func (s *scenario) rateRoles() []string {
	if s.Target.Second.Complete() {
		return matrix.BothAccounts
	}
	return []string{matrix.Primary}
}

// rateOps are the operations a burst sends: all three, or the two that
// create nothing in a read-only run.
func (s *scenario) rateOps() []string {
	if s.Target.ReadOnly {
		return []string{spec.OpCampaignList, spec.OpCampaignStats}
	}
	return spec.Names()
}

func (s *scenario) accountsStartFresh(ctx context.Context) error {
	// The bursts ask for statistics: learn each account's campaigns first.
	for _, role := range s.rateRoles() {
		acct, _ := s.Account(role)
		if _, err := s.Campaigns(ctx, acct); err != nil {
			return err
		}
	}
	return s.freshBudgets(ctx)
}

// freshBudgets empties every account's counter (the simulator's control
// API) or waits until none of them sent a request for a window, and for a
// clock-aligned window with room for every burst; then until the burst can
// start just after a boundary of the target's clock (rate-holds: the late
// probes must tell a window shorter than the run's from every window §8
// allows), or, with the control API, moves each account's clock there.
func (s *scenario) freshBudgets(ctx context.Context) error {
	roles := s.rateRoles()
	n := len(roles) * (s.Target.Pacer.Limit() + len(s.rateOps()))
	waited := false
	for _, role := range roles {
		acct, _ := s.Account(role)
		reset, err := s.Target.Pacer.ResetBudget(ctx, acct.AccountID)
		if err != nil {
			return err
		}
		if reset {
			if err := s.alignAccountClock(ctx, acct.AccountID); err != nil {
				return err
			}
			continue
		}
		if err := s.Target.Pacer.WaitFresh(ctx, acct.AccountID, n); err != nil {
			return err
		}
		waited = true
	}
	if waited {
		return s.Target.Pacer.WaitBoundary(ctx, burstLead(s.Target.Pacer.Window(), s.Target.Pacer.LateGuard()))
	}
	return nil
}

// rateProof is one try of the bursts: per account, the requests the limit
// allows, then one more of each operation.
type rateProof struct {
	within map[string][]*session.Exchange // by role: the limit's requests
	beyond map[string][]*session.Exchange // by role: one more of each operation
	first  *session.Exchange
	last   *session.Exchange
	// together are, by role, the requests sent in flight at the same time
	// at the end of the budget (rate-concurrent); room is how many of them
	// the budget holds (the others are beyond it).
	together map[string][]*session.Exchange
	room     map[string]int
	// loose are, by role, requests the budget may or may not hold: the
	// late probes of the window before count under a sliding window that
	// counts refused requests, and under no other (rate_time.go).
	loose map[string][]*session.Exchange
	// late are the probes late in the window (rate-holds), sent before
	// lateDeadline (zero with the control API); lateMissed says why they
	// could not all be sent in time (the try decides nothing), lateSkipped
	// why none can be placed on this target (the cells are unverified).
	late                    []session.CellExchange
	lateDeadline            time.Time
	lateMissed, lateSkipped string
}

// burstPlan is what one try of the bursts sends, per account.
type burstPlan struct {
	fill     int // requests within the budget, in turn
	first    int // the operation the requests beyond it start with
	together int // requests within the budget sent at the same time, after fill
	// cross is, for the second of two accounts, how many of its fill
	// requests are instead sent at the same time as crossExtra more: the
	// limit is crossed by requests in flight together (a counter that
	// decides on a count read before the others were counted lets some
	// of the extra through).
	cross, crossExtra int
	// stride shifts the operation the requests beyond the limit start
	// with from one account to the next.
	stride int
	loose  int  // requests the budget may or may not hold, after those
	late   bool // probes late in the window, after the requests beyond
}

// tryBursts sends plan's requests per account, and tries again after a
// fresh window (then with a whole budget) while the try cannot decide.
func (s *scenario) tryBursts(ctx context.Context, plan burstPlan) error {
	for attempt := 1; ; attempt++ {
		p, err := s.burst(ctx, plan)
		if err != nil {
			return err
		}
		if plan.late {
			if err := s.sendLate(ctx, p); err != nil {
				return err
			}
		}
		s.proof = p
		why := s.undecided(p)
		if why == "" && plan.late {
			why = s.lateUndecided(p)
		}
		if why == "" {
			return nil
		}
		if attempt == MaxBurstAttempts {
			s.inconclusive = fmt.Sprintf("after %d tries: %s", attempt, why)
			return nil
		}
		s.Target.Pacer.Logf("rate-limit proof undecided (%s): trying again after a fresh window (%d of %d)", why, attempt+1, MaxBurstAttempts)
		s.NoteRetry()
		if err := s.freshBudgets(ctx); err != nil {
			return err
		}
		// A fresh window: the whole budget, and nothing of the window
		// before that it may or may not hold.
		plan.fill, plan.loose = s.Target.Pacer.Limit()-plan.together, 0
	}
}

func (s *scenario) burst(ctx context.Context, plan burstPlan) (*rateProof, error) {
	p := &rateProof{within: map[string][]*session.Exchange{}, beyond: map[string][]*session.Exchange{},
		together: map[string][]*session.Exchange{}, room: map[string]int{}, loose: map[string][]*session.Exchange{}}
	fill, first := plan.fill, plan.first
	stride := max(1, plan.stride)
	crossRole := ""
	if plan.cross > 0 && len(s.rateRoles()) > 1 {
		crossRole = s.rateRoles()[1]
	}
	ops, roles := s.rateOps(), s.rateRoles()
	send := func(role, op string) (*session.Exchange, error) {
		body, err := s.ValidBodyFor(session.WithPrep(ctx), role, op)
		if err != nil {
			return nil, err
		}
		x, err := s.SendAs(ctx, role, op, body)
		if err != nil {
			return nil, err
		}
		s.Last = x
		if p.first == nil {
			p.first = x
		}
		p.last = x
		return x, nil
	}
	for i := range fill {
		for r, role := range roles {
			if role == crossRole && i >= fill-plan.cross {
				continue // sent at the same time, below
			}
			// Each account starts at another operation, so that the
			// request at every position is of each operation somewhere.
			x, err := send(role, ops[(i+r)%len(ops)])
			if err != nil {
				return nil, err
			}
			p.within[role] = append(p.within[role], x)
		}
	}
	if plan.together > 0 {
		if err := s.sendTogether(ctx, p, roles, fill, plan.together, plan.together); err != nil {
			return nil, err
		}
	}
	if crossRole != "" {
		if err := s.sendTogether(ctx, p, []string{crossRole}, fill-plan.cross, plan.cross+plan.crossExtra, plan.cross); err != nil {
			return nil, err
		}
	}
	for i := range plan.loose {
		for r, role := range roles {
			x, err := send(role, ops[(fill+plan.together+i+r)%len(ops)])
			if err != nil {
				return nil, err
			}
			p.loose[role] = append(p.loose[role], x)
		}
	}
	for r, role := range roles {
		for k := range ops {
			x, err := send(role, ops[(first+r*stride+k)%len(ops)])
			if err != nil {
				return nil, err
			}
			p.beyond[role] = append(p.beyond[role], x)
		}
	}
	s.exhaustedAt = p.last.Sent
	return p, nil
}

// undecided says why a try proves nothing: a request beyond the limit was
// let through while the try crossed a clock-aligned window boundary (by the
// server's Date headers) or took longer than a window. Empty means the try
// decides.
func (s *scenario) undecided(p *rateProof) string {
	admitted := false
	for _, xs := range p.beyond {
		for _, x := range xs {
			admitted = admitted || x.Status/100 == 2
		}
	}
	for role, xs := range p.together {
		served := 0
		for _, x := range xs {
			if x.Status/100 == 2 {
				served++
			}
		}
		admitted = admitted || served > p.room[role]
	}
	if !admitted {
		return ""
	}
	w := s.Target.Pacer.Window()
	if took := p.last.Received.Sub(p.first.Sent); took >= w {
		return fmt.Sprintf("the requests took %s, longer than the %s window", took.Round(time.Millisecond), w)
	}
	if same, known := s.Target.Pacer.SameServerWindow(p.first.Sent, p.last.Received, p.first.ResponseHeader.Get("Date"), p.last.ResponseHeader.Get("Date")); known && !same {
		return fmt.Sprintf("by the server's clock (Date headers %s to %s) the requests may have crossed the boundary of a clock-aligned window", p.first.ResponseHeader.Get("Date"), p.last.ResponseHeader.Get("Date"))
	}
	return ""
}

// decided fails the step when the proof could not decide after every try.
func (s *scenario) decided() error {
	if s.proof == nil {
		return fmt.Errorf("no burst was sent before this step")
	}
	if s.inconclusive != "" {
		// A skip to godog (the scenario neither passed nor failed), and an
		// inconclusive scenario to the suite's verdict.
		return fmt.Errorf("%w: %w: the rate limit of §8 could not be verified: %s", godog.ErrSkip, ErrInconclusive, s.inconclusive)
	}
	return nil
}

// decidedWant is decided, then the scenario's expected body in doc: how
// every step that judges the bursts' answers against §7's 429 begins.
func (s *scenario) decidedWant(doc *godog.DocString) (any, error) {
	if err := s.decided(); err != nil {
		return nil, err
	}
	want, err := answer.DecodeJSON([]byte(doc.Content))
	if err != nil {
		return nil, fmt.Errorf("the scenario's expected body: %w", err)
	}
	return want, nil
}

func (s *scenario) burstsSucceeded() error {
	if err := s.decided(); err != nil {
		return err
	}
	c := s.Cells("rate-shared")
	for _, role := range s.rateRoles() {
		for i, x := range s.proof.within[role] {
			if x.Status == http.StatusOK {
				continue
			}
			op := session.OpOf(x)
			cell := session.CellOf("rate-shared", op, role, matrix.CondCountedOnce)
			why := "an operation counted more than once fills the counter early"
			if role == matrix.Second {
				cell = session.CellOf("rate-per-account", op, role, "served while the other account is refused")
				why = "a counter shared by the accounts fills at the limit of both together"
			}
			c.Fail(cell, x, "request %d of %d of the window was answered %d, want 200: %d requests per %s per account are allowed (spec §8); %s",
				i+1, len(s.proof.within[role]), x.Status, s.Target.Pacer.Limit(), s.Target.Pacer.Window(), why)
			break
		}
	}
	return c.Err()
}

func (s *scenario) nextRefused(doc *godog.DocString) error {
	want, err := s.decidedWant(doc)
	if err != nil {
		return err
	}
	c := s.Cells("rate-shared")
	for _, role := range s.rateRoles() {
		for _, x := range s.proof.beyond[role] {
			op := session.OpOf(x)
			if x.Status != http.StatusTooManyRequests {
				cond := matrix.CondRefused
				if x.Status/100 == 2 {
					// Room left in the counter: some operation's requests
					// were not counted, or the limit is above 100.
					cond = matrix.CondCounted
				}
				also := ""
				if len(s.proof.together[role]) > 0 && cond == matrix.CondCounted {
					also = fmt.Sprintf("; %d of the account's requests before it were in flight at the same time: a counter read and written in two steps counts overlapping requests as fewer (rule rate-concurrent)", len(s.proof.together[role]))
				}
				c.Fail(session.CellOf("rate-shared", op, role, cond), x, "status %d, want 429: request %d of the window was not refused; the limit is %d per %s per account, all operations together (spec §8)%s",
					x.Status, s.Target.Pacer.Limit()+1, s.Target.Pacer.Limit(), s.Target.Pacer.Window(), also)
				continue
			}
			// The same check as the whole-run observer's (answer.Observer).
			if p := session.ExactBodyProblem(x, want); p != "" {
				c.Fail(session.CellOf("rate-shared", op, role, matrix.CondRefused), x, "%s", p)
			}
		}
	}
	return c.Err()
}

func (s *scenario) servedAgain(ctx context.Context) error {
	c := s.Cells("rate-frees")
	for _, role := range s.rateRoles() {
		for _, op := range s.rateOps() {
			body, err := s.ValidBodyFor(session.WithPrep(ctx), role, op)
			if err != nil {
				return err
			}
			x, err := s.SendAs(ctx, role, op, body)
			if err != nil {
				return err
			}
			s.Last = x
			if x.Status != http.StatusOK {
				c.Fail(session.CellOf("rate-frees", op, role, "a full window after the refusal"), x, "status %d, want 200: a full %s passed since the account's last request (spec §8)", x.Status, s.Target.Pacer.Window())
			}
		}
	}
	return c.Err()
}

func (s *scenario) usedUpBudget(ctx context.Context) error {
	// Learn the campaign list before spending the budget: later steps may
	// need a campaignId.
	if _, err := s.Campaigns(ctx, s.Target.Primary); err != nil {
		return err
	}
	if _, err := s.Target.Pacer.ResetBudget(ctx, s.Target.Primary.AccountID); err != nil {
		return err
	}
	// Two windows' worth at most: a clock-aligned counter may reset once
	// during the loop.
	limit := 2*s.Target.Pacer.Limit() + 2
	for range limit {
		if err := s.Call(ctx, spec.OpCampaignList, []byte(`{"limit": 1, "page": 1}`)); err != nil {
			return err
		}
		switch s.Last.Status {
		case http.StatusTooManyRequests:
			s.exhaustedAt = s.Last.Sent
			return nil
		case http.StatusOK:
		default:
			return s.Failf("status %d while spending the budget, want 200 or 429", s.Last.Status)
		}
	}
	return s.Failf("%d requests in a row were accepted; the limit is %d per %s per account (spec §8)", limit, s.Target.Pacer.Limit(), s.Target.Pacer.Window())
}

// fullWindowPasses lets a full window pass for every account the scenario
// spent: the simulator's clocks of those accounts are advanced, any other
// target is waited for.
func (s *scenario) fullWindowPasses(ctx context.Context) error {
	w := s.Target.Pacer.Window()
	if s.Target.Control != nil {
		for _, role := range s.rateRoles() {
			acct, _ := s.Account(role)
			if _, err := s.Target.Control.AdvanceAccountClock(ctx, acct.AccountID, w+time.Second); err != nil {
				return fmt.Errorf("advance the simulator's clock: %w", err)
			}
		}
		return nil
	}
	// A full window after the last request: every counted request has left
	// a sliding window, and a clock-aligned window has turned over.
	wait := time.Until(s.exhaustedAt.Add(w + s.Target.Pacer.Margin()))
	if wait > 0 {
		s.Target.Pacer.Logf("waiting %s for the rate-limit window to pass (spec §8)", wait.Round(100*time.Millisecond))
		return s.Target.Pacer.Sleep(ctx, wait)
	}
	return nil
}

func (s *scenario) retryAfterSeconds() error {
	v := s.Last.ResponseHeader.Get("Retry-After")
	if n, err := strconv.Atoi(v); err != nil || n < 0 {
		return s.Failf("Retry-After is %q, want a whole number of seconds", v)
	}
	return nil
}
