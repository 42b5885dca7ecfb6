// Package learn learns a deployment's profile (simulator/profile): every
// choice it makes where the spec says "not shown", each with the
// exchanges that showed it. It probes the target through the run's own
// paced client, so the probes stay within the account's rate budget (spec
// §8) like every scenario, and spend it on purpose only to learn the rate
// limit's own choices.
package learn

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/internal/mask"
	"github.com/partner-v3/conformance-kit/steps/internal/pace"
	"github.com/partner-v3/conformance-kit/steps/internal/target"
)

// Env is what a run already has: its resolved target (the paced client,
// the accounts, the control API when there is one, the secrets), and what
// the probes alone use.
type Env struct {
	// Target is the run's target. BaseURL, Client, Pacer and Primary are
	// required; Secrets hides the run's secrets in evidence (a body that
	// echoes a credential), and when nil only the credential headers are
	// masked.
	target.Target
	// TLSConfig is the run's TLS configuration, for the HTTP/2 probe. May
	// be nil: the system roots.
	TLSConfig *tls.Config
	// RateLimit and RateWindow are the limit the run assumes (§8). Zero:
	// the Pacer's.
	RateLimit  int
	RateWindow time.Duration
	// Log receives progress lines. May be nil.
	Log io.Writer
	// SuiteVersion is recorded in the profile's Source.
	SuiteVersion string
}

// Learn probes env's target and returns its profile. Every choice is set,
// to a value or Unknown with the reason; the profile passes
// profile.Check (an observation the spec forbids a profile to hold is the
// verdict's business: the choice is then Unknown with what was seen). An
// error means the probes could not run (the context ended, the target
// could not be reached).
func Learn(ctx context.Context, env Env) (*profile.Profile, error) {
	if env.BaseURL == nil || env.Client == nil || env.Pacer == nil || !env.Primary.Complete() {
		return nil, errors.New("learn: BaseURL, Client, Pacer and Primary are required")
	}
	if env.RateLimit == 0 {
		env.RateLimit = env.Pacer.Limit()
	}
	if env.RateWindow == 0 {
		env.RateWindow = env.Pacer.Window()
	}
	if env.EmailDomain == "" {
		env.EmailDomain = "example.com"
	}
	if env.Log == nil {
		env.Log = io.Discard
	}
	if env.RunID == "" {
		env.RunID = fmt.Sprintf("%x", time.Now().UnixNano()&0xffffffff)
	}
	l := &learner{env: env, started: time.Now(), p: &profile.Profile{Schema: profile.SchemaID, ProfileVersion: profile.Version}}
	steps := []struct {
		name string
		fn   func(context.Context) error
	}{
		{"auth", l.auth},
		{"request body and check order", l.framework},
		{"campaign list", l.list},
		{"campaign stats", l.stats},
		{"contact", l.contact},
		{"http", l.http},
		{"missing Content-Type", l.missingContentType},
		{"unknown path, another method", l.unknownPathMethod},
		{"latency", l.pacedSample},
		{"rate limit", l.rate},
	}
	for _, s := range steps {
		l.logf("learning the profile: %s", s.name)
		if err := s.fn(ctx); err != nil {
			return nil, fmt.Errorf("learn the profile (%s): %w", s.name, err)
		}
	}
	l.errorBodies()
	l.echoTemplates()
	l.headerClasses()
	l.latency()
	l.p.Source = profile.Source{
		Target:     l.redact(env.BaseURL.String()),
		LearnedAt:  l.started.UTC().Format(time.RFC3339),
		Suite:      env.SuiteVersion,
		RateLimit:  env.RateLimit,
		RateWindow: profile.Duration(env.RateWindow),
		Requests:   l.requests,
		Took:       profile.Duration(time.Since(l.started).Round(time.Millisecond)),
	}
	sanitize(l.p)
	if err := l.p.Check(); err != nil {
		return nil, fmt.Errorf("learn the profile: %w", err) // sanitize missed a path: a bug
	}
	return l.p, nil
}

// learner is one learning: the profile being filled and every exchange.
type learner struct {
	env      Env
	started  time.Time
	p        *profile.Profile
	mu       sync.Mutex
	all      []*exch
	requests int
	emails   int
	// campaignIDs are the Ids of the account's campaigns, as listed.
	campaignIDs []int
	// paced are the paced sample's round trips by operation.
	paced map[string][]time.Duration
}

func (l *learner) logf(format string, args ...any) {
	fmt.Fprintf(l.env.Log, "conformance: "+format+"\n", args...)
}

// redact hides the run's secrets in s (a nil Secrets hides nothing).
func (l *learner) redact(s string) string { return l.env.Secrets.String(s) }

// exch is one probe: what was sent and answered.
type exch struct {
	method, path string // path relative to the base URL
	op           string // operation path, "" for another
	reqHeader    http.Header
	reqBody      []byte
	status       int
	header       http.Header
	body         []byte
	sent, recv   time.Time
	deliberate   bool
	paced        bool // of the paced latency sample
	// field is the field the probe is about, "" for none: an error body
	// naming it is learned as a template (framework.go).
	field string
}

// req is one probe to send.
type req struct {
	method string // POST when empty
	path   string // relative to the base URL
	body   string
	// acct is the credentials sent; zero means Primary. noAccount leaves
	// x-account-id out.
	acct        control.Credentials
	noAccount   bool
	contentType string // application/json when empty
	// noContentType sends no Content-Type at all.
	noContentType bool
	header        map[string]string
	deliberate    bool // spends the budget on purpose (§8 probes)
	field         string
}

// send sends one probe and reads its whole answer.
func (l *learner) send(ctx context.Context, r req) (*exch, error) {
	if r.method == "" {
		r.method = http.MethodPost
	}
	acct := r.acct
	if acct.IsZero() {
		acct = l.env.Primary
	}
	u := strings.TrimSuffix(l.env.BaseURL.String(), "/") + "/" + r.path
	if r.deliberate {
		ctx = pace.Deliberate(ctx)
	}
	var body io.Reader
	if r.method != http.MethodGet {
		body = strings.NewReader(r.body)
	}
	hr, err := http.NewRequestWithContext(ctx, r.method, u, body)
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	ct := r.contentType
	if ct == "" {
		ct = spec.ContentType
	}
	if r.method != http.MethodGet && !r.noContentType {
		hr.Header.Set("Content-Type", ct)
	}
	hr.Header.Set(spec.HeaderAPIKey, acct.APIKey)
	hr.Header.Set(spec.HeaderAPISecret, acct.APISecret)
	if !r.noAccount {
		hr.Header.Set(spec.HeaderAccountID, acct.AccountID)
	}
	for k, v := range r.header {
		hr.Header.Set(k, v)
	}
	x := &exch{method: r.method, path: r.path, reqHeader: hr.Header.Clone(), reqBody: []byte(r.body), deliberate: r.deliberate, field: r.field}
	if slicesContains(spec.Paths(), r.path) {
		x.op = r.path
	}
	x.sent = time.Now()
	resp, err := l.env.Client.Do(hr)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", r.method, r.path, err)
	}
	defer resp.Body.Close()
	x.body, err = io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	x.recv = time.Now()
	if err != nil {
		return nil, fmt.Errorf("%s %s: read the answer: %w", r.method, r.path, err)
	}
	x.status, x.header = resp.StatusCode, resp.Header
	l.mu.Lock()
	l.all = append(l.all, x)
	l.requests++
	l.mu.Unlock()
	return x, nil
}

func slicesContains(s []string, v string) bool {
	for _, e := range s {
		if e == v {
			return true
		}
	}
	return false
}

// evidence is x as a profile.Exchange: credentials masked, bodies cut.
func (l *learner) evidence(x *exch) profile.Exchange {
	return profile.Exchange{
		Request:  l.message(profile.Message{Method: x.method, Path: x.path}, x.reqHeader, x.reqBody),
		Response: l.message(profile.Message{Status: x.status}, x.header, x.body),
	}
}

func (l *learner) message(m profile.Message, h http.Header, body []byte) profile.Message {
	if len(h) > 0 {
		m.Headers = map[string]string{}
		for k, vs := range h {
			v := strings.Join(vs, ", ")
			switch http.CanonicalHeaderKey(k) {
			case "X-Api-Secret":
				v = mask.Secret(v)
			case "X-Api-Key", "X-Account-Id":
				v = mask.Credential(v)
			default:
				v = l.redact(v)
			}
			m.Headers[http.CanonicalHeaderKey(k)] = v
		}
	}
	if !isText(body) {
		m.Body = fmt.Sprintf("(%d bytes, not text)", len(body))
		return m
	}
	s := l.redact(string(body))
	if len(s) > profile.MaxEvidenceBody {
		m.Body, m.BodyBytes = strings.ToValidUTF8(s[:profile.MaxEvidenceBody], ""), len(s)
	} else {
		m.Body = s
	}
	return m
}

func isText(b []byte) bool {
	return !bytes.ContainsRune(b, 0) && strings.ToValidUTF8(string(b), "") == string(b)
}

// evidences is the evidence of several exchanges, nil ones skipped.
func (l *learner) evidences(xs ...*exch) []profile.Exchange {
	var out []profile.Exchange
	for _, x := range xs {
		if x != nil {
			out = append(out, l.evidence(x))
		}
	}
	return out
}

// object decodes a JSON object body, keys in the order they came.
func object(b []byte) (keys []string, vals map[string]json.RawMessage, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, nil, false
	}
	vals = map[string]json.RawMessage{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, nil, false
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, false
		}
		if _, dup := vals[k]; !dup {
			keys = append(keys, k)
		}
		vals[k] = v
	}
	return keys, vals, true
}

// flatObject is object with nested objects flattened into dotted paths
// ("error.message"), in the body's order: an error body may nest its
// message (profile.ErrorBody). An empty object stays a leaf.
func flatObject(b []byte) (keys []string, vals map[string]json.RawMessage, ok bool) {
	top, tv, ok := object(b)
	if !ok {
		return nil, nil, false
	}
	vals = map[string]json.RawMessage{}
	for _, k := range top {
		sub, sv, isObj := flatObject(tv[k])
		if !isObj || len(sub) == 0 || strings.Contains(k, ".") {
			keys, vals[k] = append(keys, k), tv[k]
			continue
		}
		for _, s := range sub {
			keys, vals[k+"."+s] = append(keys, k+"."+s), sv[s]
		}
	}
	return keys, vals, true
}

// messageOf is the message an error body carries: the value of its
// message field (see messageField), "" when there is none.
func messageOf(b []byte) string {
	keys, vals, ok := flatObject(b)
	if !ok {
		return ""
	}
	f := messageField(keys, vals)
	if f == "" {
		return problemMessage(keys, vals)
	}
	var s string
	_ = json.Unmarshal(vals[f], &s)
	return s
}

// outcome is how x answered: 200, or its status and message.
func outcome(x *exch) profile.Outcome {
	if x.status == http.StatusOK {
		return profile.Outcome{Status: http.StatusOK}
	}
	return profile.Outcome{Status: x.status, Message: messageOf(x.body)}
}

// withField writes the name of the field a probe set as {field} in a
// refusal's message (whole words only), so that the simulator names the
// field a client really sent (profile.Outcome.Message).
func withField(o profile.Outcome, field string) profile.Outcome {
	if !o.Accepted() {
		o.Message = regexp.MustCompile(`\b`+regexp.QuoteMeta(field)+`\b`).ReplaceAllLiteralString(o.Message, "{field}")
	}
	return o
}

// fieldAlone is withField for a refusal of a wrong type: the field is
// written {field} only where the message names it and none of the
// operation's other fields (others), so that "limit must be an integer"
// is said of page too, and "limit must be an integer from 1 to 50, page
// an integer from 1", a message about both, word for word (issue 28).
func fieldAlone(o profile.Outcome, field string, others ...string) profile.Outcome {
	for _, other := range others {
		if regexp.MustCompile(`\b` + regexp.QuoteMeta(other) + `\b`).MatchString(o.Message) {
			return o
		}
	}
	return withField(o, field)
}

// listOutcome adds a Campaign List 200's pageSize and pageNo.
func listOutcome(x *exch) profile.Outcome {
	o := outcome(x)
	if o.Accepted() {
		var env struct{ PageNo, PageSize int }
		_ = json.Unmarshal(x.body, &env)
		o.PageNo, o.PageSize = env.PageNo, env.PageSize
	}
	return o
}

// outcomeChoice is the choice x showed.
func (l *learner) outcomeChoice(x *exch, o profile.Outcome) profile.Choice[profile.Outcome] {
	return profile.Choice[profile.Outcome]{Value: o, Evidence: l.evidences(x)}
}

// unknown is a choice that could not be learned.
func unknown[T any](why string, ev ...profile.Exchange) profile.Choice[T] {
	return profile.Choice[T]{Unknown: why, Evidence: ev}
}

// http2 offers h2 and http/1.1 in a TLS handshake with the target.
func (l *learner) http2(ctx context.Context) profile.Choice[bool] {
	if l.env.InProcess {
		return unknown[bool]("an in-process run has no TLS connection to offer h2 on")
	}
	if l.env.BaseURL.Scheme != "https" {
		return unknown[bool]("the target is plain HTTP: no TLS handshake to offer h2 in")
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if l.env.TLSConfig != nil {
		cfg = l.env.TLSConfig.Clone()
	}
	cfg.NextProtos = []string{"h2", "http/1.1"}
	host := l.env.BaseURL.Host
	if _, _, err := net.SplitHostPort(host); err != nil {
		host = net.JoinHostPort(host, "443")
	}
	if cfg.ServerName == "" {
		cfg.ServerName = l.env.BaseURL.Hostname()
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, err := (&tls.Dialer{Config: cfg}).DialContext(ctx, "tcp", host)
	if err != nil {
		return unknown[bool](fmt.Sprintf("the TLS handshake offering h2 failed: %v", err))
	}
	defer c.Close()
	proto := c.(*tls.Conn).ConnectionState().NegotiatedProtocol
	ev := profile.Exchange{Request: profile.Message{Method: "TLS", Path: "ALPN h2, http/1.1"}, Response: profile.Message{Body: "negotiated: " + proto}}
	return profile.Choice[bool]{Value: proto == "h2", Evidence: []profile.Exchange{ev}}
}
