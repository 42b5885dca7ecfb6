package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/partner-v3/conformance-kit/simulator/sim"
	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/matrix"
	"github.com/partner-v3/conformance-kit/steps/suite"
)

// lateDefect wraps a faithful service: from the (after+1)-th partner
// request on, it breaks the first answer breaks picks, once.
type lateDefect struct {
	next   http.Handler
	after  int64
	n      atomic.Int64
	done   atomic.Bool
	breaks func(w http.ResponseWriter, r *http.Request, next http.Handler) bool
	// at is the number of the request it broke.
	at atomic.Int64
}

func (d *lateDefect) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := d.n.Add(1)
	if n <= d.after || d.done.Load() {
		d.next.ServeHTTP(w, r)
		return
	}
	if d.breaks(w, r, d.next) {
		d.done.Store(true)
		d.at.Store(n)
	}
}

// TestLateDefectFailsTheRun: a defect that appears only after the run's
// 700th request fails the run, with the section it breaks named and the
// exchange shown in the reports: the whole-run observer holds every answer
// of the run, not only those a scenario reads (rule every-answer). The run
// is the normative profile in process, with the simulator's control API
// (about 950 requests).
func TestLateDefectFailsTheRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the normative profile")
	}
	tests := []struct {
		name string
		// breaks answers one request its broken way, or serves it and
		// reports false.
		breaks  func(w http.ResponseWriter, r *http.Request, next http.Handler) bool
		section string
		want    string
		// observer: the observer reports it (no scenario reads the answer:
		// the @rate-limit scenario, where request 701 falls in file order,
		// judges the statuses of its burst, not the bodies of its 200s).
		// Else the scenario that reads it does, and the observer is quiet.
		observer bool
		// alt runs against the alternative implementation (no control
		// API: the run waits for its short windows) instead of the
		// simulator.
		alt bool
	}{
		{"an edge limiter's own 429 body, once, at request 701", func(w http.ResponseWriter, r *http.Request, next http.Handler) bool {
			if r.Header.Get(spec.HeaderAPIKey) == "" {
				next.ServeHTTP(w, r)
				return false
			}
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"message": "Too Many Requests"}`))
			return true
		}, "7", "the 429 body is", false, false},
		{"a Campaign List page whose campaigns' offsets lose their colon, once", offsetsWithoutColon, "2.2", "is not a UTC offset", true, false},
		{"the same, on the independent implementation (altService, real rate-limit windows)", offsetsWithoutColon, "2.2", "is not a UTC offset", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &lateDefect{after: 700, breaks: tt.breaks}
			cfg := suite.Config{Handler: d, NoProfile: true}
			if tt.alt {
				as := altAccounts(t)
				d.next = newAltService(as, altLimit, altWindow, altOptions{}, altDefect{})
				cfg.Primary, cfg.Second, cfg.RateLimit, cfg.RateWindow = as[0], as[1], altLimit, altWindow
			} else {
				s, err := sim.New(context.Background(), sim.Config{Insecure: true, DataDir: t.TempDir(), AdminToken: "test-admin-token"})
				if err != nil {
					t.Fatalf("new simulator: %v", err)
				}
				t.Cleanup(func() { _ = s.Close() })
				as := devAccounts(t)
				d.next, cfg.AdminHandler, cfg.AdminToken = s.Handler(), s.AdminHandler(), "test-admin-token"
				cfg.Primary = as[0].credentials()
				cfg.Second = as[1].credentials()
			}
			res, err := suite.Run(context.Background(), cfg)
			if err != nil {
				t.Fatalf("run the suite: %v", err)
			}
			at := d.at.Load()
			if at <= 700 {
				t.Fatalf("the defect never appeared (%d requests): the run is too short for the test", d.n.Load())
			}
			if res.Verdict != suite.VerdictFail {
				t.Fatalf("verdict %s, want fail: a defect on request %d of %d passed", res.Verdict, at, d.n.Load())
			}
			var found, byObserver bool
			for _, sc := range res.FailedScenarios() {
				if slices.Contains(sc.FailureSections(), tt.section) && strings.Contains(sc.Message, tt.want) {
					found = true
					if slices.Contains(sc.Tags, matrix.Tag("every-answer")) {
						byObserver = true
						if !strings.Contains(sc.Message, "request "+strconv.FormatInt(at, 10)+" of the run") {
							t.Errorf("the observer's failure does not name request %d:\n%s", at, sc.Message)
						}
					}
				}
			}
			if byObserver != tt.observer {
				t.Errorf("reported by the observer: %v, want %v (reported once): %v", byObserver, tt.observer, failures(res))
			}
			if !found {
				t.Fatalf("no failure in §%s names %q; failures: %v", tt.section, tt.want, failures(res))
			}
			var md bytes.Buffer
			if err := res.WriteMarkdown(&md); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(md.String(), tt.want) || !strings.Contains(md.String(), "§"+tt.section) {
				t.Errorf("summary.md does not show the finding (%q, §%s)", tt.want, tt.section)
			}
			t.Logf("request %d of %d broken: %v", at, d.n.Load(), failures(res))
		})
	}
}

// offsetsWithoutColon serves a Campaign List page whose campaigns' offsets
// lose their colon (§2.2: +HH:MM), and reports whether it broke one.
func offsetsWithoutColon(w http.ResponseWriter, r *http.Request, next http.Handler) bool {
	rec := httptest.NewRecorder()
	next.ServeHTTP(rec, r)
	body := rec.Body.Bytes()
	broken := rec.Code == http.StatusOK && strings.HasSuffix(r.URL.Path, "/"+spec.PathCampaignList) && bytes.Contains(body, []byte(`"offset":"`))
	if broken {
		body = regexp.MustCompile(`("offset": ?"[+-]\d\d):(\d\d")`).ReplaceAll(body, []byte("$1$2"))
	}
	for k, vs := range rec.Header() {
		w.Header()[k] = vs
	}
	w.Header().Del("Content-Length")
	w.WriteHeader(rec.Code)
	_, _ = w.Write(body)
	return broken
}
