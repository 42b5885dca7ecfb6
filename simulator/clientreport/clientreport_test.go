package clientreport_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/clientreport"
)

var t0 = time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)

// req is a request of acc_a decided at t0+at: allowed, or refused 429 with
// a Retry-After of retry seconds.
func req(id string, at time.Duration, limited bool, retry int) *simulator.RequestRecord {
	rec := &simulator.RequestRecord{Entry: simulator.JournalEntry{RequestID: id, AccountID: "acc_a", Status: 200},
		Now: t0.Add(at), Limited: limited, RetryAfter: time.Duration(retry) * time.Second}
	if limited {
		rec.Entry.Status = 429
	}
	return rec
}

func kinds(rep simulator.ClientReport) map[string]int {
	out := map[string]int{}
	for _, f := range rep.Findings {
		out[f.Kind] = f.Count
	}
	return out
}

// TestLimiter429 (spec §7, §8): a limiter's 429 is judged by the account's
// next request: waited out it is no finding, at whatever limit; a request
// before its Retry-After makes it rate-limited (example: the 429), and is
// itself a retry too soon, hammering if refused again.
func TestLimiter429(t *testing.T) {
	tests := []struct {
		name string
		reqs []*simulator.RequestRecord
		want map[string]int
	}{
		{"a 429 waited out is no finding", []*simulator.RequestRecord{
			req("a", 0, false, 0), req("b", 0, true, 5), req("c", 5*time.Second, false, 0),
		}, map[string]int{}},
		{"the latest 429, with nothing after it, is not judged", []*simulator.RequestRecord{
			req("a", 0, true, 5),
		}, map[string]int{}},
		{"a request sent alongside the 429 (decided before it) does not judge it", []*simulator.RequestRecord{
			req("a", time.Second, true, 5), req("b", 0, false, 0), req("c", 6*time.Second, false, 0),
		}, map[string]int{}},
		{"an allowed request before Retry-After", []*simulator.RequestRecord{
			req("a", 0, true, 5), req("b", 4*time.Second, false, 0),
		}, map[string]int{simulator.FindingRateLimited: 1, simulator.FindingRetryTooSoon: 1}},
		{"a 429 ignored", []*simulator.RequestRecord{
			req("a", 0, true, 5), req("b", 0, true, 5), req("c", 5*time.Second, false, 0),
		}, map[string]int{simulator.FindingRateLimited: 1, simulator.FindingRetryTooSoon: 1, simulator.FindingHammering: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, limit := range []int{5, 100, 1000} {
				c := clientreport.New(limit, time.Minute, func() time.Time { return t0 })
				for _, r := range tt.reqs {
					c.ObserveRequest(r)
				}
				rep := c.Report("acc_a")
				if got := kinds(rep); fmt.Sprint(got) != fmt.Sprint(tt.want) {
					t.Fatalf("at %d per minute: findings %v, want %v", limit, got, tt.want)
				}
				if rep.Clean != (len(tt.want) == 0) {
					t.Fatalf("Clean=%v with findings %v", rep.Clean, rep.Findings)
				}
			}
		})
	}
	t.Run("the example of rate-limited is the 429 not waited out", func(t *testing.T) {
		c := clientreport.New(0, 0, nil)
		c.ObserveRequest(req("the-429", 0, true, 5))
		c.ObserveRequest(req("too-soon", time.Second, false, 0))
		for _, f := range c.Report("acc_a").Findings {
			if f.Kind == simulator.FindingRateLimited && f.ExampleRequestID != "the-429" {
				t.Fatalf("example %q, want the-429", f.ExampleRequestID)
			}
		}
	})
}

// TestSpecPace: under another limit than the spec's, the report measures
// the busiest 60 s and what the spec's 100 per minute would have refused,
// as information; at the spec's limit it says nothing.
func TestSpecPace(t *testing.T) {
	observe := func(c *clientreport.Reports, n int, from time.Duration) {
		for i := range n {
			c.ObserveRequest(req(fmt.Sprint(i), from, false, 0))
		}
	}
	c := clientreport.New(30, 5*time.Second, nil)
	observe(c, 60, 0)
	observe(c, 60, 30*time.Second) // 120 within 60 s: the spec's limiter refuses 20
	observe(c, 60, 61*time.Second) // the first 60 left: 120 again, but it counted only 40 of the last
	// 60 s, so it lets these 60 through
	rep := c.Report("acc_a")
	if p := rep.SpecPace; p == nil || p.BusiestMinute != 120 || p.WouldBeRefused != 20 || p.Limit != 100 || p.Window != "1m0s" {
		t.Fatalf("SpecPace=%+v, want busiest 120, 20 refused, of 100 per 1m0s", p)
	}
	if !rep.Clean {
		t.Fatalf("pace is information, not a finding: %+v", rep.Findings)
	}
	spec := clientreport.New(0, 0, nil)
	observe(spec, 150, 0)
	if rep := spec.Report("acc_a"); rep.SpecPace != nil {
		t.Fatalf("SpecPace at the spec's own limit: %+v", rep.SpecPace)
	}
}
