package main

import (
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator/sim"
	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/matrix"
	"github.com/partner-v3/conformance-kit/steps/result"
	"github.com/partner-v3/conformance-kit/steps/suite"
)

// Connections, framing and concurrency against the independent
// implementation (issue 27): correct choices where the spec is silent
// (Connection: close on every answer, HTTP/2 or not) pass; a credential
// check kept per connection, a connection that stays refused and contact
// ids issued twice under concurrency fail, in §5 and §4.1.

// altConnCache is the state of a defect that keeps authentication per
// connection (by the client's address, as a session cache keyed by it
// would).
type altConnCache struct {
	mu      sync.Mutex
	served  map[string]int // connection -> account served on it
	refused map[string]bool
}

// cachedAuth serves a request on a kept-alive HTTP/1.1 connection that
// carried a served request as that connection's account, whatever its
// headers say. Over HTTP/2 the check is right, so a suite whose shared
// connection speaks HTTP/2 never sees it.
func cachedAuth() func(r *http.Request, op string, acct, status int, msg string) (int, int, string) {
	c := &altConnCache{served: map[string]int{}}
	return func(r *http.Request, _ string, acct, status int, msg string) (int, int, string) {
		if r.ProtoMajor != 1 {
			return acct, status, msg
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		if status == 0 {
			c.served[r.RemoteAddr] = acct
			return acct, status, msg
		}
		if a, ok := c.served[r.RemoteAddr]; ok {
			return a, 0, ""
		}
		return acct, status, msg
	}
}

// stuckRefusal refuses every request on a connection that carried a
// refusal, with the refusal's answer.
func stuckRefusal() func(r *http.Request, op string, acct, status int, msg string) (int, int, string) {
	c := &altConnCache{refused: map[string]bool{}}
	return func(r *http.Request, _ string, acct, status int, msg string) (int, int, string) {
		c.mu.Lock()
		defer c.mu.Unlock()
		switch {
		case status != 0:
			c.refused[r.RemoteAddr] = true
		case c.refused[r.RemoteAddr]:
			return acct, http.StatusUnauthorized, spec.MsgInvalidCredentials
		}
		return acct, status, msg
	}
}

// connWarnings are the run's warnings of rule auth-connection and framing.
func connWarnings(r altRun) []string {
	var out []string
	for _, sc := range r.res.Scenarios {
		for _, w := range sc.Warnings {
			if strings.Contains(w.Message, "auth-connection") || strings.Contains(w.Message, "framing") {
				out = append(out, w.Message)
			}
		}
	}
	return out
}

// TestAlternativeConnectionChoicesPass: correct implementations that close
// every connection after its answer, or serve HTTP/2, pass the normative
// profile over HTTPS with no scenario failed or skipped. Cells the target's
// choices leave unchecked (no reused connection, no HTTP/2) are warnings;
// with kept-alive HTTP/2 every cell of auth-connection and framing is
// checked.
func TestAlternativeConnectionChoicesPass(t *testing.T) {
	waitsForWindows(t)
	tests := []struct {
		name string
		opts altOptions
		// warned is a text every warning of the rules must hold for; ""
		// wants none.
		warned string
	}{
		{"Connection: close on every answer, HTTP/1.1 only", altOptions{CloseConnections: true}, "closed the connection"},
		{"Connection: close on every answer (a GOAWAY over HTTP/2), HTTP/2", altOptions{CloseConnections: true, HTTP2: true}, "closed the connection"},
		{"kept-alive HTTP/2", altOptions{HTTP2: true}, ""},
		{"kept-alive HTTP/1.1 only", altOptions{}, "does not offer HTTP/2"},
	}
	altTable(t, len(tests), func(i int) (string, altTarget) {
		return tests[i].name, altTarget{opts: tests[i].opts, limit: altLimit}
	}, func(t *testing.T, i int, r altRun) {
		tt := tests[i]
		wantPass(t, r)
		ran := map[string]bool{}
		for _, sc := range r.res.Scenarios {
			for _, rule := range []string{"auth-connection", "framing", "contact-concurrent"} {
				if slices.Contains(sc.Tags, matrix.Tag(rule)) && sc.Status == result.StatusPassed {
					ran[rule] = true
				}
				for _, u := range sc.Unverified {
					if strings.HasPrefix(u, rule+":") {
						t.Errorf("cell unverified over HTTPS: %s", u)
					}
				}
			}
		}
		if len(ran) != 3 {
			t.Errorf("rules passed: %v, want auth-connection, framing and contact-concurrent", ran)
		}
		ws := connWarnings(r)
		switch {
		case tt.warned == "" && len(ws) > 0:
			t.Errorf("warnings about cells left unchecked, want none:\n%s", strings.Join(ws, "\n"))
		case tt.warned != "" && len(ws) == 0:
			t.Errorf("no warning says which cells were left unchecked (want %q)", tt.warned)
		case tt.warned != "" && !strings.Contains(strings.Join(ws, "\n"), tt.warned):
			t.Errorf("the warnings do not say %q:\n%s", tt.warned, strings.Join(ws, "\n"))
		}
		t.Logf("%d passed, %d warnings, %d requests, %s (attempt %d)", r.res.Passed, r.res.Warnings, r.res.Requests, r.took.Round(time.Millisecond), r.attempts)
	})
}

// TestAlternativeConnectionDefectsAreCaught: the independent implementation,
// right but for the credential check kept per connection, a connection
// that stays refused, or contact ids issued twice under concurrency, fails
// the normative profile (exit 1) in the scenario of the matching rule.
func TestAlternativeConnectionDefectsAreCaught(t *testing.T) {
	waitsForWindows(t)
	tests := []struct {
		name    string
		opts    altOptions
		defect  altDefect
		rule    string
		section string
	}{
		{"auth: a kept-alive HTTP/1.1 connection that carried a served request is not checked again (HTTP/2 served right, so the run's shared connection never shows it)",
			altOptions{HTTP2: true}, altDefect{conn: cachedAuth()}, "auth-connection", "5"},
		{"auth: a connection that carried a refusal refuses every later request",
			altOptions{HTTP2: true}, altDefect{conn: stuckRefusal()}, "auth-connection", "5"},
		{"contact: the id generator is read, then written back 50 ms later: calls in flight together get one contactId",
			altOptions{}, altDefect{idGap: 50 * time.Millisecond}, "contact-concurrent", "4.1"},
		{"framing: a Campaign List body without a length (chunked, HTTP/2 DATA frames alone) is not read, and the missing limit and page default to 10 and 1",
			altOptions{Clamp: true, HTTP2: true}, altDefect{unread: func(r *http.Request) bool {
				return r.ContentLength < 0 && strings.HasSuffix(r.URL.Path, "/"+spec.PathCampaignList)
			}}, "framing", "4"},
	}
	altTable(t, len(tests), func(i int) (string, altTarget) {
		return tests[i].name, altTarget{opts: tests[i].opts, defect: tests[i].defect, limit: altLimit}
	}, func(t *testing.T, i int, r altRun) {
		tt := tests[i]
		wantCaught(t, r, tt.name, altCatch{rule: tt.rule, sections: []string{tt.section}})
	})
}

// TestConnectionCellsInProcess: an in-process run has no connections, so
// the cells of auth-connection and framing are listed as unverified (never
// passed silently), and the run is no certification; contact-concurrent
// runs in process as concurrent calls of the handler.
func TestConnectionCellsInProcess(t *testing.T) {
	tests := []struct {
		rule       string
		unverified int
	}{
		{"auth-connection", len(matrix.RuleByID("auth-connection").Cells())},
		{"framing", len(matrix.RuleByID("framing").Cells())},
		{"contact-concurrent", 0},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			s, err := sim.New(t.Context(), sim.Config{Insecure: true, DataDir: t.TempDir(), AdminToken: "test-admin-token"})
			if err != nil {
				t.Fatalf("new simulator: %v", err)
			}
			t.Cleanup(func() { _ = s.Close() })
			as := altAccounts(t)
			res, err := suite.Run(t.Context(), suite.Config{
				Handler: s.Handler(), AdminHandler: s.AdminHandler(), AdminToken: "test-admin-token",
				Primary: as[0], Second: as[1],
				Tags:      "@normative && " + matrix.Tag(tt.rule),
				NoProfile: true,
			})
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			if res.Verdict != suite.VerdictPass || res.Certification {
				t.Errorf("verdict %s, certification %v: want pass, no certification", res.Verdict, res.Certification)
			}
			n := 0
			for _, sc := range res.Scenarios {
				for _, u := range sc.Unverified {
					n++
					if !strings.Contains(u, "in-process run has no connections") {
						t.Errorf("unverified for another reason: %s", u)
					}
				}
			}
			if n != tt.unverified {
				t.Errorf("%d cells unverified, want %d", n, tt.unverified)
			}
		})
	}
}
