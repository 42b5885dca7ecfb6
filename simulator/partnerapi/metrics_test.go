package partnerapi_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/partner-v3/conformance-kit/simulator/metrics"
	"github.com/partner-v3/conformance-kit/simulator/sim"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// scrapeMetrics reads GET /metrics on the control listener with the token:
// Prometheus's text format, parsed. It also returns the raw text.
func (h *harness) scrapeMetrics(t *testing.T) (metrics.Samples, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, h.sim.AdminURL()+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer test-token")
	resp, err := h.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: Status=%d, want 200: %s", resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Fatalf("GET /metrics: Content-Type=%q, want Prometheus's text format", ct)
	}
	s, err := metrics.ReadSamples(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	return s, string(body)
}

// TestMetrics: GET /metrics on the control listener needs the token and
// answers Prometheus's text format, and its counters move as partner
// requests are made: requests by operation and status, the limiter's 429,
// an injected fault, a stored contact, a throwaway account, latency, and in
// Redis mode the round trips, and the errors while Redis is down. No
// credential appears in it.
func TestMetrics(t *testing.T) {
	backends := []struct {
		name string
		// url returns the Redis URL and a func that takes Redis down; ""
		// for memory.
		url func(t *testing.T) (string, func())
	}{
		{"memory", func(*testing.T) (string, func()) { return "", nil }},
		{"miniredis", func(t *testing.T) (string, func()) {
			m := miniredis.RunT(t)
			return "redis://" + m.Addr() + "/0", m.Close
		}},
		{"redis-server", func(t *testing.T) (string, func()) {
			addr := os.Getenv("SIM_REDIS_ADDR")
			if addr == "" {
				if os.Getenv("REQUIRE_REDIS") == "1" {
					t.Fatal("REQUIRE_REDIS=1 but SIM_REDIS_ADDR is not set")
				}
				t.Skip("set SIM_REDIS_ADDR=127.0.0.1:PORT to run against a real redis-server")
			}
			return "redis://" + addr + "/0", nil
		}},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			url, down := b.url(t)
			cfg := sim.Config{RateLimit: 3, RedisURL: url}
			if url != "" {
				cfg.RedisPrefix = fmt.Sprintf("simtest:metrics:%d:", time.Now().UnixNano())
			}
			if url != "" && down == nil { // a shared Redis: leave it clean
				t.Cleanup(func() { deleteRedisKeys(t, url, cfg.RedisPrefix) })
			}
			testMetrics(t, MustOpenServer(t, cfg), url != "", down)
		})
	}
}

func testMetrics(t *testing.T, h *harness, inRedis bool, down func()) {
	// Like every control call, behind the bearer token.
	expectError(h.expect(h.sim.AdminURL()).GET("/metrics").Expect(), http.StatusUnauthorized,
		"Control API: missing or wrong bearer token")

	before, _ := h.scrapeMetrics(t)
	a := h.alpha
	h.as(a).POST("/campaign/list").WithJSON(map[string]int{"limit": 2, "page": 1}).Expect().Status(http.StatusOK)
	h.as(a).POST("/contact/add").WithJSON(map[string]string{"email": "metrics@example.com"}).Expect().Status(http.StatusOK)
	h.admin().POST("/faults").WithJSON(map[string]any{"operation": spec.PathCampaignStats, "kind": "error", "status": 503, "accountId": a.AccountID}).
		Expect().Status(http.StatusCreated)
	h.as(a).POST("/campaign/stats").WithJSON(map[string]int{"campaignId": 1}).Expect().Status(http.StatusServiceUnavailable)
	// The fourth request of a limit of 3.
	h.as(a).POST("/campaign/list").WithJSON(map[string]int{"limit": 2, "page": 1}).Expect().Status(http.StatusTooManyRequests)
	h.anon().POST("/campaign/list").WithHeader("x-api-key", "wrong").WithJSON(map[string]int{"limit": 2, "page": 1}).
		Expect().Status(http.StatusUnauthorized)
	h.anon().POST("/nowhere").WithJSON(map[string]int{}).Expect().Status(http.StatusNotFound)
	created := h.admin().POST("/accounts").WithJSON(map[string]any{}).Expect().Status(http.StatusCreated).JSON().Object()
	throwaway := map[string]string{}
	for _, k := range []string{"apiKey", "apiSecret", "accountId"} {
		throwaway[k] = created.Value(k).String().Raw()
	}

	after, text := h.scrapeMetrics(t)
	moved := map[string]float64{
		`partnersim_requests_total{operation="campaign/list",status="200"}`:         1,
		`partnersim_requests_total{operation="contact/add",status="200"}`:           1,
		`partnersim_requests_total{operation="campaign/stats",status="503"}`:        1,
		`partnersim_requests_total{operation="campaign/list",status="429"}`:         1,
		`partnersim_requests_total{operation="campaign/list",status="401"}`:         1,
		`partnersim_requests_total{operation="other",status="404"}`:                 1,
		`partnersim_rate_limited_total{operation="campaign/list"}`:                  1,
		`partnersim_rate_limited_total{operation="campaign/stats"}`:                 0,
		`partnersim_faults_injected_total{kind="error",operation="campaign/stats"}`: 1,
		`partnersim_contacts_added_total`:                                           1,
		`partnersim_contacts_stored`:                                                1,
		`partnersim_throwaway_accounts`:                                             1,
		`partnersim_request_duration_seconds_count{operation="campaign/list"}`:      3,
		`partnersim_request_duration_seconds_count{operation="contact/add"}`:        1,
		`partnersim_request_duration_seconds_count{operation="other"}`:              1,
	}
	for k, want := range moved {
		if _, ok := after[k]; !ok {
			t.Errorf("no series %s", k)
		} else if got := after[k] - before[k]; got != want {
			t.Errorf("%s moved by %v, want %v", k, got, want)
		}
	}
	if got := after.Sum("partnersim_requests_total") - before.Sum("partnersim_requests_total"); got != 6 {
		t.Errorf("partnersim_requests_total moved by %v in all, want 6", got)
	}
	// Latency is real time: an in-process answer is far below 10 s.
	if got := after[`partnersim_request_duration_seconds_bucket{le="10",operation="campaign/list"}`]; got != after[`partnersim_request_duration_seconds_count{operation="campaign/list"}`] {
		t.Errorf("Campaign List answers slower than 10 s: %v of %v", got, after[`partnersim_request_duration_seconds_count{operation="campaign/list"}`])
	}

	// No credential, account or secret in any label.
	for _, secret := range []string{a.APIKey, a.APISecret, a.AccountID, h.bravo.APIKey, h.bravo.AccountID,
		throwaway["apiKey"], throwaway["apiSecret"], throwaway["accountId"], "metrics@example.com", "wrong"} {
		if strings.Contains(text, secret) {
			t.Errorf("the metrics hold %q", secret)
		}
	}

	backend := "memory"
	if inRedis {
		backend = "redis"
	}
	if got := after[`partnersim_build_info{backend="`+backend+`",version="dev"}`]; got != 1 {
		t.Errorf("build_info of backend %s = %v, want 1", backend, got)
	}
	trips := after.Sum("partnersim_redis_round_trips_total") - before.Sum("partnersim_redis_round_trips_total")
	if !inRedis {
		if n := after.Sum("partnersim_redis_round_trips_total"); n != 0 {
			t.Errorf("%v Redis round trips in memory", n)
		}
	} else {
		// One gate script for each of the four requests that authenticated,
		// one more for the contact, the fault's and the account's scripts,
		// and the scrape's counts: more than six, whatever the details.
		if trips < 6 {
			t.Errorf("Redis round trips moved by %v, want at least 6", trips)
		}
		if got := after.Sum("partnersim_redis_errors_total") - before.Sum("partnersim_redis_errors_total"); got != 0 {
			t.Errorf("%v Redis errors with Redis up", got)
		}
		// Every round trip is counted and timed by one call (ObserveRedis),
		// so over the process's life the histogram's count is the counter's
		// sum. Only the trips in flight while a scrape gathers can be in one
		// and not yet in the other: the scrape's own, since it reads the two
		// gauges from Redis concurrently with the collectors (a contact-order
		// script, which costs a NOSCRIPT round trip first when Redis has not
		// loaded it, and an HLEN). So compare the totals of one scrape, not
		// the moves between two, where both scrapes' skews add up (on a
		// fresh Redis the first scrape's three trips could be in its
		// histogram and not yet in its counter: the moves then differed by 3
		// against a slack of 2, about one run in fifteen).
		const scrapeTrips = 3
		total, timed := after.Sum("partnersim_redis_round_trips_total"), after["partnersim_redis_round_trip_duration_seconds_count"]
		if timed < total-scrapeTrips || timed > total+scrapeTrips {
			t.Errorf("the round trip histogram counts %v, the counter %v: more apart than the scrape's own %d", timed, total, scrapeTrips)
		}
	}

	h.admin().DELETE("/accounts/" + throwaway["accountId"]).Expect().Status(http.StatusOK)
	if s, _ := h.scrapeMetrics(t); s["partnersim_throwaway_accounts"] != before["partnersim_throwaway_accounts"] {
		t.Errorf("partnersim_throwaway_accounts = %v after the delete, want %v", s["partnersim_throwaway_accounts"], before["partnersim_throwaway_accounts"])
	}

	if down == nil {
		return
	}
	// Redis down: requests answer 500, the scrape still answers, with the
	// errors counted and the shared store's gauges left out.
	down()
	h.as(h.bravo).POST("/campaign/list").WithJSON(map[string]int{"limit": 2, "page": 1}).Expect().Status(http.StatusInternalServerError)
	s, _ := h.scrapeMetrics(t)
	if got := s.Sum("partnersim_redis_errors_total") - after.Sum("partnersim_redis_errors_total"); got < 1 {
		t.Errorf("Redis errors moved by %v with Redis down, want at least 1", got)
	}
	if got := s[`partnersim_requests_total{operation="campaign/list",status="500"}`]; got != 1 {
		t.Errorf(`requests_total{campaign/list,500} = %v, want 1`, got)
	}
	if v, ok := s["partnersim_contacts_stored"]; ok {
		t.Errorf("partnersim_contacts_stored = %v with Redis down, want it left out", v)
	}
}

// deleteRedisKeys removes a test's keys from a shared Redis.
func deleteRedisKeys(t testing.TB, url, prefix string) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Error(err)
		return
	}
	c := redis.NewClient(opts)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	for iter.Next(ctx) {
		c.Del(ctx, iter.Val())
	}
}
