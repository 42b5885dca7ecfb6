package sim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/sim"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

var update = flag.Bool("update", false, "rewrite the golden files in fixtures/golden")

// call sends one partner request in-process as the first account.
func call(t *testing.T, s *sim.Simulator, op, body string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, spec.BasePath+"/"+op, strings.NewReader(body))
	a := s.Accounts[0]
	for k, v := range map[string]string{"Content-Type": "application/json", "x-api-key": a.APIKey, "x-api-secret": a.APISecret, "x-account-id": a.AccountID} {
		req.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	s.Handler().ServeHTTP(w, req)
	return w
}

// TestGolden freezes the wire format and the seeded data of the default
// seed: a change to either (a field renamed, the generator touched) shows
// here, on purpose, with -update. Partners rely on "same seed, same bytes"
// across versions.
func TestGolden(t *testing.T) {
	s, err := sim.New(context.Background(), sim.Config{Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	list := call(t, s, spec.PathCampaignList, `{"limit":5,"page":3}`)
	var page struct {
		Campaigns []struct {
			ID     int64 `json:"Id"`
			Status string
		} `json:"campaigns"`
	}
	if err := json.Unmarshal(list.Body.Bytes(), &page); err != nil {
		t.Fatalf("list: %v %s", err, list.Body)
	}
	var sent int64 // a campaign with counts, so that the golden holds some
	for _, c := range page.Campaigns {
		if c.Status == "Sent" && sent == 0 {
			sent = c.ID
		}
	}
	if sent == 0 {
		t.Fatalf("page 3 of the default seed has no Sent campaign: %s", list.Body)
	}
	stats := call(t, s, spec.PathCampaignStats, `{"campaignId":`+jsonInt(sent)+`}`)
	for name, got := range map[string][]byte{
		"campaign-list-default-seed.json":  list.Body.Bytes(),
		"campaign-stats-default-seed.json": stats.Body.Bytes(),
	} {
		path := filepath.Join("..", "..", "fixtures", "golden", name)
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./simulator/sim -update to create it)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s changed: the wire format or the seeded data moved. If on purpose, run go test ./simulator/sim -update.\ngot:  %s\nwant: %s", name, got, want)
		}
	}
}

func jsonInt(n int64) string { b, _ := json.Marshal(n); return string(b) }

func writeFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "campaigns.json")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const fileCampaign = `{"Id": 7, "campaignName": "Fixture", "campaignType": 0, "campaignChannel": "sms",
  "status": "Sent", "statusColor": "#4CAF50", "active": 1, "scheduledOn": "2026-01-02T03:04:05.006Z",
  "scheduledTimeZone": "CET", "offset": "+01:00", "autoResend": 0, "broadcastOn": "2026-01-02T03:04:05.006Z",
  "broadcast": 1, "createdAt": "2026-01-01T00:00:00.000Z", "updatedAt": "2026-01-02T00:00:00.000Z",
  "reason": null, "accountId": "acc_enc_QWxwaGFQYXJ0bmVyMDAx",
  "stats": {"emailStat": {}, "smsStat": {"Sent": 10, "Delivered": 9, "Failed": 1}}%s}`

// TestCampaignsFile: --campaigns-file replaces the generated campaigns, and a
// bad file stops the start with the campaign and the field at fault.
func TestCampaignsFile(t *testing.T) {
	s, err := sim.New(context.Background(), sim.Config{Insecure: true, CampaignsFile: writeFile(t, "["+strings.Replace(fileCampaign, "%s", "", 1)+"]")})
	if err != nil {
		t.Fatal(err)
	}
	list := call(t, s, spec.PathCampaignList, `{"limit":50,"page":1}`).Body.String()
	if !strings.Contains(list, `"totalRecords":1`) || !strings.Contains(list, `"campaignName":"Fixture"`) {
		t.Fatalf("list: %s", list)
	}
	if got := call(t, s, spec.PathCampaignStats, `{"campaignId":7}`).Body.String(); !strings.Contains(got, `"smsStat":{"Sent":10,"Delivered":9,"Failed":1}`) {
		t.Fatalf("stats: %s", got)
	}
	// GET /config names no seed: the campaigns were not generated.
	req := httptest.NewRequest(http.MethodGet, "/config", nil)
	req.Header.Set("Authorization", "Bearer "+s.AdminToken)
	rec := httptest.NewRecorder()
	s.AdminHandler().ServeHTTP(rec, req)
	var cfg map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &cfg); err != nil || rec.Code != http.StatusOK {
		t.Fatalf("GET /config: %d %s", rec.Code, rec.Body)
	}
	for _, key := range []string{"seed", "campaignsPerAccount"} {
		if _, ok := cfg[key]; ok {
			t.Errorf("GET /config = %s: names %s, want it absent with a campaigns file", rec.Body, key)
		}
	}
	if _, ok := cfg["contactsPerAccount"]; !ok || cfg["version"] != "dev" || cfg["violations"] == nil {
		t.Errorf("GET /config = %s: want the version, the violations and the contacts per account", rec.Body)
	}

	tests := []struct{ name, file, want string }{
		{"not JSON", `[{`, "decode campaigns"},
		{"unknown field", "[" + strings.Replace(fileCampaign, "%s", `, "colour": "red"`, 1) + "]", "colour"},
		{"timestamp without milliseconds", "[" + strings.Replace(strings.Replace(fileCampaign, "%s", "", 1), "05.006Z", "05Z", 1) + "]", "2006-01-02T15:04:05.000Z"},
		{"offset without colon", "[" + strings.Replace(strings.Replace(fileCampaign, "%s", "", 1), "+01:00", "+0100", 1) + "]", "offset"},
		{"funnel broken", "[" + strings.Replace(strings.Replace(fileCampaign, "%s", "", 1), `"Delivered": 9`, `"Delivered": 11`, 1) + "]", "smsStat"},
		{"Id twice", "[" + strings.Replace(fileCampaign, "%s", "", 1) + "," + strings.Replace(fileCampaign, "%s", "", 1) + "]", "Id 7"},
		{"no owner", "[" + strings.Replace(strings.Replace(fileCampaign, "%s", "", 1), `"accountId": "acc_enc_QWxwaGFQYXJ0bmVyMDAx",`, "", 1) + "]", "accountId"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := sim.New(context.Background(), sim.Config{Insecure: true, CampaignsFile: writeFile(t, tt.file)})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}

func TestNew_Refuses(t *testing.T) {
	for name, cfg := range map[string]sim.Config{
		"unknown violation":   {Insecure: true, Violations: []string{"be-nice"}},
		"missing accounts":    {Insecure: true, AccountsFile: filepath.Join(t.TempDir(), "none.json")},
		"cert without key":    {TLSCert: "cert.pem"},
		"unreachable redis":   {Insecure: true, RedisURL: "redis://127.0.0.1:1/0"},
		"campaigns file gone": {Insecure: true, CampaignsFile: filepath.Join(t.TempDir(), "none.json")},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := sim.New(context.Background(), cfg); err == nil {
				t.Fatal("started")
			}
		})
	}
}

// TestViolations: the control API reports the switches that are on (none
// for a faithful simulator), and URL is the base the simulator serves.
func TestViolations(t *testing.T) {
	tests := []struct {
		name       string
		violations []string
		want       string
		basePath   string
	}{
		{"faithful", nil, `[]`, spec.BasePath},
		{"one switch", []string{"list-total-pages-floor"}, `["list-total-pages-floor"]`, spec.BasePath},
		{"unversioned paths", []string{"version-path-unversioned", "rate-global"}, `["rate-global","version-path-unversioned"]`, "/partner/webhook"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := sim.New(context.Background(), sim.Config{Insecure: true, Addr: "127.0.0.1:0", AdminToken: "tok", Violations: tt.violations})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Open(); err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			req := httptest.NewRequest(http.MethodGet, "/config", nil)
			req.Header.Set("Authorization", "Bearer tok")
			w := httptest.NewRecorder()
			s.AdminHandler().ServeHTTP(w, req)
			var cfg struct {
				Violations json.RawMessage `json:"violations"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &cfg); err != nil {
				t.Fatalf("%v: %s", err, w.Body)
			}
			if got := string(cfg.Violations); got != tt.want {
				t.Fatalf("violations = %s, want %s", got, tt.want)
			}
			// The partner listener's origin, then the violation's base path.
			origin := ""
			if u, err := url.Parse(s.URL()); err == nil {
				origin = u.Scheme + "://" + u.Host
			}
			if got, want := s.URL(), origin+tt.basePath; got != want || !strings.HasPrefix(got, "http://127.0.0.1:") {
				t.Fatalf("URL() = %q, want %q", got, want)
			}
		})
	}
}

// admin sends one control API request in-process.
func admin(t *testing.T, s *sim.Simulator, method, target string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	req.Header.Set("Authorization", "Bearer tok")
	w := httptest.NewRecorder()
	s.AdminHandler().ServeHTTP(w, req)
	return w
}

type contactList struct {
	Contacts []*simulator.Contact `json:"contacts"`
	Total    int                  `json:"total"`
}

func listContacts(t *testing.T, s *sim.Simulator, query string) contactList {
	t.Helper()
	w := admin(t, s, http.MethodGet, "/contacts?"+query)
	var l contactList
	if err := json.Unmarshal(w.Body.Bytes(), &l); err != nil || w.Code != http.StatusOK {
		t.Fatalf("GET /contacts?%s = %d %s (%v)", query, w.Code, w.Body, err)
	}
	return l
}

// --contacts N seeds N contacts per account, visible through the control
// API, each one an Add Contact the server accepts (spec §4.1: re-adding
// one merges into it, so the count stays); the same seed gives the same
// contacts; a reset brings them back as seeded.
func TestContactsPerAccount(t *testing.T) {
	const n = 150
	cfg := sim.Config{Insecure: true, AdminToken: "tok", ContactsPerAccount: n, RateLimit: 1000}
	s, err := sim.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	all := listContacts(t, s, "limit=1000")
	if got, want := all.Total, n*len(s.Accounts); got != want {
		t.Fatalf("total = %d, want %d", got, want)
	}
	mine := listContacts(t, s, "limit=1000&accountId="+s.Accounts[0].AccountID)
	if mine.Total != n || len(mine.Contacts) != n {
		t.Fatalf("first account: total %d, %d listed, want %d", mine.Total, len(mine.Contacts), n)
	}
	for _, c := range mine.Contacts {
		body, _ := json.Marshal(map[string]any{
			"email": c.Email, "phoneNo": c.PhoneNo, "firstName": c.FirstName, "lastName": c.LastName,
			"addrOne": c.AddrOne, "addrTwo": c.AddrTwo, "city": c.City, "country": c.Country, "state": c.State,
			"zipCode": c.ZipCode, "gender": c.Gender, "dateOfBirth": c.DateOfBirth,
			"emailOptStatus": c.EmailOptStatus, "smsOptStatus": c.SMSOptStatus, "tag": c.Tag, "playerType": c.PlayerType,
		})
		w := call(t, s, spec.PathContactAdd, string(body))
		if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"contactId":"`+c.ID+`"`) {
			t.Fatalf("Add Contact of seeded %s = %d %s, want 200 naming it", c.ID, w.Code, w.Body)
		}
	}
	if got := listContacts(t, s, "limit=1").Total; got != n*len(s.Accounts) {
		t.Errorf("total after re-adding every seeded contact = %d, want %d", got, n*len(s.Accounts))
	}

	again, err := sim.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	first, _ := json.Marshal(all)
	if got, _ := json.Marshal(listContacts(t, again, "limit=1000")); !bytes.Equal(got, first) {
		t.Errorf("a second simulator with the same seed lists other contacts")
	}

	if w := call(t, s, spec.PathContactAdd, `{"email":"new.one@example.com","city":"Oslo"}`); w.Code != http.StatusOK {
		t.Fatalf("Add Contact: %d %s", w.Code, w.Body)
	}
	if w := admin(t, s, http.MethodPost, "/reset"); w.Code != http.StatusOK {
		t.Fatalf("POST /reset: %d %s", w.Code, w.Body)
	}
	if got, _ := json.Marshal(listContacts(t, s, "limit=1000")); !bytes.Equal(got, first) {
		t.Errorf("after a reset the contacts are not the seeded ones")
	}
}
