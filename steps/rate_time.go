package steps

// Spec §8 over time, across connections and under concurrency (issue 27):
// rules rate-holds and rate-concurrent of the matrix.
//
// "100 requests per minute per account" holds for the whole minute. The
// spec allows a sliding window, fixed windows aligned to the target's clock
// and windows opened by the first request; under all three a budget spent
// in a burst that starts just after a boundary of the target's clock stays
// spent until that clock-aligned window ends. So the first proof of
// rate-shared starts there (freshBudgets), and late in the window (55 s of
// 60, scaled to the run's window, less the Date header's one-second
// resolution and the latency) every operation of every account is sent
// again, on the run's connection and on a connection opened after the
// budget was spent: a 200 is a §8 FAILURE (a limiter that frees the budget
// early, or counts per connection). The probes share the window the burst
// spends anyway: they wait for nothing the scenario did not wait for.
//
// The limit is per account, not per sequence of requests: in the window of
// the second proof each account sends the last requests of its budget in
// flight at the same time (goroutines, new connections, a kept-alive
// HTTP/1.1 connection and HTTP/2 streams where offered). Each must be
// served, and the next request of each operation refused: a counter read
// and written in two steps loses the counts of overlapping requests and
// leaves room for it.

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/cucumber/godog"

	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/internal/pace"
	"github.com/partner-v3/conformance-kit/steps/internal/wire"
	"github.com/partner-v3/conformance-kit/steps/matrix"
	"github.com/partner-v3/conformance-kit/steps/result"
	"github.com/partner-v3/conformance-kit/steps/session"
)

func (s *scenario) registerRateTime(sc *godog.ScenarioContext) {
	sc.Step(`^late in the window, every operation of each account should still be refused with status 429 and exactly this JSON body, on the run's connection and on a new connection:$`, s.lateRefused)
	sc.Step(`^the requests each account had in flight at the same time should have been served as far as its budget held, every other refused with status 429 and exactly this JSON body:$`, s.togetherServed)
}

// burstLead is how far past a boundary of the target's clock a burst may
// start without waiting for the next one: a quarter of the window (15 s of
// a minute), and no more than lets the late probes (a twelfth of the window
// twice, and the Date header's second, before its end) come after a limiter
// whose window is half the run's has freed the budget. Each second of lead
// is a second less that a run waits, on average, for the next boundary.
func burstLead(w, guard time.Duration) time.Duration {
	return max(0, min(w/4, w/2-2*guard-time.Second))
}

// lateSpan is the time the late probes are given before their deadline:
// four round trips each (those on new connections shake hands first), at
// least a quarter of a second, at most the guard before the window's end.
func lateSpan(n int, latency, guard time.Duration) time.Duration {
	return min(guard, max(250*time.Millisecond, 4*time.Duration(n+2)*latency))
}

// togetherRoutes are the ways the requests in flight at the same time
// travel, in turn: the run's pool (HTTP/2 streams on one connection when
// the target offers it), connections of their own, HTTP/2 by a pool of its
// own, and one kept-alive HTTP/1.1 connection.
var togetherRoutes = []wire.Route{wire.Shared, wire.Fresh, wire.HTTP2, wire.HTTP1}

// lateProbe is one request of rule rate-holds.
type lateProbe = session.CellExchange

// sendsBurstsAndLate sends, for every account at once (their requests in
// turn, so that a counter the accounts share fills at the limit), as many
// requests as the limit allows, every operation in turn, the second
// account's last cross requests and extra more in flight at the same time
// (rate-concurrent), then one more of each operation, and late in the
// window the probes of rate-holds. A try that cannot decide is tried again
// after a fresh window, up to MaxBurstAttempts times (tryBursts). A limit
// below 2 × cross leaves half of it to cross with.
func (s *scenario) sendsBurstsAndLate(ctx context.Context, cross, extra int) error {
	if extra < 1 {
		return fmt.Errorf("the scenario crosses the limit with %d requests beyond it, want at least 1", extra)
	}
	limit := s.Target.Pacer.Limit()
	return s.tryBursts(ctx, burstPlan{fill: limit, late: true, cross: min(cross, limit/2), crossExtra: extra})
}

// refillsBurstsTogether, in the window after the first proof's (the
// accounts have sent one request of each operation in it), fills each
// account's budget again, its last requests in flight at the same time,
// then sends one more of each operation, another one first: a target that
// counts refused requests refuses only the first request past the limit
// as the 101st, so each burst tries another operation there. The late
// probes of the window before are counted now by a sliding window that
// counts refused requests, and by no other: as many requests after those
// in flight may each be served or refused (loose), and the requests beyond
// come after them.
func (s *scenario) refillsBurstsTogether(ctx context.Context) error {
	limit, ops := s.Target.Pacer.Limit(), len(s.rateOps())
	loose := 0
	if s.proof != nil {
		for _, pr := range s.proof.late {
			if pr.Cell.Account == matrix.Primary {
				loose++
			}
		}
	}
	loose = min(loose, max(0, limit-ops))
	together := min(len(togetherRoutes)*ops, max(0, (limit-ops-loose)/2))
	// The second account's first burst crossed its limit with requests in
	// flight together; here it crosses it one request after another, with
	// the operation no other crossing starts with (stride): each of the
	// three is the 101st somewhere in the run.
	fill := max(0, limit-ops-loose-together)
	s.inFlightUnsent(fill, together)
	return s.tryBursts(ctx, burstPlan{fill: fill, first: 2, stride: ops - 1, together: together, loose: loose})
}

// inFlightUnsent lists as unverified the cells of rule rate-concurrent
// that a limit too small for requests in flight together leaves unsent:
// the primary account's together requests of this proof are the
// operations from the fill-th on (the second account's first crossing
// sent every operation in flight already).
func (s *scenario) inFlightUnsent(fill, together int) {
	ops := s.rateOps()
	c := s.Cells("rate-concurrent")
	for k, op := range ops {
		if (k-fill%len(ops)+len(ops))%len(ops) >= together {
			c.Unreachable(session.CellOf(c.Rule.ID, op, matrix.Primary, matrix.CondInFlight),
				fmt.Sprintf("the run's limit of %d per %s leaves no room for requests of it in flight at the same time", s.Target.Pacer.Limit(), s.Target.Pacer.Window()))
		}
	}
}

// alignAccountClock moves the simulator's clock of an account just past a
// boundary of a window aligned to it, so that a burst fills a clock-aligned
// window from its start, as freshBudgets waits for on any other target.
func (s *scenario) alignAccountClock(ctx context.Context, accountID string) error {
	if s.Target.Control == nil {
		return nil
	}
	w := s.Target.Pacer.Window()
	c, err := s.Target.Control.AccountClock(ctx, accountID)
	if err != nil {
		return fmt.Errorf("read the simulator's clock: %w", err)
	}
	next := pace.WindowStart(c.Now, w).Add(w + 100*time.Millisecond)
	if _, err := s.Target.Control.AdvanceAccountClock(ctx, accountID, next.Sub(c.Now)); err != nil {
		return fmt.Errorf("advance the simulator's clock: %w", err)
	}
	return nil
}

// sendLate sends the probes of rule rate-holds late in the window the
// burst of p spent: every operation of every account on the run's
// connection and on a new one. Against the simulator's control API each
// account's clock is moved there; against any other target the suite
// waits (within the window the scenario spends anyway) until the latest
// instant at which every window §8 allows must still refuse, less the
// time the probes take.
func (s *scenario) sendLate(ctx context.Context, p *rateProof) error {
	roles, ops := s.rateRoles(), s.rateOps()
	w, guard := s.Target.Pacer.Window(), s.Target.Pacer.LateGuard()
	// ends are, with the control API, the end of each account's window
	// that held the burst, on the account's clock.
	ends := map[string]time.Time{}
	if s.Target.Control != nil {
		// The probes of an account take real time while its clock runs:
		// a quarter of the window leaves room for them on a loaded
		// machine and is still later than any window of half the length.
		guard = max(guard, w/4)
		for _, role := range roles {
			acct, _ := s.Account(role)
			c, err := s.Target.Control.AccountClock(ctx, acct.AccountID)
			if err != nil {
				return fmt.Errorf("read the simulator's clock: %w", err)
			}
			// The account's clock when the burst began, and the end of
			// the clock-aligned window that held it.
			ends[role] = pace.WindowStart(c.Now.Add(-time.Since(p.first.Sent)), w).Add(w)
		}
	} else {
		d, ok := s.Target.Pacer.WindowDeadline(p.first.Sent, p.first.ResponseHeader.Get("Date"), guard)
		if !ok {
			p.lateSkipped = "the target sends no Date header, so the end of a window aligned to its clock is unknown and no request can be placed late in it"
			return nil
		}
		p.lateDeadline = d
		n := len(roles) * len(ops) * len(matrix.LateConditions)
		start := d.Add(-lateSpan(n, s.Target.Pacer.Latency(), guard))
		if wait := time.Until(start); wait > 0 {
			s.Target.Pacer.Logf("waiting %s to send a request of each operation late in the rate-limit window (spec §8)", wait.Round(100*time.Millisecond))
			if err := s.Target.Pacer.Sleep(ctx, wait); err != nil {
				return err
			}
		}
	}
	for _, role := range roles {
		acct, _ := s.Account(role)
		if end, ok := ends[role]; ok {
			// Moved just before the account's own probes.
			c, err := s.Target.Control.AccountClock(ctx, acct.AccountID)
			if err != nil {
				return fmt.Errorf("read the simulator's clock: %w", err)
			}
			if d := end.Add(-guard).Sub(c.Now); d > 0 {
				if _, err := s.Target.Control.AdvanceAccountClock(ctx, acct.AccountID, d); err != nil {
					return fmt.Errorf("advance the simulator's clock: %w", err)
				}
			}
		}
		for _, op := range ops {
			for _, cond := range matrix.LateConditions {
				if !p.lateDeadline.IsZero() && time.Now().After(p.lateDeadline) {
					p.lateMissed = fmt.Sprintf("the burst and the late requests took %s: none could be sent late in the window and still before its end by the server's clock", time.Since(p.first.Sent).Round(time.Millisecond))
					return nil
				}
				body, err := s.ValidBodyFor(session.WithPrep(ctx), role, op)
				if err != nil {
					return err
				}
				route := wire.Shared
				if cond == matrix.CondLateFresh {
					route = wire.Fresh
				}
				x, err := s.SendAs(wire.WithRoute(ctx, route), role, op, body)
				if err != nil {
					return err
				}
				s.Last = x
				p.late = append(p.late, lateProbe{Cell: session.CellOf("rate-holds", op, role, cond), X: x})
				if end, ok := ends[role]; ok && x.Status/100 == 2 {
					// Served: judged only if the account's clock had not
					// reached the window's end by the answer.
					c, err := s.Target.Control.AccountClock(ctx, acct.AccountID)
					if err != nil {
						return fmt.Errorf("read the simulator's clock: %w", err)
					}
					if !c.Now.Before(end) {
						p.lateMissed = fmt.Sprintf("a request late in the window was answered when the simulator's clock of the account had passed the window's end (%s): the machine is too slow for the %s window", c.Now.Sub(end).Round(time.Millisecond), w)
						return nil
					}
				}
			}
		}
	}
	return nil
}

// lateUndecided says why the late probes of p prove nothing: they could
// not be sent in time, or one was served while, by the server's Date
// headers, it may have been past the window's end. Empty means they decide.
func (s *scenario) lateUndecided(p *rateProof) string {
	if p.lateMissed != "" {
		return p.lateMissed
	}
	if s.Target.Control != nil {
		return "" // the clocks were moved, and read again after a 200 (sendLate)
	}
	for _, pr := range p.late {
		if pr.X.Status/100 != 2 {
			continue
		}
		if same, known := s.Target.Pacer.SameServerWindow(p.first.Sent, pr.X.Received, p.first.ResponseHeader.Get("Date"), pr.X.ResponseHeader.Get("Date")); known && !same {
			return fmt.Sprintf("by the server's clock (Date headers %s to %s) a request late in the window may have been handled after its end", p.first.ResponseHeader.Get("Date"), pr.X.ResponseHeader.Get("Date"))
		}
	}
	return ""
}

// lateRefused checks rule rate-holds: every probe late in the window was
// refused with exactly the 429 of §7.
func (s *scenario) lateRefused(doc *godog.DocString) error {
	want, err := s.decidedWant(doc)
	if err != nil {
		return err
	}
	c := s.Cells("rate-holds")
	s.unsentCells(c)
	if why := s.proof.lateSkipped; why != "" {
		for _, cell := range c.Rule.Cells() {
			c.Unreachable(cell, why)
		}
		return nil
	}
	w := s.Target.Pacer.Window()
	for _, pr := range s.proof.late {
		x := pr.X
		after := x.Sent.Sub(s.proof.first.Sent).Round(100 * time.Millisecond)
		switch {
		case x.Err != nil:
			c.Fail(pr.Cell, x, "no answer: %v", x.Err)
		case x.Status != http.StatusTooManyRequests:
			why := "a limiter that frees the budget early (a window shorter than the run's) lets it through"
			if pr.Cell.Condition == matrix.CondLateFresh {
				why = "a budget spent on one connection holds on a connection opened after it was spent; a limiter that counts per connection, or frees the budget early, lets it through"
			}
			c.Fail(pr.Cell, x, "status %d, want 429: the account's budget of %d per %s was spent by the burst that began %s before, just after a boundary of the target's clock, and this request came before the end of that window under every window §8 allows (sliding, fixed and aligned to the clock, opened by the first request); %s",
				x.Status, s.Target.Pacer.Limit(), w, after, why)
		default:
			got, err := x.JSON()
			switch {
			case err != nil:
				c.Fail(pr.Cell, x, "the 429 body is not JSON: spec §7 shows it as a JSON object with one string field \"error\"")
			case !reflect.DeepEqual(got, want):
				c.Fail(pr.Cell, x, "the 429 body is %s, want %s (spec §7: one string field \"error\" holding %q)", result.Cut(s.Target.Secrets, x.ResponseBody), strings.TrimSpace(doc.Content), spec.MsgRateLimit)
			}
		}
	}
	return c.Err()
}

// unsentCells records, once, the cells of c's rule that this run cannot
// send: the second account's without one, Add Contact's in a read-only
// run.
func (s *scenario) unsentCells(c *session.CellCheck) {
	for _, cell := range c.Rule.Cells() {
		why := ""
		switch {
		case cell.Account == matrix.Second && !s.Target.Second.Complete():
			why = "no second account is configured"
		case s.SkipsWrite(cell.Operation):
			why = "a read-only run creates no contact"
		default:
			continue
		}
		c.UnreachableOnce(cell, why)
	}
}

// togetherServed checks rule rate-concurrent: of the requests an account
// had in flight at the same time, exactly as many as its budget held were
// served, every other refused with exactly the 429 of §7 (doc); the loose
// requests after them may be refused, with that 429 only.
func (s *scenario) togetherServed(doc *godog.DocString) error {
	want, err := s.decidedWant(doc)
	if err != nil {
		return err
	}
	c := s.Cells("rate-concurrent")
	s.unsentCells(c)
	refused := func(x *session.Exchange) string {
		if got, err := x.JSON(); err != nil || !reflect.DeepEqual(got, want) {
			return fmt.Sprintf("the 429 body is %s, want %s (spec §7: one string field \"error\" holding %q)", result.Cut(s.Target.Secrets, x.ResponseBody), strings.TrimSpace(doc.Content), spec.MsgRateLimit)
		}
		return ""
	}
	for _, role := range s.rateRoles() {
		xs, room := s.proof.together[role], s.proof.room[role]
		served := 0
		for _, x := range xs {
			if x.Err == nil && x.Status == http.StatusOK {
				served++
			}
		}
		named := map[matrix.Cell]bool{} // a count off is said once per cell
		for _, x := range xs {
			cell := session.CellOf("rate-concurrent", session.OpOf(x), role, matrix.CondInFlight)
			if named[cell] && x.Err == nil && (x.Status == http.StatusOK && served > room || x.Status == http.StatusTooManyRequests && served < room) {
				continue
			}
			switch {
			case x.Err != nil:
				c.Fail(cell, x, "no answer: %v", x.Err)
			case x.Status == http.StatusOK && served > room:
				c.Fail(cell, x, "%d of %d requests of the account in flight at the same time were served, but its budget of %d per %s held %d of them (spec §8: the limit is the account's, whatever the connection or the order): a counter that decides on a count read before the others were counted lets more through",
					served, len(xs), s.Target.Pacer.Limit(), s.Target.Pacer.Window(), room)
				named[cell] = true
			case x.Status == http.StatusOK:
				if p := session.LabelProblem(x); p != "" {
					c.Fail(cell, x, "%s", p)
				}
			case x.Status == http.StatusTooManyRequests && served < room:
				c.Fail(cell, x, "status 429, want 200: %d of %d requests of the account in flight at the same time were served, but its budget of %d per %s held %d of them (spec §8)",
					served, len(xs), s.Target.Pacer.Limit(), s.Target.Pacer.Window(), room)
				named[cell] = true
			case x.Status == http.StatusTooManyRequests:
				if p := refused(x); p != "" {
					c.Fail(cell, x, "%s", p)
				}
			default:
				c.Fail(cell, x, "status %d, want 200 within the budget or 429 beyond it (spec §8, §7)", x.Status)
			}
		}
		for _, x := range s.proof.loose[role] {
			switch x.Status {
			case http.StatusOK:
			case http.StatusTooManyRequests:
				if p := refused(x); p != "" {
					c.Fail(session.CellOf("rate-shared", session.OpOf(x), role, matrix.CondRefused), x, "%s", p)
				}
			default:
				c.Fail(session.CellOf("rate-shared", session.OpOf(x), role, matrix.CondCounted), x, "status %d, want 200 or 429: the request is the account's %d requests of the window or one past them (spec §8)", x.Status, s.Target.Pacer.Limit())
			}
		}
	}
	return c.Err()
}

// sendTogether sends n requests of each of roles at the same time, room of
// them within the budget: the operations in turn from the from-th, the
// routes of togetherRoutes in turn, each through SendVia (safe in a
// goroutine); the proof records the answers once all are back.
func (s *scenario) sendTogether(ctx context.Context, p *rateProof, roles []string, from, n, room int) error {
	type flight struct {
		role, op string
		route    wire.Route
		body     []byte
		x        *session.Exchange
	}
	ops := s.rateOps()
	var all []*flight
	for _, role := range roles {
		p.room[role] = room
	}
	for i := range n {
		for r, role := range roles {
			op := ops[(from+i+r)%len(ops)]
			body, err := s.ValidBodyFor(session.WithPrep(ctx), role, op)
			if err != nil {
				return err
			}
			all = append(all, &flight{role: role, op: op, route: togetherRoutes[i%len(togetherRoutes)], body: body})
		}
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	for _, f := range all {
		acct, _ := s.Account(f.role)
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			f.x, _ = s.SendVia(ctx, f.route, false, session.CredentialHeaders(acct), f.op, f.body)
		}()
	}
	close(start)
	wg.Wait()
	for _, f := range all {
		x := f.x
		p.together[f.role] = append(p.together[f.role], x)
		if p.first == nil || x.Sent.Before(p.first.Sent) {
			p.first = x
		}
		if p.last == nil || x.Received.After(p.last.Received) {
			p.last = x
		}
		s.Last = x
	}
	return nil
}
