package suite

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/internal/pace"
	"github.com/partner-v3/conformance-kit/steps/internal/record"
)

// preflight catches, before the first scenario, what the user got wrong
// rather than the target: an address that does not answer, a certificate
// the client does not trust, an address where no operation of the spec
// answers, credentials the target refuses. Each is ErrConnection or
// ErrPreflight, with what to fix. Everything else (plain HTTP, a base path
// without /v3, one operation missing) is the scenarios' to judge.
func (r *run) preflight(ctx context.Context) error {
	ctx = record.WithScenario(ctx, "preflight")
	status, msg, err := r.probe(ctx, r.Primary, spec.PathCampaignList, `{"limit": 1, "page": 1}`)
	if err != nil {
		return err
	}
	if r.BaseURL.Scheme == "http" && status/100 != 2 && speaksTLS(ctx, r.BaseURL.Host) {
		return fmt.Errorf("%w: %s answers TLS: the address is https://%s%s (a target that serves plain HTTP is judged by spec §1; this one does not)", ErrPreflight, r.BaseURL.Host, r.BaseURL.Host, r.BaseURL.Path)
	}
	if status == http.StatusNotFound {
		missing := true
		names := []string{spec.OpCampaignList}
		for _, o := range operationsAfter(spec.PathCampaignList) {
			// Bodies every conforming service refuses before it acts (§4.1,
			// §4.3: 400), so the probe creates nothing. An operation whose
			// empty body a service might act on needs a body of its own here.
			st, _, err := r.probe(ctx, r.Primary, o.Path, `{}`)
			if err != nil {
				return err
			}
			missing = missing && st == http.StatusNotFound
			names = append(names, o.Name)
		}
		if missing {
			return fmt.Errorf("%w: no operation of the spec answers at %s: %s all answered 404; check --base-url (the deployment's address of %s, spec §1)",
				ErrPreflight, r.BaseURL, andList(names), spec.BasePath)
		}
	}
	if err := credentialsRefused(status, msg, "primary", "--api-key, --api-secret", "--account-id"); err != nil {
		return err
	}
	if r.Second.Complete() {
		status, msg, err := r.probe(ctx, r.Second, spec.PathCampaignList, `{"limit": 1, "page": 1}`)
		if err != nil {
			return err
		}
		if err := credentialsRefused(status, msg, "second", "--second-api-key, --second-api-secret", "--second-account-id"); err != nil {
			return err
		}
	}
	return nil
}

// operationsAfter returns the spec's operations other than the one at
// path, in the spec's order from the one after it round to the start (for
// Campaign List: Campaign Stats, then Add Contact), the order preflight
// has always probed and named them in.
func operationsAfter(path string) []spec.Operation {
	ops := spec.Operations()
	i := slices.IndexFunc(ops, func(o spec.Operation) bool { return o.Path == path })
	return slices.Concat(ops[i+1:], ops[:max(i, 0)])
}

// andList words names as a sentence does: "a", "a and b", "a, b and c".
func andList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// speaksTLS reports whether a TLS handshake succeeds at host (host:port):
// a user who wrote http:// for an HTTPS port made a mistake the target
// cannot be blamed for.
func speaksTLS(ctx context.Context, host string) bool {
	if _, _, err := net.SplitHostPort(host); err != nil {
		host = net.JoinHostPort(host, "80")
	}
	d := &tls.Dialer{Config: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // only asks whether the port speaks TLS
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	c, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// credentialsRefused turns a 401 or 403 to a valid request into the fix.
func credentialsRefused(status int, msg, which, keyFlags, accountFlag string) error {
	switch status {
	case http.StatusUnauthorized:
		return fmt.Errorf("%w: the target refused the credentials of the %s account: 401 %s; check %s", ErrPreflight, which, msg, keyFlags)
	case http.StatusForbidden:
		return fmt.Errorf("%w: the target refused the account identifier of the %s account: 403 %s; check %s (and that it belongs to the key)", ErrPreflight, which, msg, accountFlag)
	}
	return nil
}

// probe sends one POST with an account's credentials and returns the
// status and the message of the answer. A 429 the target still sends after
// a full quiet window stops the run: nothing could be verified.
func (r *run) probe(ctx context.Context, acct control.Credentials, op, body string) (int, string, error) {
	ctx, note := pace.WithNote(ctx)
	u := strings.TrimSuffix(r.BaseURL.String(), "/") + "/" + op
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(body))
	if err != nil {
		return 0, "", fmt.Errorf("%w: build the first request: %w", ErrConfig, err)
	}
	req.Header.Set("Content-Type", spec.ContentType)
	req.Header.Set(spec.HeaderAPIKey, acct.APIKey)
	req.Header.Set(spec.HeaderAPISecret, acct.APISecret)
	req.Header.Set(spec.HeaderAccountID, acct.AccountID)
	resp, err := r.Client.Do(req)
	if err != nil {
		return 0, "", fmt.Errorf("%w: %s: %w%s", ErrConnection, r.BaseURL, err, tlsHint(err))
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if note.Finding != "" {
		return 0, "", fmt.Errorf("%w: the account's budget stays spent: %s. Is another client using the account? Run with an account nothing else uses", ErrPreflight, note.Finding)
	}
	return resp.StatusCode, messageOf(b), nil
}

// messageOf is the message an error body carries, for the user to read.
func messageOf(b []byte) string {
	var m map[string]any
	if json.Unmarshal(b, &m) == nil {
		for _, k := range []string{"error", "message", "detail", "title"} {
			if s, ok := m[k].(string); ok {
				return s
			}
		}
	}
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// tlsHint suggests the fix for a connection the client could not make.
func tlsHint(err error) string {
	var unknown x509.UnknownAuthorityError
	var invalid x509.CertificateInvalidError
	var host x509.HostnameError
	switch {
	case errors.As(err, &unknown) || errors.As(err, &invalid) || errors.As(err, &host):
		return " (the target's certificate is not trusted: give its CA with --ca-cert FILE, or --insecure for a development target, which makes the run no certification)"
	case strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return " (the target answers plain HTTP on an https:// address: check the port, or give its http:// address to have spec §1 judge it)"
	case strings.Contains(err.Error(), "malformed HTTP response"):
		return " (the target does not speak plain HTTP on this address: it may want https://)"
	}
	return ""
}
