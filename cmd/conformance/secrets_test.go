package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"html"
	"html/template"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/steps/suite"
)

// echoAccounts are the run's credentials in the secrets tests. They hold
// what JSON, HTML and XML escape (/ + = " \ < & >), so that an escaped
// echo is a form of its own to find; the second account's key shares a
// prefix with the first's.
var echoAccounts = []control.Credentials{
	{APIKey: "pk_test/Alpha+7f3c2b9e==", APISecret: `sk_test"Alpha\9d41e6a0c58b<&>`, AccountID: "acc_enc_QWxwaGFQYXJ0bmVy/+="},
	{APIKey: "pk_test/Bravo+1a9e4d6f==", APISecret: `sk_test"Bravo\5c27f8b3e901<&>`, AccountID: "acc_enc_QnJhdm9QYXJ0bmVy/+="},
}

// echoService is a target that shows every credential it is sent: each
// answer carries the three headers in a response header (and the secret in
// one of its own name), each error body
// quotes them in its message, as JSON, and again as PHP writes JSON (with
// `\/`), each success body in a field the spec does not list, and a
// campaign's statusColor is the secret. It implements just enough of the
// spec for a run to go through, with failures (one whose message quotes
// the statusColor) and warnings (the extra field).
type echoService struct {
	accounts map[string]control.Credentials // by key
}

func (s *echoService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key, secret, id := r.Header.Get("x-api-key"), r.Header.Get("x-api-secret"), r.Header.Get("x-account-id")
	given := map[string]string{"x-api-key": key, "x-api-secret": secret, "x-account-id": id}
	asJSON, _ := json.Marshal(given)
	w.Header().Set("X-Echo-Credentials", key+" "+secret+" "+id)
	w.Header().Set("X-Api-Secret", secret)
	w.Header().Set("Content-Type", "application/json")
	fail := func(status int, msg string) {
		m, _ := json.Marshal(fmt.Sprintf("%s (given x-api-key %s, x-api-secret %s, x-account-id %s)", msg, key, secret, id))
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"error":%s,"given":%s,"php":%s}`, m, asJSON, strings.ReplaceAll(string(asJSON), "/", `\/`))
	}
	ok := func(v map[string]any) {
		v["given"] = given
		_ = json.NewEncoder(w).Encode(v)
	}
	op, found := strings.CutPrefix(r.URL.Path, "/v3/partner/webhook/")
	if !found || r.Method != http.MethodPost || (op != "contact/add" && op != "campaign/list" && op != "campaign/stats") {
		fail(http.StatusNotFound, "No such operation")
		return
	}
	a, known := s.accounts[key]
	switch {
	case !known || a.APISecret != secret:
		fail(http.StatusUnauthorized, "Invalid API credentials")
		return
	case a.AccountID != id:
		fail(http.StatusForbidden, "Unauthorized account access")
		return
	}
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		fail(http.StatusBadRequest, "Body is not JSON")
		return
	}
	switch op {
	case "contact/add":
		if body["email"] == nil && body["phoneNo"] == nil {
			fail(http.StatusBadRequest, "Either email or phoneNo is required")
			return
		}
		ok(map[string]any{"status": "success", "contactId": "c-000001"})
	case "campaign/list":
		ok(map[string]any{"pageNo": 1, "pageSize": 50, "totalPages": 1, "totalRecords": 1, "filteredRecords": 1, "campaigns": []map[string]any{{
			"Id": 7, "campaignName": "Spring", "campaignType": 0, "campaignChannel": "email", "status": "Scheduled", "statusColor": secret,
			"active": 1, "scheduledOn": "2026-03-04T05:06:07.123Z", "scheduledTimeZone": "EST", "offset": "-05:00", "autoResend": 0,
			"broadcastOn": "2026-03-04T05:06:07.000Z", "broadcast": 1, "createdAt": "2026-01-01T00:00:00.000Z",
			"updatedAt": "2026-02-01T00:00:00.999Z", "reason": nil,
		}}})
	case "campaign/stats":
		if _, ok := body["campaignId"]; !ok {
			fail(http.StatusBadRequest, "CampaignId is required")
			return
		}
		ok(map[string]any{
			"emailStat": map[string]int{"Sent": 0, "Opened": 0, "Delivered": 0, "Hardbounce": 0, "Softbounce": 0, "Failed": 0, "Clicked": 0, "Unsubscribe": 0, "Complained": 0},
			"smsStat":   map[string]int{"Sent": 0, "Delivered": 0, "Failed": 0},
		})
	}
}

// startEcho starts an echoService over HTTPS that knows the given
// accounts, and returns its base URL and certificate file.
func startEcho(t *testing.T, accounts ...control.Credentials) (string, string) {
	t.Helper()
	s := &echoService{accounts: map[string]control.Credentials{}}
	for _, a := range accounts {
		s.accounts[a.APIKey] = a
	}
	srv := httptest.NewTLSServer(s)
	t.Cleanup(srv.Close)
	return srv.URL + "/v3/partner/webhook", writeCert(t, srv)
}

// echoArgs are the runner's flags for a run with the echoAccounts, every
// report format, no rate-limit scenario and no wait.
func echoArgs(baseURL, caFile, dir string) []string {
	p, s := echoAccounts[0], echoAccounts[1]
	return []string{
		"--base-url", baseURL, "--ca-cert", caFile,
		"--api-key", p.APIKey, "--api-secret", p.APISecret, "--account-id", p.AccountID,
		"--second-api-key", s.APIKey, "--second-api-secret", s.APISecret, "--second-account-id", s.AccountID,
		"--tags", "@normative && ~@rate-limit", "--rate-limit", "1000", "--rate-window", "1m",
		"--format", "pretty,progress,cucumber,junit,html", "--report-dir", dir, "--no-colors", "--no-profile",
	}
}

// runEcho runs the runner with echoArgs against an echoing target that
// knows the given accounts and wants exit status want (why, if any, says
// why); it returns the report directory and the run's stdout and stderr.
func runEcho(t *testing.T, want int, why string, accounts ...control.Credentials) (dir string, stdout, stderr *bytes.Buffer) {
	t.Helper()
	baseURL, caFile := startEcho(t, accounts...)
	dir, stdout, stderr = t.TempDir(), &bytes.Buffer{}, &bytes.Buffer{}
	if code := run(context.Background(), echoArgs(baseURL, caFile, dir), stdout, stderr); code != want {
		t.Fatalf("exit status %d, want %d%s\nstdout:\n%s\nstderr:\n%s", code, want, why, stdout.String(), stderr.String())
	}
	return dir, stdout, stderr
}

// eachReport calls check with the name and text of every file of the
// report directory dir.
func eachReport(t *testing.T, dir string, check func(name, text string)) {
	t.Helper()
	files, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(dir, f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		check(f.Name(), string(b))
	}
}

// leakForms are the texts no output may hold: every credential of the
// run, and each with its last character cut (what is left of the value the
// suite derives from it on purpose), as they are and in every escaped form
// a report could write them in.
func leakForms() map[string]string {
	forms := map[string]string{}
	add := func(what, v string) {
		q := strconv.Quote(v)
		var x bytes.Buffer
		_ = xml.EscapeText(&x, []byte(v))
		for _, f := range [][2]string{
			{"plain", v},
			{"Go-quoted", q[1 : len(q)-1]},
			{"JSON-escaped", jsonInner(v, true)},
			{`JSON-escaped with \/`, strings.ReplaceAll(jsonInner(v, true), "/", `\/`)},
			{"JSON without HTML escapes", jsonInner(v, false)},
			{`JSON without HTML escapes, with \/`, strings.ReplaceAll(jsonInner(v, false), "/", `\/`)},
			{"HTML-escaped", html.EscapeString(v)},
			{"HTML-template-escaped", template.HTMLEscapeString(v)},
			{"XML-escaped", x.String()},
		} {
			if _, seen := forms[f[1]]; !seen {
				forms[f[1]] = what + " (" + f[0] + ")"
			}
		}
	}
	for i, a := range echoAccounts {
		for what, v := range map[string]string{"x-api-key": a.APIKey, "x-api-secret": a.APISecret, "x-account-id": a.AccountID} {
			role := fmt.Sprintf("account %d's %s", i+1, what)
			add(role, v)
			add(role+" but its last character", v[:len(v)-1])
		}
	}
	return forms
}

// jsonInner is v as the inside of a JSON string, as encoding/json writes
// it, with or without its HTML escapes (\u003c for <).
func jsonInner(v string, escapeHTML bool) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(escapeHTML)
	_ = enc.Encode(v)
	s := strings.TrimSpace(b.String())
	return s[1 : len(s)-1]
}

// maskedForms are the credentials as the reports show them.
func maskedForms() []string {
	var out []string
	for _, a := range echoAccounts {
		out = append(out, suite.MaskCredential(a.APIKey), suite.MaskSecret(a.APISecret), suite.MaskCredential(a.AccountID))
	}
	return out
}

// checkNoLeak fails the test if text holds a credential in any form, and
// unless it shows one masked when it must.
func checkNoLeak(t *testing.T, name, text string, mustShowMasked bool) {
	t.Helper()
	for f, what := range leakForms() {
		if strings.Contains(text, f) {
			i := strings.Index(text, f)
			t.Errorf("%s shows %s: …%s…", name, what, text[max(0, i-80):min(len(text), i+len(f)+80)])
		}
	}
	if !mustShowMasked {
		return
	}
	for _, m := range maskedForms() {
		if strings.Contains(text, m) {
			return
		}
	}
	t.Errorf("%s shows no credential masked (%q): the test proves nothing of it", name, maskedForms())
}

// TestReportsHideEchoedSecrets runs the suite, with every report format,
// against a target that echoes the credentials it is sent in every answer's
// headers and in every body (spec §5 headers; the §4 and §7 bodies): no
// report file, nor stdout or stderr, may show any credential of either
// account, in any form, nor most of one (the suite's own wrong values
// derived from them); every report must show them masked.
func TestReportsHideEchoedSecrets(t *testing.T) {
	dir, stdout, stderr := runEcho(t, exitFail, " (the echoing target breaks the spec's messages)", echoAccounts...)
	r := readSummary(t, dir)
	if r.Failed == 0 || r.Warnings == 0 {
		t.Fatalf("%d failures, %d warnings: the reports would show no exchange", r.Failed, r.Warnings)
	}
	quoted := false
	for _, sc := range r.FailedScenarios() {
		quoted = quoted || strings.Contains(sc.Message, `"statusColor": "****(29 chars)" is not a hexadecimal colour`)
	}
	if !quoted {
		t.Errorf("no failure message quotes the echoed secret, masked")
	}
	want := map[string]bool{"summary.json": true, "summary.md": true, "exchanges.har": true, "certificate.json": true,
		"pretty.txt": true, "progress.txt": true, "cucumber.json": true, "junit.xml": true, "report.html": true}
	eachReport(t, dir, func(name, text string) {
		checkNoLeak(t, name, text, true)
		delete(want, name)
	})
	for f := range want {
		t.Errorf("the run wrote no %s", f)
	}
	checkNoLeak(t, "stdout", stdout.String(), true)
	checkNoLeak(t, "stderr", stderr.String(), false)
	// The echoes themselves are there, masked: the key the suite sent
	// with its last character changed leaves only that character.
	har, _ := os.ReadFile(filepath.Join(dir, "exchanges.har"))
	for _, want := range []string{
		"X-Echo-Credentials",
		"(given x-api-key pk_t…(24 chars), x-api-secret ****(29 chars), x-account-id acc_…(27 chars))",
		"(given x-api-key ****(23 chars)", // "pk_test/Alpha+7f3c2b9e=>"
	} {
		if !strings.Contains(string(har), want) {
			t.Errorf("exchanges.har lacks the echo %q", want)
		}
	}
	var doc struct {
		Log struct {
			Entries []struct {
				Request struct {
					Headers []struct{ Name, Value string }
				}
				Response struct {
					Headers []struct{ Name, Value string }
				}
			}
		}
	}
	if err := json.Unmarshal(har, &doc); err != nil || len(doc.Log.Entries) == 0 {
		t.Fatalf("exchanges.har: %v", err)
	}
	// Masked once, as the request's: a value masked twice would show the
	// length of its masked form.
	got := "(none)"
	for _, h := range doc.Log.Entries[0].Response.Headers {
		if h.Name == "X-Api-Secret" {
			got = h.Value
		}
	}
	if want := suite.MaskSecret(echoAccounts[0].APISecret); got != want {
		t.Errorf("the echoed X-Api-Secret of the first answer reads %q in exchanges.har, want %q", got, want)
	}
}

// TestNotRunHidesEchoedSecrets: a target that refuses the run's
// credentials and quotes them in its 401 stops the run at its preflight;
// the reason, on stderr, stdout and in the reports, quotes the answer,
// credentials masked.
func TestNotRunHidesEchoedSecrets(t *testing.T) {
	other := control.Credentials{APIKey: "pk_other_0000000000", APISecret: "sk_other_0000000000", AccountID: "acc_other_000000"}
	dir, stdout, stderr := runEcho(t, exitUsage, "", other)
	r := readSummary(t, dir)
	if r.Verdict != suite.VerdictNotRun || !strings.Contains(r.NotRun, "Invalid API credentials (given x-api-key pk_t…(24 chars)") {
		t.Fatalf("verdict %q, reason %q: want not run, with the target's message masked", r.Verdict, r.NotRun)
	}
	eachReport(t, dir, func(name, text string) {
		checkNoLeak(t, name, text, name != "cucumber.json" && name != "pretty.txt" && name != "progress.txt")
	})
	checkNoLeak(t, "stdout", stdout.String(), true)
	checkNoLeak(t, "stderr", stderr.String(), true)
}
