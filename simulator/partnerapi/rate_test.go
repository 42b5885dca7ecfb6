package partnerapi_test

import (
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/internal/apitest"
	"github.com/partner-v3/conformance-kit/simulator/sim"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

func (h *harness) list(a *simulator.Account) *http.Response {
	return h.as(a).POST("/campaign/list").WithJSON(map[string]int{"limit": 1, "page": 1}).Expect().Raw()
}

// TestRateLimit_SlidingWindow: spec §8 with a fake clock. Request 100 of a
// minute passes, 101 is refused with the §7 body, refused requests are not
// counted, and a slot frees exactly when the oldest counted request is 60 s
// old, not a millisecond sooner.
func TestRateLimit_SlidingWindow(t *testing.T) {
	h := MustOpenServer(t, sim.Config{})
	ops := []func(){
		func() { h.list(h.alpha) },
		func() {
			h.as(h.alpha).POST("/contact/add").WithJSON(map[string]string{"phoneNo": "+4790000001"}).Expect().Status(http.StatusOK)
		},
		func() {
			h.as(h.alpha).POST("/campaign/stats").WithJSON(map[string]int{}).Expect().Status(http.StatusBadRequest)
		},
	}
	// 100 requests spread over the three operations, one every 100 ms: the
	// first at t0, the last at t0+9.9s.
	for i := 0; i < 100; i++ {
		ops[i%3]()
		h.clock.Advance(100 * time.Millisecond)
	}
	for i := 0; i < 3; i++ { // refused, and not counted
		resp := h.as(h.alpha).POST("/campaign/stats").WithJSON(map[string]int{"campaignId": 1}).Expect()
		expectError(resp, http.StatusTooManyRequests, spec.MsgRateLimit)
		resp.Header("Retry-After").IsEqual("50") // t0+60s - (t0+10s)
		resp.Header("X-RateLimit-Remaining").IsEqual("0")
	}
	t.Run("another account has its own budget", func(t *testing.T) {
		if got := h.list(h.bravo).StatusCode; got != http.StatusOK {
			t.Fatalf("bravo: status %d", got)
		}
	})
	h.clock.Advance(50*time.Second - time.Millisecond) // t0+59.999s
	if got := h.list(h.alpha).StatusCode; got != http.StatusTooManyRequests {
		t.Fatalf("1 ms before the first request is 60 s old: status %d, want 429", got)
	}
	h.clock.Advance(time.Millisecond) // t0+60s: the first request leaves the window
	if got := h.list(h.alpha).StatusCode; got != http.StatusOK {
		t.Fatalf("when the first request is 60 s old: status %d, want 200", got)
	}
	if got := h.list(h.alpha).StatusCode; got != http.StatusTooManyRequests {
		t.Fatalf("the freed slot was taken; the next: status %d, want 429", got)
	}
	h.clock.Advance(100 * time.Millisecond) // the second request leaves
	if got := h.list(h.alpha).StatusCode; got != http.StatusOK {
		t.Fatalf("when the second request is 60 s old: status %d, want 200", got)
	}
}

// TestRateLimit_Concurrent: many clients of one account at once; exactly
// the limit gets through.
func TestRateLimit_Concurrent(t *testing.T) {
	h := MustOpenServer(t, sim.Config{})
	var ok, refused, other atomic.Int32
	var wg sync.WaitGroup
	for g := 0; g < 30; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				req, _ := http.NewRequest(http.MethodPost, h.sim.URL()+"/campaign/list", nil)
				req.Body = http.NoBody
				apitest.SetCredentials(req.Header, h.alpha)
				resp, err := h.client.Do(req)
				if err != nil {
					other.Add(1)
					continue
				}
				resp.Body.Close()
				switch resp.StatusCode {
				case http.StatusBadRequest: // counted, then refused for its empty body
					ok.Add(1)
				case http.StatusTooManyRequests:
					refused.Add(1)
				default:
					other.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if ok.Load() != 100 || refused.Load() != 50 || other.Load() != 0 {
		t.Fatalf("counted %d, refused %d, other %d; want 100, 50, 0", ok.Load(), refused.Load(), other.Load())
	}
}

// TestRateLimit_ControlAPI: the clock and the counter reset of the control
// API free the limit without waiting.
func TestRateLimit_ControlAPI(t *testing.T) {
	h := MustOpenServer(t, sim.Config{RateLimit: 3, RateWindow: 10 * time.Second})
	exhaust := func() {
		for i := 0; i < 3; i++ {
			if got := h.list(h.alpha).StatusCode; got != http.StatusOK {
				t.Fatalf("request %d: status %d", i+1, got)
			}
		}
		if got := h.list(h.alpha).StatusCode; got != http.StatusTooManyRequests {
			t.Fatalf("request 4: status %d, want 429", got)
		}
	}
	exhaust()
	h.admin().POST("/clock").WithJSON(map[string]string{"advance": "10s"}).Expect().Status(http.StatusOK)
	exhaust()
	h.admin().POST("/rate-limit/reset").WithJSON(map[string]string{"accountId": h.bravo.AccountID}).Expect().Status(http.StatusOK)
	if got := h.list(h.alpha).StatusCode; got != http.StatusTooManyRequests {
		t.Fatalf("resetting bravo freed alpha: status %d", got)
	}
	h.admin().POST("/rate-limit/reset").WithJSON(map[string]string{"accountId": h.alpha.AccountID}).Expect().Status(http.StatusOK)
	exhaust()
	h.admin().POST("/reset").Expect().Status(http.StatusOK)
	exhaust()
	t.Run("a frozen clock holds the window shut", func(t *testing.T) {
		h.admin().POST("/clock").WithJSON(map[string]any{"freeze": true}).Expect().Status(http.StatusOK).
			JSON().Object().HasValue("frozen", true)
		h.clock.Advance(time.Hour)
		if got := h.list(h.alpha).StatusCode; got != http.StatusTooManyRequests {
			t.Fatalf("an hour of real time passed on a frozen clock: status %d", got)
		}
		h.admin().POST("/clock").WithJSON(map[string]any{"set": "2030-01-01T00:00:00.000Z"}).Expect().
			Status(http.StatusOK).JSON().Object().HasValue("now", "2030-01-01T00:00:00.000Z")
		if got := h.list(h.alpha).StatusCode; got != http.StatusOK {
			t.Fatalf("after setting the clock years ahead: status %d", got)
		}
	})
	t.Run("Retry-After follows the configured window", func(t *testing.T) {
		h.admin().POST("/reset").Expect().Status(http.StatusOK)
		for i := 0; i < 3; i++ {
			h.list(h.alpha)
		}
		resp := h.list(h.alpha)
		if got, _ := strconv.Atoi(resp.Header.Get("Retry-After")); got < 1 || got > 10 {
			t.Fatalf("Retry-After %q outside 1..10 s", resp.Header.Get("Retry-After"))
		}
	})
}

// TestRateLimit_AccountClock: POST /clock with an accountId moves that
// account's clock alone: its window passes (spec §8, one counter per
// account), another account's budget stays spent, and the simulator's own
// clock does not move. A reset forgets the account's offset.
func TestRateLimit_AccountClock(t *testing.T) {
	h := MustOpenServer(t, sim.Config{RateLimit: 2, RateWindow: 10 * time.Second})
	spend := func(a *simulator.Account) {
		t.Helper()
		for i := range 2 {
			if got := h.list(a).StatusCode; got != http.StatusOK {
				t.Fatalf("%s request %d: status %d", a.Name, i+1, got)
			}
		}
		if got := h.list(a).StatusCode; got != http.StatusTooManyRequests {
			t.Fatalf("%s request 3: status %d, want 429", a.Name, got)
		}
	}
	spend(h.alpha)
	spend(h.bravo)
	before := h.admin().GET("/clock").Expect().Status(http.StatusOK).JSON().Object().Value("now").String().Raw()
	got := h.admin().POST("/clock").WithJSON(map[string]string{"accountId": h.alpha.AccountID, "advance": "10s"}).
		Expect().Status(http.StatusOK).JSON().Object()
	got.HasValue("accountId", h.alpha.AccountID).HasValue("accountOffset", "10s").HasValue("offset", "0s")
	spend(h.alpha) // its window passed: two more allowed, then refused
	if got := h.list(h.bravo).StatusCode; got != http.StatusTooManyRequests {
		t.Fatalf("alpha's clock freed bravo: status %d, want 429", got)
	}
	after := h.admin().GET("/clock").Expect().Status(http.StatusOK).JSON().Object()
	after.HasValue("offset", "0s").NotContainsKey("accountId")
	if now := after.Value("now").String().Raw(); now != before {
		t.Errorf("the simulator's clock moved from %s to %s", before, now)
	}
	h.admin().GET("/clock").WithQuery("accountId", h.alpha.AccountID).Expect().Status(http.StatusOK).
		JSON().Object().HasValue("accountOffset", "10s")

	tests := []struct {
		name string
		body map[string]any
	}{
		{"set applies to the whole simulator only", map[string]any{"accountId": h.alpha.AccountID, "set": "2030-01-01T00:00:00.000Z"}},
		{"freeze applies to the whole simulator only", map[string]any{"accountId": h.alpha.AccountID, "freeze": true}},
		{"a negative advance is refused", map[string]any{"accountId": h.alpha.AccountID, "advance": "-1s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h.admin().POST("/clock").WithJSON(tt.body).Expect().Status(http.StatusBadRequest).
				JSON().Object().Value("error").String().NotEmpty()
		})
	}
	h.admin().POST("/clock").WithJSON(map[string]any{"accountId": h.alpha.AccountID, "reset": true}).
		Expect().Status(http.StatusOK).JSON().Object().HasValue("accountOffset", "0s")
	h.admin().POST("/clock").WithJSON(map[string]any{"accountId": h.alpha.AccountID, "advance": "1h"}).Expect().Status(http.StatusOK)
	h.admin().POST("/reset").Expect().Status(http.StatusOK)
	h.admin().GET("/clock").WithQuery("accountId", h.alpha.AccountID).Expect().Status(http.StatusOK).
		JSON().Object().HasValue("accountOffset", "0s")
}

// TestAccountClock_UnknownAccount: the clock of an account the simulator
// does not serve is a 404, never an offset stored for nobody.
func TestAccountClock_UnknownAccount(t *testing.T) {
	h := MustOpenServer(t, sim.Config{})
	h.admin().POST("/clock").WithJSON(map[string]string{"accountId": "acc_nobody", "advance": "1m"}).
		Expect().Status(http.StatusNotFound).JSON().Object().HasValue("error", "No account acc_nobody")
	h.admin().GET("/clock").WithQuery("accountId", "acc_nobody").Expect().Status(http.StatusNotFound)
}
