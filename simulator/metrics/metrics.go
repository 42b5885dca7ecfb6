// Package metrics counts what the simulator does for Prometheus: partner
// requests by operation and status, the rate limiter's 429s, latency per
// operation, injected faults, contacts, throwaway accounts and Redis round
// trips (docs/metrics.md). It sees the partner requests only through
// simulator.RequestObserver, like the client report, and Redis through
// ObserveRedis, which simulator/redisstore's hook calls; the composition
// root (simulator/sim) wires both and the control API serves Handler at
// GET /metrics.
//
// Every label value comes from a fixed set, never from a request's input:
// the operation is one of spec.Paths() or "other", the status an HTTP code
// (100 to 599, or 0 for a request cut off without an answer), the fault
// kind one of simulator.FaultKinds, the Redis command a name the stores
// send. No metric carries an account, a key or a secret.
package metrics

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

var _ simulator.RequestObserver = (*Metrics)(nil)

// Namespace prefixes every metric of the simulator's own.
const Namespace = "partnersim"

// OtherOperation is the operation label of a partner request that named
// none of the three operations with POST: an unknown path, another method,
// /healthz, the OpenAPI document.
const OtherOperation = "other"

// operations are the values of the operation label, indexed by opIndex:
// the spec's operation paths in its order (spec.Operations(), the one
// table of them), then OtherOperation. A new operation of the spec gets a
// label of its own with no change here.
var operations = append(spec.Paths(), OtherOperation)

// otherIndex is the index of OtherOperation in operations.
var otherIndex = len(operations) - 1

// opIndex returns the index in operations of a journal entry's operation:
// its place in the spec's table, or otherIndex for a request that named
// none of the operations (an unknown path, /healthz, …).
func opIndex(op string) int {
	for i, p := range operations[:otherIndex] {
		if p == op {
			return i
		}
	}
	return otherIndex
}

// Status codes a label is kept for: 0 (no answer) and 100 to 599. Any
// other value the server might record is counted as 0.
const maxStatus = 600

// statusLabels holds every status label, made once: a request makes no
// string.
var statusLabels = func() (s [maxStatus]string) {
	for i := range s {
		if i == 0 || i >= 100 {
			s[i] = strconv.Itoa(i)
		}
	}
	return s
}()

func statusIndex(status int) int {
	if status < 100 || status >= maxStatus {
		return 0
	}
	return status
}

// DurationBuckets are the latency histogram's upper bounds, in seconds:
// from 100 µs (an in-memory answer) to 30 s (the longest injected delay,
// partnerapi.MaxFaultDelay).
var DurationBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// RedisBuckets are the Redis round trip histogram's upper bounds, in
// seconds: from 50 µs (loopback) to the 500 ms of redisstore's default
// timeout and past it.
var RedisBuckets = []float64{.00005, .0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1}

// Sources are what Metrics reads at each scrape rather than counts.
type Sources struct {
	// ContactsStored returns how many contacts are stored, every account's
	// (in Redis mode, every replica's: the store is shared). May be nil:
	// then partnersim_contacts_stored is not exported.
	ContactsStored func(ctx context.Context) (int, error)
	// ThrowawayAccounts returns how many throwaway accounts exist (POST
	// /accounts; shared in Redis mode). May be nil: then
	// partnersim_throwaway_accounts is not exported.
	ThrowawayAccounts func(ctx context.Context) (int, error)
	// Version and Backend ("memory" or "redis") label
	// partnersim_build_info. Empty means "dev" and "memory". The Redis
	// metrics are exported with Backend "redis" only.
	Version, Backend string
	// Timeout bounds each source's call at a scrape. Zero means 5 seconds.
	Timeout time.Duration
	// Logger receives the errors of a scrape. May be nil: then they are
	// not logged (they still count in
	// promhttp_metric_handler_errors_total).
	Logger *slog.Logger
}

// Metrics is the simulator's registry of metrics. Make one with New; it is
// safe for concurrent use.
type Metrics struct {
	reg *prometheus.Registry

	requests *prometheus.CounterVec
	// reqs caches the requests counter of each operation and status, so
	// that a request costs no label lookup once its pair was seen.
	reqs        [][maxStatus]atomic.Pointer[prometheus.Counter]
	durations   []prometheus.Observer
	limited     []prometheus.Counter
	faults      *prometheus.CounterVec
	contacts    prometheus.Counter
	redisTrips  *prometheus.CounterVec
	redisErrors *prometheus.CounterVec
	redisTime   prometheus.Observer
	// redisByCommand caches each command's round trips counter.
	redisByCommand sync.Map // command -> prometheus.Counter

	handler http.Handler
}

// New returns the metrics of one simulator process, on a registry of its
// own (never prometheus.DefaultRegisterer: tests run many simulators in
// one process), with Go's runtime and the process's metrics alongside.
func New(src Sources) *Metrics {
	m := &Metrics{
		reg:       prometheus.NewRegistry(),
		reqs:      make([][maxStatus]atomic.Pointer[prometheus.Counter], len(operations)),
		durations: make([]prometheus.Observer, len(operations)),
		limited:   make([]prometheus.Counter, len(operations)),
	}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "requests_total",
		Help: "Partner requests answered, by operation (" + strings.Join(operations, ", ") + ") and HTTP status (0: cut off without an answer).",
	}, []string{"operation", "status"})
	durations := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "request_duration_seconds",
		Help:    "Time from a partner request's arrival until its answer's header went out, by operation.",
		Buckets: DurationBuckets,
	}, []string{"operation"})
	limited := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "rate_limited_total",
		Help: "Partner requests the rate limiter refused with 429 (spec §8), by operation; injected 429s count in faults_injected_total.",
	}, []string{"operation"})
	m.faults = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "faults_injected_total",
		Help: "Partner requests an injected fault answered or delayed, by operation and fault kind.",
	}, []string{"operation", "kind"})
	m.contacts = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: Namespace, Name: "contacts_added_total",
		Help: "Add Contact requests that stored a contact (created or merged into one), answered by this process.",
	})
	m.redisTrips = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "redis_round_trips_total",
		Help: "Round trips to Redis, by command (pipeline for a pipeline of commands).",
	}, []string{"command"})
	m.redisErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "redis_errors_total",
		Help: "Round trips to Redis that failed (a timeout, a refused connection, an error reply), by command; a missing key is no error.",
	}, []string{"command"})
	redisTime := prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "redis_round_trip_duration_seconds",
		Help:    "Time of each round trip to Redis, retries included.",
		Buckets: RedisBuckets,
	})
	m.redisTime = redisTime
	// Every operation's histogram and 429 counter exist from the start, so
	// that a rate over them is 0, not absent, before the first request.
	for i, op := range operations {
		m.durations[i] = durations.WithLabelValues(op)
		m.limited[i] = limited.WithLabelValues(op)
	}
	info := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "build_info",
		Help: "Always 1: the simulator's version and state backend (memory or redis).",
	}, []string{"version", "backend"})
	info.WithLabelValues(orDefault(src.Version, "dev"), orDefault(src.Backend, "memory")).Set(1)

	m.reg.MustRegister(m.requests, durations, limited, m.faults, m.contacts, info, &sourceCollector{src: src},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if src.Backend == "redis" {
		// In memory there is no Redis to count: no series at all.
		m.reg.MustRegister(m.redisTrips, m.redisErrors, redisTime)
	}

	opts := promhttp.HandlerOpts{
		// A source that cannot answer (Redis down) leaves its metric out;
		// the rest, the Redis errors first, are served.
		ErrorHandling: promhttp.ContinueOnError,
		Registry:      m.reg, // promhttp_metric_handler_errors_total
	}
	if src.Logger != nil {
		opts.ErrorLog = slogLogger{src.Logger}
	}
	m.handler = promhttp.InstrumentMetricHandler(m.reg, promhttp.HandlerFor(m.reg, opts))
	return m
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// Handler serves the metrics in Prometheus's text format (or, when a
// scraper asks for it, its protobuf format).
func (m *Metrics) Handler() http.Handler { return m.handler }

// Registry is the registry the metrics are in, for a test or a program
// that gathers them itself.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// ObserveRequest implements simulator.RequestObserver: it counts one
// answered partner request.
func (m *Metrics) ObserveRequest(rec *simulator.RequestRecord) {
	e := &rec.Entry
	op := opIndex(e.Operation)
	m.request(op, statusIndex(e.Status)).Inc()
	m.durations[op].Observe(e.LatencyMS / 1000)
	if rec.Limited {
		m.limited[op].Inc()
	}
	if e.Fault != "" {
		m.faults.WithLabelValues(operations[op], faultKind(e.Fault)).Inc()
	}
	if rec.ContactAdded {
		m.contacts.Inc()
	}
}

// request returns the requests counter of one operation and status.
func (m *Metrics) request(op, status int) prometheus.Counter {
	slot := &m.reqs[op][status]
	if c := slot.Load(); c != nil {
		return *c
	}
	c := m.requests.WithLabelValues(operations[op], statusLabels[status])
	slot.Store(&c)
	return c
}

// faultKind is kind when it is one of simulator.FaultKinds, else "other":
// the label stays within the catalogue whatever a journal entry holds.
func faultKind(kind string) string {
	for _, k := range simulator.FaultKinds {
		if k == kind {
			return k
		}
	}
	return "other"
}

// ObserveRedis counts one round trip to Redis: command is the command's
// name (lower case, e.g. "evalsha", "hget") or "pipeline", d its time, err
// its failure, nil when it succeeded (a missing key included). The
// command names are those the stores send: a fixed set.
func (m *Metrics) ObserveRedis(command string, d time.Duration, err error) {
	c, ok := m.redisByCommand.Load(command)
	if !ok {
		c, _ = m.redisByCommand.LoadOrStore(command, m.redisTrips.WithLabelValues(command))
	}
	c.(prometheus.Counter).Inc()
	m.redisTime.Observe(d.Seconds())
	if err != nil {
		m.redisErrors.WithLabelValues(command).Inc()
	}
}

// sourceCollector reads the Sources at each scrape.
type sourceCollector struct{ src Sources }

var (
	contactsStoredDesc = prometheus.NewDesc(Namespace+"_contacts_stored",
		"Contacts stored, every account's; in Redis mode the shared store's, the same on every replica (aggregate with max, not sum).", nil, nil)
	throwawayDesc = prometheus.NewDesc(Namespace+"_throwaway_accounts",
		"Throwaway accounts (POST /accounts) that exist; in Redis mode the shared registry's, the same on every replica.", nil, nil)
)

// Describe implements prometheus.Collector.
func (c *sourceCollector) Describe(ch chan<- *prometheus.Desc) {
	if c.src.ContactsStored != nil {
		ch <- contactsStoredDesc
	}
	if c.src.ThrowawayAccounts != nil {
		ch <- throwawayDesc
	}
}

// Collect implements prometheus.Collector.
func (c *sourceCollector) Collect(ch chan<- prometheus.Metric) {
	timeout := c.src.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	for _, s := range []struct {
		name string
		desc *prometheus.Desc
		read func(context.Context) (int, error)
	}{
		{"contacts stored", contactsStoredDesc, c.src.ContactsStored},
		{"throwaway accounts", throwawayDesc, c.src.ThrowawayAccounts},
	} {
		if s.read == nil {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		n, err := s.read(ctx)
		cancel()
		if err != nil {
			ch <- prometheus.NewInvalidMetric(s.desc, fmt.Errorf("count %s: %w", s.name, err))
			continue
		}
		ch <- prometheus.MustNewConstMetric(s.desc, prometheus.GaugeValue, float64(n))
	}
}

// slogLogger is promhttp's error log on a slog.Logger.
type slogLogger struct{ l *slog.Logger }

func (l slogLogger) Println(v ...any) { l.l.Warn("metrics scrape", "err", fmt.Sprint(v...)) }
