package dashboard_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/controlapi"
	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/simulator/simtest"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

var screenshotDir = flag.String("screenshots", "", "save a screenshot of each dashboard page into this directory as dashboard-<page>.png (docs/img)")

// chromiumPath returns Chromium's path; without one the test skips, or
// fails under REQUIRE_CHROMIUM=1 (CI), as the HTML report's test does.
func chromiumPath(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("REQUIRE_CHROMIUM") == "1" {
			t.Fatal("REQUIRE_CHROMIUM=1 but chromium is not on PATH (Debian: apt-get install chromium)")
		}
		t.Skip("chromium is not on PATH (Debian: apt-get install chromium); set REQUIRE_CHROMIUM=1 to fail instead")
	}
	return bin
}

// browser starts headless Chromium for the test, at 1280 px wide; it
// trusts the simulator's self-signed certificate by ignoring certificate
// errors (the simulator's own, made for this test alone).
func browser(t *testing.T, width, height int) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.NoSandbox, // the tests may run as root
		chromedp.Flag("ignore-certificate-errors", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(width, height),
	)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelC(); cancelA() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

func run(t *testing.T, ctx context.Context, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	// A minute for any step: generous on a loaded machine, and a failing
	// wait says so long before the test's own deadline.
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("browser: %v", err)
	}
}

// css selects the first element a CSS selector matches.
func css(sel string) chromedp.CSS { return chromedp.CSS(sel) }

// into runs a, which reads a value, and keeps the value in dst.
func into[T any](a chromedp.Action[T], dst *T) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		v, err := a(ctx, t)
		*dst = v
		return chromedp.Void{}, err
	}
}

// attr reads an attribute of the element sel selects.
func attr(sel, name string) chromedp.Action[string] {
	return func(ctx context.Context, t *chromedp.Target) (string, error) {
		r, err := chromedp.AttributeValue(css(sel), name)(ctx, t)
		return r.Value, err
	}
}

// login logs in through the form with token.
func login(t *testing.T, ctx context.Context, s *simtest.Simulator, token string) {
	t.Helper()
	run(t, ctx,
		chromedp.Navigate(s.AdminURL+"/ui/"),
		chromedp.WaitVisible(css("#token")),
		chromedp.SendKeys(css("#token"), token),
		chromedp.Click(css("#login-submit")),
	)
}

// partner sends one Campaign List (spec §4.2) as account a and answers
// the status and the X-Request-Id.
func partner(t *testing.T, s *simtest.Simulator, a simulator.Account) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.URL+"/"+spec.PathCampaignList, strings.NewReader(`{"limit": 2, "page": 1}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", spec.ContentType)
	req.Header.Set(spec.HeaderAPIKey, a.APIKey)
	req.Header.Set(spec.HeaderAPISecret, a.APISecret)
	req.Header.Set(spec.HeaderAccountID, a.AccountID)
	res, err := s.HTTPClient().Do(req)
	if err != nil {
		t.Fatalf("partner request: %v", err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode, res.Header.Get("X-Request-Id")
}

// sendRaw sends a Campaign List as account a with body and extra headers,
// and answers its X-Request-Id.
func sendRaw(t *testing.T, s *simtest.Simulator, a simulator.Account, body string, extra map[string]string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.URL+"/"+spec.PathCampaignList, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", spec.ContentType)
	req.Header.Set(spec.HeaderAPIKey, a.APIKey)
	req.Header.Set(spec.HeaderAPISecret, a.APISecret)
	req.Header.Set(spec.HeaderAccountID, a.AccountID)
	for k, v := range extra {
		req.Header.Set(k, v)
	}
	res, err := s.HTTPClient().Do(req)
	if err != nil {
		t.Fatalf("partner request: %v", err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.Header.Get("X-Request-Id")
}

// curlCampaignList sends a Campaign List with curl, as a person at the
// desk would, and answers its X-Request-Id.
func curlCampaignList(t *testing.T, s *simtest.Simulator, a simulator.Account) string {
	t.Helper()
	curl, err := exec.LookPath("curl")
	if err != nil {
		_, id := partner(t, s, a) // the same request without curl
		return id
	}
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, s.CACertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(curl, "-sS", "-D", "-", "-o", "/dev/null", "--cacert", ca, "-X", "POST", s.URL+"/"+spec.PathCampaignList,
		"-H", "Content-Type: "+spec.ContentType, "-H", spec.HeaderAPIKey+": "+a.APIKey, "-H", spec.HeaderAPISecret+": "+a.APISecret,
		"-H", spec.HeaderAccountID+": "+a.AccountID, "-d", `{"limit": 2, "page": 1}`).Output()
	if err != nil {
		t.Fatalf("curl: %v", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(k, "X-Request-Id") {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("curl's answer has no X-Request-Id:\n%s", out)
	return ""
}

// controlGet answers a control API call's body, with the bearer token.
func controlGet(t *testing.T, s *simtest.Simulator, path string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.AdminURL+path, nil)
	req.Header.Set("Authorization", "Bearer "+s.AdminToken)
	res, err := s.HTTPClient().Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return string(b)
}

func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if *screenshotDir == "" {
		return
	}
	var png []byte
	run(t, ctx, chromedp.Sleep(300*time.Millisecond), into(chromedp.FullScreenshot(100), &png))
	if !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("screenshot of %s is not a PNG", name)
	}
	if err := os.WriteFile(filepath.Join(*screenshotDir, "dashboard-"+name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDashboardInChromium drives the dashboard in headless Chromium
// through every scenario of issue 30's "Tested in a real browser", in
// order on one simulator: each step leaves what the next one reads.
func TestDashboardInChromium(t *testing.T) {
	ctx := browser(t, 1280, 900)
	s := simtest.New(t)
	alpha, bravo := s.Accounts[0], s.Accounts[1]
	// A throwaway account that plays a profile of its own: fixed clock
	// windows where the default's is sliding (spec §8 is silent on it).
	own := mustProfile(t, "partner staging (fixed windows)", simulator.WindowFixedClock)
	staging, err := s.Control.CreateAccount(context.Background(), simulator.AccountSpec{Name: "Staging client", Profile: own})
	if err != nil {
		t.Fatalf("create account: %v", err)
	}

	var firstID string // the first request sent: pushed out of the exchanges kept in full, later
	t.Run("a wrong token is refused", func(t *testing.T) {
		login(t, ctx, s, "not-the-token")
		var msg string
		var status int64
		run(t, ctx,
			chromedp.WaitVisible(css("#login-error")),
			into(chromedp.Text(css("#login-error")), &msg),
			into(chromedp.Evaluate[int64](`fetch("/ui/api/overview").then(r => r.status)`, chromedp.EvalAwaitPromise), &status),
		)
		if !strings.Contains(msg, "Wrong token") {
			t.Fatalf("login error %q, want it to say the token is wrong", msg)
		}
		if status != http.StatusUnauthorized {
			t.Fatalf("GET /ui/api/overview after a wrong token: %d, want 401", status)
		}
		screenshot(t, ctx, "login")
	})

	t.Run("log in", func(t *testing.T) {
		login(t, ctx, s, s.AdminToken)
		var rows int
		run(t, ctx,
			chromedp.WaitVisible(css(`#accounts tbody tr[data-account="`+alpha.AccountID+`"]`)),
			into(chromedp.Evaluate[int](`document.querySelectorAll("#accounts tbody tr").length`), &rows),
		)
		if rows != len(s.Accounts)+1 {
			t.Fatalf("the overview lists %d accounts, want %d (and the throwaway one)", rows, len(s.Accounts)+1)
		}
	})

	t.Run("a Campaign List sent with curl appears in the journal within a second", func(t *testing.T) {
		run(t, ctx, chromedp.Navigate(s.AdminURL+"/ui/journal"),
			chromedp.WaitVisible(css(`#stream-state.ok`)))
		// A timed probe on a loaded machine: up to three requests; one
		// shown within a second passes, and each must show at all.
		var best time.Duration
		for try := 0; try < 3; try++ {
			start := time.Now()
			id := curlCampaignList(t, s, alpha)
			if firstID == "" {
				firstID = id
			}
			run(t, ctx, chromedp.WaitVisible(css(`#journal tr[data-request-id="`+id+`"]`)))
			took := time.Since(start)
			t.Logf("request %s shown %v after it was sent", id, took)
			if best = took; took <= time.Second {
				break
			}
		}
		if best > time.Second {
			t.Fatalf("the journal showed the request %v after it was sent (three tries), want within a second", best)
		}
		screenshot(t, ctx, "journal")
	})

	t.Run("a click opens the request and the answer, credentials masked", func(t *testing.T) {
		_, id := partner(t, s, alpha)
		var req, ans string
		run(t, ctx,
			chromedp.WaitVisible(css(`#journal tr[data-request-id="`+id+`"] button`)),
			chromedp.Click(css(`#journal tr[data-request-id="`+id+`"] button`)),
			chromedp.WaitVisible(css("#entry-request")),
			into(chromedp.Text(css("#entry-request")), &req),
			into(chromedp.Text(css("#entry-answer")), &ans),
		)
		if !strings.Contains(req, "POST "+s.URL[strings.Index(s.URL, "/v3"):]+"/"+spec.PathCampaignList) || !strings.Contains(strings.ToLower(req), "x-api-key: ") ||
			!strings.Contains(req, "X-Api-Secret: ******** (never kept)") || !strings.Contains(req, "Content-Type: "+spec.ContentType) {
			t.Fatalf("the request shown is %q", req)
		}
		// The bodies, each pretty-printed JSON.
		var reqBody, ansBody string
		run(t, ctx, into(chromedp.Text(css("#entry-request-body")), &reqBody), into(chromedp.Text(css("#entry-answer-body")), &ansBody))
		if reqBody != "{\n  \"limit\": 2,\n  \"page\": 1\n}" || !strings.Contains(ansBody, "\n  \"campaigns\": [") {
			t.Fatalf("the bodies shown are %q and %q, want the request's and the answer's JSON, indented", reqBody, ansBody)
		}
		if strings.Contains(req, alpha.APIKey) || strings.Contains(req, alpha.APISecret) {
			t.Fatalf("the request shown holds a credential: %q", req)
		}
		if !strings.Contains(ans, "HTTP 200") || !strings.Contains(ans, "X-Request-Id: "+id) {
			t.Fatalf("the answer shown is %q", ans)
		}

		// Filtered to 4xx: a refused request shows, the 200s do not.
		wrong := alpha
		wrong.APISecret = "not-the-secret"
		_, refused := partner(t, s, wrong)
		var statuses []string
		run(t, ctx,
			into(chromedp.Evaluate[bool](`(() => { const f = document.getElementById("f-status"); f.value = "4"; f.dispatchEvent(new Event("change")); return true })()`), new(bool)),
			chromedp.WaitVisible(css(`#journal tr[data-request-id="`+refused+`"]`)),
			into(chromedp.Evaluate[[]string](`[...document.querySelectorAll("#journal tbody tr")].map(r => r.dataset.status)`), &statuses),
			into(chromedp.Evaluate[bool](`(() => { const f = document.getElementById("f-status"); f.value = ""; f.dispatchEvent(new Event("change")); return true })()`), new(bool)),
		)
		for _, st := range statuses {
			if !strings.HasPrefix(st, "4") {
				t.Fatalf("filtered to 4xx, the journal shows statuses %v", statuses)
			}
		}
	})

	t.Run("120 rapid requests: the overview's budget reaches the limit and the report shows a §8 finding", func(t *testing.T) {
		var wg sync.WaitGroup
		var mu sync.Mutex
		refused := 0
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 15; i++ {
					if st, _ := partner(t, s, alpha); st == http.StatusTooManyRequests {
						mu.Lock()
						refused++
						mu.Unlock()
					}
				}
			}()
		}
		wg.Wait()
		if refused == 0 {
			t.Fatal("120 requests in a burst met no 429: the limit is not 100 per minute")
		}
		var used, frees string
		row := `#accounts tr[data-account="` + alpha.AccountID + `"]`
		run(t, ctx, chromedp.Navigate(s.AdminURL+"/ui/"),
			chromedp.WaitVisible(css(row+" .refused")),
			into(chromedp.Text(css(row+" .used")), &used),
			into(chromedp.Text(css(row+" .refused")), &frees),
		)
		if used != "100 / 100" || !strings.Contains(frees, "limit reached") {
			t.Fatalf("the overview shows %q, %q; want 100 / 100 and the limit reached", used, frees)
		}
		screenshot(t, ctx, "overview")
		var kind string
		run(t, ctx, chromedp.Navigate(s.AdminURL+"/ui/report?account="+alpha.AccountID),
			chromedp.WaitVisible(css(`#findings tr[data-section="§8"]`)),
			into(attr(`#findings tr[data-section="§8"]`, "data-kind"), &kind),
		)
		if kind == "" {
			t.Fatal("the §8 finding has no kind")
		}
		var href string
		run(t, ctx, into(attr(`#findings tr[data-section="§8"] td a[href^="/ui/spec"]`, "href"), &href))
		if href != "/ui/spec#s-8" {
			t.Fatalf("the finding's § links to %q, want /ui/spec#s-8", href)
		}
		screenshot(t, ctx, "report")
		// The finding's example request opens in the journal.
		var example, opened string
		run(t, ctx, into(chromedp.Text(css(`#findings tr[data-section="§8"] td:last-child a`)), &example),
			chromedp.Click(css(`#findings tr[data-section="§8"] td:last-child a`)),
			chromedp.WaitVisible(css("#entry-answer")), into(chromedp.Text(css("#entry-answer")), &opened))
		if example == "" || !strings.Contains(opened, "X-Request-Id: "+example) {
			t.Fatalf("the example %q opened %q", example, opened)
		}
	})

	t.Run("a refused request opens with the answer's error message and Retry-After", func(t *testing.T) {
		st, id := partner(t, s, alpha) // the budget is spent: a 429 (spec §8)
		if st != http.StatusTooManyRequests {
			t.Fatalf("Alpha's request after the burst: %d, want 429", st)
		}
		var ans, ansBody, reqNote string
		run(t, ctx, chromedp.Navigate(s.AdminURL+"/ui/journal"),
			chromedp.WaitVisible(css(`#journal tr[data-request-id="`+id+`"] button`)),
			into(chromedp.Evaluate[bool](`(() => { const f = document.getElementById("f-status"); f.value = "429"; f.dispatchEvent(new Event("change")); return true })()`), new(bool)),
			chromedp.Click(css(`#journal tr[data-request-id="`+id+`"] button`)),
			chromedp.WaitVisible(css("#entry-answer-body")),
			into(chromedp.Text(css("#entry-answer")), &ans),
			into(chromedp.Text(css("#entry-answer-body")), &ansBody),
			into(chromedp.Text(css("#entry-request-body-note")), &reqNote),
		)
		if !strings.Contains(ans, "HTTP 429") || !regexp.MustCompile(`(?m)^Retry-After: [1-9][0-9]*$`).MatchString(ans) {
			t.Fatalf("the 429's answer shown is %q, want its Retry-After", ans)
		}
		if want := "{\n  \"error\": \"" + spec.MsgRateLimit + "\"\n}"; ansBody != want {
			t.Fatalf("the 429's body shown is %q, want %q", ansBody, want)
		}
		if !strings.HasPrefix(reqNote, "Body not read: ") {
			t.Fatalf("the refused request's body is shown as %q, want it said not read (refused on its headers)", reqNote)
		}
		screenshot(t, ctx, "journal-request")
		run(t, ctx, into(chromedp.Evaluate[bool](`(() => { const f = document.getElementById("f-status"); f.value = ""; f.dispatchEvent(new Event("change")); return true })()`), new(bool)))
	})

	t.Run("a fault added through the form makes the next request fail as the fault says", func(t *testing.T) {
		var refusedMsg, added string
		run(t, ctx, chromedp.Navigate(s.AdminURL+"/ui/faults"),
			chromedp.WaitReady(css(`#fault-account option[value="`+bravo.AccountID+`"]`)),
			// A status that is not 5xx: refused with the control API's own message.
			chromedp.SetValue(css("#fault-operation"), spec.PathCampaignList),
			chromedp.SetValue(css("#fault-kind"), simulator.FaultError),
			chromedp.SetValue(css("#fault-account"), bravo.AccountID),
			chromedp.SendKeys(css("#fault-status"), "404"),
			chromedp.Click(css("#fault-add")),
			chromedp.WaitVisible(css("#fault-result.error")),
			into(chromedp.Text(css("#fault-result")), &refusedMsg),
		)
		if want := "Refused: status must be a 5xx status, from 500 to 599"; refusedMsg != want {
			t.Fatalf("the form says %q, want %q (the control API's message)", refusedMsg, want)
		}
		run(t, ctx,
			chromedp.SetValue(css("#fault-status"), "503"),
			chromedp.Click(css("#fault-add")),
			chromedp.WaitVisible(css("#fault-result.ok")),
			into(chromedp.Text(css("#fault-result")), &added),
			chromedp.WaitVisible(css("#faults tbody tr")),
		)
		screenshot(t, ctx, "faults")
		if st, _ := partner(t, s, bravo); st != http.StatusServiceUnavailable {
			t.Fatalf("Bravo's next Campaign List after %q: %d, want 503", added, st)
		}
		if st, _ := partner(t, s, bravo); st != http.StatusOK {
			t.Fatalf("Bravo's request after the one-shot fault: %d, want 200", st)
		}
	})

	t.Run("the clock advanced through the form frees the budget", func(t *testing.T) {
		if st, _ := partner(t, s, alpha); st != http.StatusTooManyRequests {
			t.Fatalf("Alpha before the clock moves: %d, want 429 (its budget is spent)", st)
		}
		var result string
		run(t, ctx, chromedp.Navigate(s.AdminURL+"/ui/faults"),
			chromedp.WaitReady(css(`#clock-account option[value="`+alpha.AccountID+`"]`)),
			chromedp.SendKeys(css("#clock-advance"), "61s"),
			chromedp.SetValue(css("#clock-account"), alpha.AccountID),
			chromedp.Click(css("#clock-submit")),
			chromedp.WaitVisible(css("#clock-result.ok")),
			into(chromedp.Text(css("#clock-result")), &result),
		)
		if st, _ := partner(t, s, alpha); st != http.StatusOK {
			t.Fatalf("Alpha after %q: %d, want 200", result, st)
		}
	})

	t.Run("a cross-site form post is refused", func(t *testing.T) {
		before := controlGet(t, s, "/faults")
		// A page of another origin that posts a form to the dashboard, as
		// an attacker's site would while the person is logged in.
		evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `<!doctype html><form id="f" method="post" action="%s/ui/api/faults">
<input name="operation" value="*"><input name="kind" value="drop"></form>
<script>document.getElementById("f").submit()</script>`, s.AdminURL)
		}))
		defer evil.Close()
		var body string
		run(t, ctx, chromedp.Navigate(evil.URL),
			chromedp.WaitReady(css("body")),
			into(chromedp.Poll[bool](`location.href.includes("/ui/api/faults") && document.body.innerText.length > 0`, chromedp.WithPollingTimeout(30*time.Second)), new(bool)),
			into(chromedp.Text(css("body")), &body),
		)
		if !strings.Contains(body, "refused") && !strings.Contains(body, "log in first") {
			t.Fatalf("the cross-site post was answered %q, want a refusal", body)
		}
		if after := controlGet(t, s, "/faults"); after != before {
			t.Fatalf("the cross-site post changed the faults: %s, was %s", after, before)
		}
	})

	t.Run("a narrow window: the page fits, and the keyboard reaches the navigation", func(t *testing.T) {
		var overflow bool
		var tabbed string
		run(t, ctx, chromedp.EmulateViewport(420, 900), chromedp.Navigate(s.AdminURL+"/ui/"),
			chromedp.WaitVisible(css(`#accounts tbody tr`)),
			into(chromedp.Evaluate[bool](`document.body.scrollWidth > window.innerWidth`), &overflow))
		if overflow {
			t.Fatal("at 420 px the page is wider than the window")
		}
		screenshot(t, ctx, "overview-narrow")
		defer run(t, ctx, chromedp.EmulateViewport(1280, 900))
		// Tab from the top: the skip link first, then the navigation.
		run(t, ctx, chromedp.KeyEvent("\t"), chromedp.KeyEvent("\t"),
			into(chromedp.Evaluate[string](`document.activeElement.textContent`), &tabbed))
		if tabbed != "Overview" {
			t.Fatalf("the second Tab reaches %q, want the navigation's Overview", tabbed)
		}
	})

	t.Run("a request no longer kept in full says so", func(t *testing.T) {
		// Push the first request out of the ring of exchanges kept in full
		// (controlapi.DefaultExchanges); the journal, which keeps more,
		// still lists it.
		var wg sync.WaitGroup
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < (controlapi.DefaultExchanges+7)/8; i++ {
					partner(t, s, bravo)
				}
			}()
		}
		wg.Wait()
		var gone, req string
		run(t, ctx, chromedp.Navigate(s.AdminURL+"/ui/journal#req="+firstID), chromedp.WaitVisible(css("#entry-gone")),
			into(chromedp.Text(css("#entry-gone")), &gone), into(chromedp.Text(css("#entry-request")), &req))
		if !strings.Contains(gone, "no longer kept in full") || !strings.Contains(req, "X-Api-Secret: ******** (never kept)") {
			t.Fatalf("a request out of the ring shows %q and %q, want it to say its headers and bodies are no longer kept, and its journal entry", gone, req)
		}
	})

	t.Run("no secret of any account on any page or stream", func(t *testing.T) {
		// A request that presents a wrong secret: the simulator must not
		// keep that either.
		wrong := alpha
		wrong.APISecret = "presented-but-wrong-secret-0123456789"
		if st, _ := partner(t, s, wrong); st != http.StatusUnauthorized {
			t.Fatalf("a wrong secret: %d, want 401", st)
		}
		// A request with the secret in a body field and in a header of its
		// own besides x-api-secret: the simulator keeps it in full, the
		// secret hidden wherever it was.
		inBody := sendRaw(t, s, alpha, `{"limit": 2, "page": 1, "note": "`+alpha.APISecret+`"}`, map[string]string{"X-Debug": alpha.APISecret})
		secrets := map[string]string{"the control API token": s.AdminToken, "a presented secret": wrong.APISecret}
		for _, a := range append(s.Accounts, staging.Account) {
			secrets[a.Name+"'s secret"], secrets[a.Name+"'s whole API key"] = a.APISecret, a.APIKey
		}
		scan := func(where, text string) {
			t.Helper()
			for what, v := range secrets {
				if strings.Contains(text, v) {
					t.Errorf("%s shows %s", where, what)
				}
			}
		}
		pages := map[string]string{ // page -> what shows its content is in
			"/ui/": "#accounts tbody tr", "/ui/journal": "#journal tbody tr", "/ui/faults": "#faults",
			"/ui/profile": "#profiles section", "/ui/spec": "#sections dt"}
		for _, a := range append(s.Accounts, staging.Account) {
			pages["/ui/report?account="+url.QueryEscape(a.AccountID)] = "#report p"
		}
		for p, ready := range pages {
			var html string
			run(t, ctx, chromedp.Navigate(s.AdminURL+p), chromedp.WaitReady(css(ready)), chromedp.Sleep(200*time.Millisecond),
				into(chromedp.OuterHTML(css("html")), &html))
			scan("page "+p, html)
		}
		// The journal's detail of the refused request, opened.
		var detail string
		run(t, ctx, chromedp.Navigate(s.AdminURL+"/ui/journal"), chromedp.WaitReady(css(`#journal tr[data-status="401"] button`)),
			chromedp.Click(css(`#journal tr[data-status="401"] button`)), chromedp.WaitVisible(css("#entry-request")),
			into(chromedp.OuterHTML(css("html")), &detail))
		scan("the journal's detail of a 401", detail)
		var shown string
		// From another page: the same page with another #req is no new load.
		run(t, ctx, chromedp.Navigate(s.AdminURL+"/ui/faults"), chromedp.Navigate(s.AdminURL+"/ui/journal#req="+inBody), chromedp.WaitVisible(css("#entry-request-body")),
			into(chromedp.Text(css("#entry-request-body")), &shown), into(chromedp.OuterHTML(css("html")), &detail))
		scan("the journal's detail of a request with the secret in its body", detail)
		if !strings.Contains(shown, `"note": "******** (never kept)"`) {
			t.Errorf("the body with a secret is shown as %q, want the secret hidden in its place", shown)
		}
		var login string
		run(t, ctx, chromedp.Navigate(s.AdminURL+"/ui/login"), chromedp.WaitReady(css("#token")), into(chromedp.OuterHTML(css("html")), &login))
		scan("the login page", login)
		// Every read of the dashboard's, and the stream, as a client reads them.
		c, _ := session(t, s)
		for _, p := range dashboardReads(alpha.AccountID) {
			scan("GET "+p, get(t, c, s.AdminURL+p, http.StatusOK))
		}
		scan("GET /ui/api/accounts/…/report of Bravo", get(t, c, s.AdminURL+"/ui/api/accounts/"+bravo.AccountID+"/report", http.StatusOK))
		scan("GET /ui/api/journal/{the request with the secret in its body}", get(t, c, s.AdminURL+"/ui/api/journal/"+inBody, http.StatusOK))
		scan("GET /journal/{the request with the secret in its body}", controlGet(t, s, "/journal/"+inBody))
		done := make(chan string)
		go func() { done <- readStream(t, c, s.AdminURL+"/ui/events", 105, 30*time.Second) }()
		time.Sleep(200 * time.Millisecond)
		for range 3 {
			partner(t, s, wrong)
			partner(t, s, bravo)
		}
		stream := <-done
		if n := strings.Count(stream, "event: entry"); n < 105 {
			t.Fatalf("the stream carried %d entries, want the 100 latest and the 6 sent meanwhile (at least 105)", n)
		}
		scan("the journal stream", stream)
	})

	t.Run("the profile and spec pages render", func(t *testing.T) {
		var text string
		run(t, ctx, chromedp.Navigate(s.AdminURL+"/ui/profile"),
			chromedp.WaitVisible(css(`#profiles section[data-account="`+alpha.AccountID+`"]`)),
			into(chromedp.Text(css(`#profiles section[data-account="`+alpha.AccountID+`"]`)), &text))
		if !strings.Contains(text, "Every choice as the default") {
			t.Fatalf("Alpha plays the default profile; the page says %q", text)
		}
		var differ string
		staged := `#profiles section[data-account="` + staging.AccountID + `"]`
		run(t, ctx, into(chromedp.Text(css(staged)), &text), into(chromedp.Text(css(staged+" td.verdict-differ")), &differ),
			into(chromedp.Text(css(staged+" tr:has(td.verdict-differ) code")), &differ))
		if !strings.Contains(text, "partner staging (fixed windows)") || !strings.Contains(text, "1 choice differs") || differ != "rateLimit.window" {
			t.Fatalf("the staging account's profile reads %q (differing %q); want its name and rateLimit.window differing", text, differ)
		}
		screenshot(t, ctx, "profile")
		run(t, ctx, chromedp.Navigate(s.AdminURL+"/ui/spec#s-8"),
			chromedp.WaitVisible(css("#s-8")), into(chromedp.Text(css("#s-8")), &text))
		if !strings.HasPrefix(text, "§8 ") {
			t.Fatalf("the spec page's §8 reads %q", text)
		}
		run(t, ctx, into(chromedp.Text(css("#s-8 + dd")), &text))
		if !strings.Contains(text, "Refused 429 by the rate limiter, and not waited out") {
			t.Fatalf("the spec page's §8 lists %q; want the report's §8 findings", text)
		}
		screenshot(t, ctx, "spec")
	})
}

// mustProfile is the default profile named name, with the rate window
// window: a profile that differs from the default by one choice.
func mustProfile(t *testing.T, name, window string) json.RawMessage {
	t.Helper()
	var p map[string]any
	if err := json.Unmarshal(profile.DefaultJSON(), &p); err != nil {
		t.Fatal(err)
	}
	p["source"].(map[string]any)["name"] = name
	p["rateLimit"].(map[string]any)["window"].(map[string]any)["value"] = window
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDashboardPaceNoteInChromium: under a limit other than the spec's, the
// client report page adds the pace note: how the client would fare at 100
// a minute (spec §8).
func TestDashboardPaceNoteInChromium(t *testing.T) {
	ctx := browser(t, 1280, 900)
	s := simtest.New(t, simtest.WithRateLimit(1000, time.Minute))
	alpha := s.Accounts[0]
	for range 3 {
		if st, _ := partner(t, s, alpha); st != http.StatusOK {
			t.Fatalf("status %d", st)
		}
	}
	login(t, ctx, s, s.AdminToken)
	var note string
	run(t, ctx, chromedp.WaitVisible(css("#accounts")), chromedp.Navigate(s.AdminURL+"/ui/report?account="+url.QueryEscape(alpha.AccountID)),
		chromedp.WaitVisible(css("#pace-note")), into(chromedp.Text(css("#pace-note")), &note))
	if !strings.Contains(note, "100") {
		t.Fatalf("the pace note reads %q; want it to measure against the spec's 100 a minute", note)
	}
}
