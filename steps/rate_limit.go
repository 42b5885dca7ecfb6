package steps

// Spec §8: 100 requests per minute per account, all operations together;
// exceeding it yields 429, whose body is exactly {"error": "Rate limit
// exceeded. Try again later."} (§7).

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/cucumber/godog"
)

func (s *scenario) registerRateLimit(sc *godog.ScenarioContext) {
	sc.Step(`^the primary account starts with an unused rate-limit budget$`, s.startsWithUnusedBudget)
	sc.Step(`^the second account has requests left in its rate-limit budget$`, s.secondHasBudget)
	sc.Step(`^the client sends as many requests as the limit allows, alternating Campaign List and Campaign Stats$`, s.sendsBurst)
	sc.Step(`^all of them should have succeeded$`, s.burstSucceeded)
	sc.Step(`^the service should refuse it with status 429 and exactly this JSON body:$`, s.refusedWith429)
	sc.Step(`^the primary account has used up its rate-limit budget$`, s.usedUpBudget)
	sc.Step(`^a full rate-limit window passes$`, s.fullWindowPasses)
	sc.Step(`^the response should carry a "Retry-After" header of whole seconds$`, s.retryAfterSeconds)
}

func (s *scenario) startsWithUnusedBudget(ctx context.Context) error {
	// The burst alternates with Campaign Stats: learn a campaignId first.
	if _, err := s.firstCampaignID(ctx, s.env.Primary); err != nil {
		return err
	}
	id := s.env.Primary.AccountID
	if reset, err := s.env.Pacer.ResetBudget(ctx, id); reset || err != nil {
		return err
	}
	return s.env.Pacer.WaitFresh(ctx, id, s.env.Pacer.Limit()+3)
}

// secondHasBudget makes sure, before the primary spends its budget, that
// the second account is not refused for a budget someone else spent: its
// request is preparation, retried after a 429 like any other.
func (s *scenario) secondHasBudget(ctx context.Context) error {
	if s.second == nil {
		return skipf("no second account is configured")
	}
	x := s.send(withPrep(ctx), s.second, http.MethodPost, operations["Campaign List"], "application/json", []byte(`{"limit": 1, "page": 1}`))
	if err := s.took(x, "Campaign List of the second account"); err != nil {
		return err
	}
	if x.status != http.StatusOK {
		return s.failf("the second account's Campaign List was answered %d, want 200", x.status)
	}
	return nil
}

func (s *scenario) sendsBurst(ctx context.Context) error {
	id, err := s.firstCampaignID(ctx, s.env.Primary)
	if err != nil {
		return err
	}
	n := s.env.Pacer.Limit()
	s.burst = s.burst[:0]
	for i := range n {
		op, body := "Campaign List", []byte(`{"limit": 1, "page": 1}`)
		if i%2 == 1 {
			op, body = "Campaign Stats", fmt.Appendf(nil, `{"campaignId": %d}`, id)
		}
		if err := s.call(ctx, op, body); err != nil {
			return err
		}
		s.burst = append(s.burst, s.last)
	}
	return nil
}

func (s *scenario) burstSucceeded() error {
	for i, x := range s.burst {
		if x.status != http.StatusOK {
			return s.failOn(x, "request %d of %d, after a full window without requests, was answered %d, want 200: the spec allows %d requests per %s per account (§8)", i+1, len(s.burst), x.status, s.env.Pacer.Limit(), s.env.Pacer.Window())
		}
	}
	return nil
}

// inconclusive reports why a 101st request that was let through does not
// prove a fault: the burst crossed a clock-aligned window boundary (by the
// server's Date headers), or took longer than a window. Empty means
// conclusive.
func (s *scenario) inconclusive() string {
	if len(s.burst) == 0 {
		return ""
	}
	first := s.burst[0]
	w := s.env.Pacer.Window()
	if took := s.last.recv.Sub(first.sent); took >= w {
		return fmt.Sprintf("the requests took %s, longer than the %s window", took.Round(time.Millisecond), w)
	}
	if same, known := s.env.Pacer.SameServerWindow(first.sent, s.last.recv, first.rheader.Get("Date"), s.last.rheader.Get("Date")); known && !same {
		return fmt.Sprintf("by the server's clock (Date headers %s to %s) the requests may have crossed the boundary of a clock-aligned window", first.rheader.Get("Date"), s.last.rheader.Get("Date"))
	}
	return ""
}

func (s *scenario) refusedWith429(doc *godog.DocString) error {
	if s.last.status != http.StatusTooManyRequests {
		if why := s.inconclusive(); why != "" && s.last.status == http.StatusOK {
			return skipf("inconclusive, run again: %s", why)
		}
		return s.failf("status %d, want 429: request %d of the window was not refused; the limit is %d per %s per account, all operations together (spec §8)",
			s.last.status, len(s.burst)+1, s.env.Pacer.Limit(), s.env.Pacer.Window())
	}
	want, err := decodeJSON([]byte(doc.Content))
	if err != nil {
		return fmt.Errorf("the scenario's expected body: %w", err)
	}
	got, err := s.last.json()
	if err != nil {
		return s.failf("the 429 body is not JSON: spec §7 shows it as a JSON object with one string field \"error\"")
	}
	if !reflect.DeepEqual(got, want) {
		return s.failf("the 429 body is %s, want %s (spec §7: one string field \"error\" holding %q; the one body whose whole shape the spec fixes)", cut(s.env.Secrets, s.last.rbody), strings.TrimSpace(doc.Content), msgRateLimit)
	}
	return nil
}

func (s *scenario) usedUpBudget(ctx context.Context) error {
	// Learn the campaign list before spending the budget: later steps may
	// need a campaignId.
	if _, err := s.campaigns(ctx, s.env.Primary); err != nil {
		return err
	}
	if _, err := s.env.Pacer.ResetBudget(ctx, s.env.Primary.AccountID); err != nil {
		return err
	}
	// Two windows' worth at most: a clock-aligned counter may reset once
	// during the loop.
	limit := 2*s.env.Pacer.Limit() + 2
	for range limit {
		if err := s.call(ctx, "Campaign List", []byte(`{"limit": 1, "page": 1}`)); err != nil {
			return err
		}
		switch s.last.status {
		case http.StatusTooManyRequests:
			s.exhaustedAt = s.last.sent
			return nil
		case http.StatusOK:
		default:
			return s.failf("status %d while spending the budget, want 200 or 429", s.last.status)
		}
	}
	return s.failf("%d requests in a row were accepted; the limit is %d per %s per account (spec §8)", limit, s.env.Pacer.Limit(), s.env.Pacer.Window())
}

func (s *scenario) fullWindowPasses(ctx context.Context) error {
	w := s.env.Pacer.Window()
	if s.env.Control != nil {
		if err := s.env.Control.Advance(ctx, s.env.Primary.AccountID, w+time.Second); err != nil {
			return fmt.Errorf("advance the simulator's clock: %w", err)
		}
		return nil
	}
	// A full window after the refused request: every counted request has
	// left a sliding window, and a clock-aligned window has turned over.
	wait := time.Until(s.exhaustedAt.Add(w + s.env.Pacer.Margin()))
	if wait > 0 {
		s.env.Pacer.Logf("waiting %s for the rate-limit window to pass (spec §8)", wait.Round(100*time.Millisecond))
		return s.env.Pacer.Sleep(ctx, wait)
	}
	return nil
}

func (s *scenario) retryAfterSeconds() error {
	v := s.last.rheader.Get("Retry-After")
	if n, err := strconv.Atoi(v); err != nil || n < 0 {
		return s.failf("Retry-After is %q, want a whole number of seconds", v)
	}
	return nil
}
