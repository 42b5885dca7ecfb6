package pace

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// Note receives, for one request, what the Transport did besides sending it.
type Note struct {
	// Attempts is how many times the request was sent (more than one after
	// an unexpected 429).
	Attempts int
	// Waits are the waits an unexpected 429 caused.
	Waits []Wait
	// Finding is set when the target refused the request with 429 after a
	// full window in which the suite sent nothing for the account: the
	// target allows fewer requests than the run assumes (spec §8). The
	// response returned is that 429.
	Finding string
}

type noteKey struct{}

// WithNote returns a context whose request fills in the returned Note.
func WithNote(ctx context.Context) (context.Context, *Note) {
	n := &Note{}
	return context.WithValue(ctx, noteKey{}, n), n
}

func noteFrom(ctx context.Context) *Note {
	n, _ := ctx.Value(noteKey{}).(*Note)
	if n == nil {
		return &Note{}
	}
	return n
}

// Transport spends one pacer slot per partner request, feeds the pacer the
// server's clock, and sends a request again when the target refused it with
// 429 although it does not test the rate limit (see the package comment).
type Transport struct {
	// Base sends the requests. Required.
	Base http.RoundTripper
	// Pacer paces them. Required.
	Pacer *Pacer
	// Primary and Second are the run's accounts; Second may be zero. A
	// request's x-api-key and x-account-id (spec §5) say whose budget it
	// spends; the secret is not looked at.
	Primary, Second control.Credentials
	// Timeout bounds each attempt from the moment it is sent to the end
	// of its body: the waits for the rate-limit window before it never
	// count (they are the suite's own, and last up to a window). Zero: no
	// bound. Use it instead of http.Client.Timeout, which would count them.
	Timeout time.Duration
}

// CloseIdleConnections passes the call on to the wrapped transport, so that
// http.Client.CloseIdleConnections reaches it.
func (t *Transport) CloseIdleConnections() {
	if c, ok := t.Base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// accounts names whose budget a request spends. Anything not clearly the
// second account's counts as the primary's, and a request mixing both
// accounts' credentials counts for both: the suite cannot know how the
// target attributes it.
func (t *Transport) accounts(r *http.Request) []string {
	key, id := r.Header.Get(spec.HeaderAPIKey), r.Header.Get(spec.HeaderAccountID)
	sec := t.Second
	if sec.AccountID != "" && (key == sec.APIKey || id == sec.AccountID) {
		out := []string{sec.AccountID}
		if key == t.Primary.APIKey || id == t.Primary.AccountID {
			out = append(out, t.Primary.AccountID)
		}
		return out
	}
	return []string{t.Primary.AccountID}
}

// retryHow is what the suite does before sending a refused request again.
type retryHow int

const (
	retryAfterHeader retryHow = iota // the target's Retry-After
	retryQuietWindow                 // a full window without a request of the account
	retryReset                       // the simulator's control API resets the counter
)

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(r *http.Request) (*http.Response, error) {
	ctx := r.Context()
	accounts := t.accounts(r)
	note := noteFrom(ctx)
	var body []byte
	if r.Body != nil && r.Body != http.NoBody {
		var err error
		body, err = io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("read the request body: %w", err)
		}
	}
	quiet := false // the last wait was a full quiet window (or a reset)
	for attempt := 0; ; attempt++ {
		if err := t.Pacer.acquire(ctx, accounts); err != nil {
			return nil, err
		}
		actx, cancel := ctx, context.CancelFunc(func() {})
		if t.Timeout > 0 {
			actx, cancel = context.WithTimeout(ctx, t.Timeout)
		}
		req := r.Clone(actx)
		if body != nil {
			req.Body = io.NopCloser(bytes.NewReader(body))
			req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		}
		sent := time.Now()
		resp, err := t.Base.RoundTrip(req)
		ended := time.Now()
		t.Pacer.observe(sent, ended, resp)
		t.Pacer.end(accounts, ended)
		note.Attempts++
		if err != nil {
			cancel()
			return nil, err
		}
		// The attempt's deadline lasts until its body is read.
		resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: cancel}
		if resp.StatusCode != http.StatusTooManyRequests || isDeliberate(ctx) {
			return resp, nil
		}
		// A 429 to a request that does not test §8 is not a verdict yet:
		// the budget may have been spent before the run.
		p := t.Pacer
		if quiet {
			note.Finding = fmt.Sprintf("the target refused the request with 429 after a full rate-limit window (%s) in which the suite sent no request of this account, having sent %d in the current one: it allows fewer than the %d requests per %s the run assumes (spec §8)",
				p.window+p.margin, p.sentInWindow(accounts), p.limit, p.window)
			return resp, nil
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		how, wait := t.nextWait(attempt, resp.Header.Get("Retry-After"), accounts)
		w := Wait{Account: p.masked(accounts[0]), Duration: wait, At: time.Now()}
		switch how {
		case retryReset:
			w.Reason = "control API reset"
			p.Logf("unexpected 429 for account %s outside the rate-limit scenarios: counter reset through the control API", w.Account)
			if err := p.reset(ctx, accounts[0]); err != nil {
				return nil, err
			}
		case retryAfterHeader:
			w.Reason = "Retry-After: " + resp.Header.Get("Retry-After")
			p.Logf("unexpected 429 for account %s (its budget was spent before this request; the suite sent %d in this window): waiting %s as the target's Retry-After says, then sending the request again",
				w.Account, p.sentInWindow(accounts), wait.Round(100*time.Millisecond))
		case retryQuietWindow:
			w.Reason = "a full quiet window"
			p.Logf("unexpected 429 for account %s (its budget was spent before this request; the suite sent %d in this window): waiting %s, a full rate-limit window without requests, then sending the request again",
				w.Account, p.sentInWindow(accounts), wait.Round(100*time.Millisecond))
		}
		note.Waits = append(note.Waits, w)
		p.addWait(w)
		if err := p.Sleep(ctx, wait); err != nil {
			return nil, err
		}
		quiet = how != retryAfterHeader
	}
}

// nextWait decides how to wait after the attempt-th send was refused: the
// target's Retry-After, when it is the first refusal and the header is a
// usable wait no longer than a window; otherwise a full window after the
// suite's last request of the accounts (a reset, with a control API).
func (t *Transport) nextWait(attempt int, retryAfter string, accounts []string) (retryHow, time.Duration) {
	p := t.Pacer
	if p.Reset != nil {
		return retryReset, 0
	}
	if attempt == 0 {
		if d, ok := parseRetryAfter(retryAfter, time.Now()); ok && d <= p.window+p.margin {
			return retryAfterHeader, d + 100*time.Millisecond
		}
	}
	return retryQuietWindow, time.Until(p.lastSent(accounts).Add(p.window + p.margin))
}

// parseRetryAfter reads Retry-After as delay-seconds or an HTTP-date (RFC
// 9110 §10.2.3).
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	if n, err := strconv.Atoi(v); err == nil {
		return time.Duration(max(n, 0)) * time.Second, n >= 0
	}
	if d, err := http.ParseTime(v); err == nil {
		return max(d.Sub(now), 0), true
	}
	return 0, false
}

// cancelBody ends an attempt's deadline when its body is closed.
type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}
