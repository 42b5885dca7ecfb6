package metrics_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/metrics"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// scrape serves m's handler once and parses the answer, which must be
// Prometheus's text format.
func scrape(t testing.TB, m *metrics.Metrics) metrics.Samples {
	t.Helper()
	w := httptest.NewRecorder()
	m.Handler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if w.Code != http.StatusOK {
		t.Fatalf("Status=%d, want 200: %s", w.Code, w.Body)
	}
	if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Fatalf("Content-Type=%q, want Prometheus's text format", ct)
	}
	s, err := metrics.ReadSamples(w.Body)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func record(op string, status int) *simulator.RequestRecord {
	return &simulator.RequestRecord{Entry: simulator.JournalEntry{Operation: op, Status: status, LatencyMS: 2}}
}

func TestObserveRequest(t *testing.T) {
	limited := record(spec.PathCampaignList, 429)
	limited.Limited = true
	injected429 := record(spec.PathCampaignList, 429)
	injected429.Entry.Fault = simulator.FaultRateLimit
	fault := record(spec.PathCampaignStats, 503)
	fault.Entry.Fault = simulator.FaultError
	dropped := record(spec.PathContactAdd, 0)
	dropped.Entry.Fault = simulator.FaultDrop
	added := record(spec.PathContactAdd, 200)
	added.ContactAdded = true
	strange := record("/etc/passwd", 999)
	strange.Entry.Fault = "a kind nobody made"
	tests := []struct {
		name   string
		rec    *simulator.RequestRecord
		series map[string]float64 // the samples it adds to
	}{
		{"a served Campaign List", record(spec.PathCampaignList, 200), map[string]float64{
			`partnersim_requests_total{operation="campaign/list",status="200"}`:                 1,
			`partnersim_request_duration_seconds_count{operation="campaign/list"}`:              1,
			`partnersim_request_duration_seconds_bucket{le="0.0025",operation="campaign/list"}`: 1,
			`partnersim_request_duration_seconds_bucket{le="0.001",operation="campaign/list"}`:  0,
		}},
		{"the rate limiter's 429", limited, map[string]float64{
			`partnersim_requests_total{operation="campaign/list",status="429"}`: 1,
			`partnersim_rate_limited_total{operation="campaign/list"}`:          1,
		}},
		{"an injected 429 is a fault, not the limiter's", injected429, map[string]float64{
			`partnersim_requests_total{operation="campaign/list",status="429"}`:             1,
			`partnersim_rate_limited_total{operation="campaign/list"}`:                      0,
			`partnersim_faults_injected_total{kind="rate-limit",operation="campaign/list"}`: 1,
		}},
		{"an injected 503", fault, map[string]float64{
			`partnersim_requests_total{operation="campaign/stats",status="503"}`:        1,
			`partnersim_faults_injected_total{kind="error",operation="campaign/stats"}`: 1,
		}},
		{"a dropped connection has status 0", dropped, map[string]float64{
			`partnersim_requests_total{operation="contact/add",status="0"}`:         1,
			`partnersim_faults_injected_total{kind="drop",operation="contact/add"}`: 1,
		}},
		{"a stored contact", added, map[string]float64{
			`partnersim_requests_total{operation="contact/add",status="200"}`: 1,
			`partnersim_contacts_added_total`:                                 1,
		}},
		{"no operation is other", record("", 404), map[string]float64{
			`partnersim_requests_total{operation="other",status="404"}`: 1,
		}},
		{"values outside the sets fall back to other and 0", strange, map[string]float64{
			`partnersim_requests_total{operation="other",status="0"}`:          1,
			`partnersim_faults_injected_total{kind="other",operation="other"}`: 1,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := metrics.New(metrics.Sources{})
			before := scrape(t, m)
			m.ObserveRequest(tt.rec)
			after := scrape(t, m)
			for k, want := range tt.series {
				if _, ok := after[k]; !ok {
					t.Errorf("no series %s", k)
					continue
				}
				if got := after[k] - before[k]; got != want {
					t.Errorf("%s moved by %v, want %v", k, got, want)
				}
			}
			// Nothing else of ours moved.
			for k, v := range after {
				if _, named := tt.series[k]; named || !strings.HasPrefix(k, "partnersim_") || strings.Contains(k, "_bucket{") || strings.Contains(k, "_sum") {
					continue
				}
				if strings.HasPrefix(k, "partnersim_request_duration_seconds_count") && strings.Contains(k, `"`+operation(tt.rec)+`"`) {
					continue
				}
				if v != before[k] {
					t.Errorf("%s moved by %v, want 0", k, v-before[k])
				}
			}
		})
	}
}

// operation is the label a record's operation is counted under: its path
// when it is one of the spec's operations, else "other".
func operation(rec *simulator.RequestRecord) string {
	if op := rec.Entry.Operation; slices.Contains(spec.Paths(), op) {
		return op
	}
	return metrics.OtherOperation
}

// labels are the values of the operation label: every operation of the
// spec's table and "other".
func labels() []string { return append(spec.Paths(), metrics.OtherOperation) }

// TestLabelsBounded: whatever the records hold, the label values stay
// within their sets: the spec's operations and "other", the statuses 0 and 100 to 599, the
// fault kinds and "other".
func TestLabelsBounded(t *testing.T) {
	m := metrics.New(metrics.Sources{})
	r := rand.New(rand.NewPCG(1, 2))
	ops := append(spec.Paths(), "", "contact/add/", "x")
	for i := range 20_000 {
		rec := record(ops[r.IntN(len(ops))], r.IntN(2000)-500)
		if r.IntN(2) == 0 {
			rec.Entry.Fault = fmt.Sprint("kind-", i)
		}
		m.ObserveRequest(rec)
	}
	s := scrape(t, m)
	known := map[string]bool{}
	for _, op := range labels() {
		known[op] = true
	}
	requests, faults := 0, 0
	for k := range s {
		switch {
		case strings.HasPrefix(k, "partnersim_requests_total{"):
			requests++
		case strings.HasPrefix(k, "partnersim_faults_injected_total{"):
			faults++
			if !strings.Contains(k, `kind="other"`) {
				t.Errorf("%s: a kind outside the catalogue", k)
			}
		default:
			continue
		}
		op := k[strings.Index(k, `operation="`)+len(`operation="`):]
		if op = op[:strings.IndexByte(op, '"')]; !known[op] {
			t.Errorf("%s: operation %q", k, op)
		}
	}
	n := len(labels())
	if max := n * 501; requests > max || requests < n*400 {
		t.Errorf("%d requests series, want at most %d (and most of them seen)", requests, max)
	}
	if faults != n {
		t.Errorf("%d fault series, want %d (one per operation and other, kind other)", faults, n)
	}
}

func TestSources(t *testing.T) {
	down := errors.New("redis down")
	contacts, accounts := 7, 3
	var fail error
	m := metrics.New(metrics.Sources{
		ContactsStored:    func(context.Context) (int, error) { return contacts, fail },
		ThrowawayAccounts: func(context.Context) (int, error) { return accounts, nil },
		Version:           "v1.2.3", Backend: "redis",
	})
	s := scrape(t, m)
	for k, want := range map[string]float64{
		"partnersim_contacts_stored":                              7,
		"partnersim_throwaway_accounts":                           3,
		`partnersim_build_info{backend="redis",version="v1.2.3"}`: 1,
	} {
		if got, ok := s[k]; !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", k, got, ok, want)
		}
	}
	contacts, accounts = 8, 4
	fail = down
	s = scrape(t, m) // still 200: what can be read is served
	if v, ok := s["partnersim_contacts_stored"]; ok {
		t.Errorf("partnersim_contacts_stored = %v while its source fails, want it left out", v)
	}
	if got := s["partnersim_throwaway_accounts"]; got != 4 {
		t.Errorf("partnersim_throwaway_accounts = %v, want 4", got)
	}
	// The failure is counted once that scrape is gathered: the next shows it.
	if got := scrape(t, m)[`promhttp_metric_handler_errors_total{cause="gathering"}`]; got != 1 {
		t.Errorf(`promhttp_metric_handler_errors_total{cause="gathering"} = %v, want 1 (the scrape before failed to read the contacts)`, got)
	}
}

func TestSourcesAbsentWhenNil(t *testing.T) {
	s := scrape(t, metrics.New(metrics.Sources{}))
	for _, k := range []string{"partnersim_contacts_stored", "partnersim_throwaway_accounts"} {
		if _, ok := s[k]; ok {
			t.Errorf("%s exported with no source", k)
		}
	}
	if got := s[`partnersim_build_info{backend="memory",version="dev"}`]; got != 1 {
		t.Errorf("build_info = %v, want 1 with the defaults", got)
	}
	// Every operation's histogram and 429 counter are there from the start.
	for _, op := range labels() {
		for _, k := range []string{
			`partnersim_request_duration_seconds_count{operation="` + op + `"}`,
			`partnersim_rate_limited_total{operation="` + op + `"}`,
		} {
			if v, ok := s[k]; !ok || v != 0 {
				t.Errorf("%s = %v (present %v), want 0", k, v, ok)
			}
		}
	}
	// In memory, no Redis series at all.
	for k := range s {
		if strings.HasPrefix(k, "partnersim_redis_") {
			t.Errorf("%s in memory", k)
		}
	}
	// Go's runtime and the process.
	for _, k := range []string{"go_goroutines", "process_resident_memory_bytes"} {
		if _, ok := s[k]; !ok {
			t.Errorf("no %s", k)
		}
	}
}

func TestObserveRedis(t *testing.T) {
	m := metrics.New(metrics.Sources{Backend: "redis"})
	m.ObserveRedis("evalsha", 300*time.Microsecond, nil)
	m.ObserveRedis("evalsha", 2*time.Millisecond, errors.New("i/o timeout"))
	m.ObserveRedis("pipeline", 100*time.Microsecond, nil)
	s := scrape(t, m)
	for k, want := range map[string]float64{
		`partnersim_redis_round_trips_total{command="evalsha"}`:             2,
		`partnersim_redis_round_trips_total{command="pipeline"}`:            1,
		`partnersim_redis_errors_total{command="evalsha"}`:                  1,
		`partnersim_redis_round_trip_duration_seconds_count`:                3,
		`partnersim_redis_round_trip_duration_seconds_bucket{le="0.00025"}`: 1,
		`partnersim_redis_round_trip_duration_seconds_bucket{le="0.0005"}`:  2,
		`partnersim_redis_round_trip_duration_seconds_bucket{le="0.0025"}`:  3,
	} {
		if got := s[k]; got != want {
			t.Errorf("%s = %v, want %v", k, got, want)
		}
	}
	if _, ok := s[`partnersim_redis_errors_total{command="pipeline"}`]; ok {
		t.Error("an error series for a command that never failed")
	}
	if got := s.Sum("partnersim_redis_round_trips_total"); got != 3 {
		t.Errorf("Sum = %v, want 3", got)
	}
}

func TestReadSamplesRefusesOtherFormats(t *testing.T) {
	for _, in := range []string{`{"error":"x"}`, "a b c d\n", "metric{l=\"unterminated} 1\n"} {
		if _, err := metrics.ReadSamples(strings.NewReader(in)); err == nil {
			t.Errorf("ReadSamples(%q) = nil error", in)
		}
	}
}

// BenchmarkObserveRequest is the metrics' work per partner request, on the
// paths a request takes most: a 200 and a 429.
func BenchmarkObserveRequest(b *testing.B) {
	m := metrics.New(metrics.Sources{})
	ok := record(spec.PathCampaignList, 200)
	limited := record(spec.PathContactAdd, 429)
	limited.Limited = true
	b.Run("served", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m.ObserveRequest(ok)
		}
	})
	b.Run("rate-limited", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m.ObserveRequest(limited)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				m.ObserveRequest(ok)
			}
		})
	})
}

// BenchmarkObserveRedis is the metrics' work per Redis round trip (the
// hook adds two clock reads).
func BenchmarkObserveRedis(b *testing.B) {
	m := metrics.New(metrics.Sources{})
	b.ReportAllocs()
	for b.Loop() {
		m.ObserveRedis("evalsha", 25*time.Microsecond, nil)
	}
}
