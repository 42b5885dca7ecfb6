package openapiclient_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator/openapiclient"
	"github.com/partner-v3/conformance-kit/simulator/simtest"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// mustOpenClient starts a simulator over HTTPS on 127.0.0.1 with a rate
// limit of limit requests per minute (zero: the spec's 100, §8), and
// returns the generated client for its first account, which sends the
// three headers of spec §5.
func mustOpenClient(tb testing.TB, limit int) *openapiclient.ClientWithResponses {
	tb.Helper()
	s := simtest.New(tb, simtest.WithRateLimit(limit, 0))
	a := s.Accounts[0]
	c, err := openapiclient.NewClientWithResponses(s.URL,
		openapiclient.WithHTTPClient(s.HTTPClient()),
		openapiclient.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
			r.Header.Set("x-api-key", a.APIKey)
			r.Header.Set("x-api-secret", a.APISecret)
			r.Header.Set("x-account-id", a.AccountID)
			return nil
		}))
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// TestGeneratedClient calls the three operations of spec §4 with the client
// generated from the document and reads typed bodies: the 200s of §4.1,
// §4.2 and §4.3, the 400s of §4.1 and §4.3 and the 429 of §7.
func TestGeneratedClient(t *testing.T) {
	ctx := context.Background()
	c := mustOpenClient(t, 0)

	email := "jane.doe@example.com"
	gender := openapiclient.Female
	added, err := c.AddContactWithResponse(ctx, openapiclient.Contact{Email: &email, Gender: &gender, Tag: &[]string{"vip"}})
	if err != nil {
		t.Fatal(err)
	}
	if added.StatusCode() != http.StatusOK || added.JSON200 == nil {
		t.Fatalf("Add Contact: status %d, body %s", added.StatusCode(), added.Body)
	}
	if added.JSON200.Status != openapiclient.Success || added.JSON200.ContactId == "" {
		t.Fatalf("Add Contact: %+v, want status success and a contactId", *added.JSON200)
	}

	refused, err := c.AddContactWithResponse(ctx, openapiclient.Contact{})
	if err != nil {
		t.Fatal(err)
	}
	if refused.StatusCode() != http.StatusBadRequest || refused.JSON400 == nil {
		t.Fatalf("Add Contact without email or phoneNo: status %d, body %s", refused.StatusCode(), refused.Body)
	}
	// The 400 body's shape is not shown (spec §7): the client types it as
	// any JSON; the simulator's {"error": ...} is its own choice.
	if got := (*refused.JSON400).(map[string]any)["error"]; got != spec.MsgEmailOrPhoneRequired {
		t.Fatalf("Add Contact without email or phoneNo: error %v, want %q", got, spec.MsgEmailOrPhoneRequired)
	}

	page, err := c.ListCampaignsWithResponse(ctx, openapiclient.CampaignListRequest{Limit: 50, Page: 1})
	if err != nil {
		t.Fatal(err)
	}
	if page.StatusCode() != http.StatusOK || page.JSON200 == nil {
		t.Fatalf("Campaign List: status %d, body %s", page.StatusCode(), page.Body)
	}
	p := page.JSON200
	if p.PageNo != 1 || p.PageSize != 50 || len(p.Campaigns) != 50 || p.TotalRecords < 50 {
		t.Fatalf("Campaign List: pageNo %d, pageSize %d, %d campaigns of %d", p.PageNo, p.PageSize, len(p.Campaigns), p.TotalRecords)
	}
	first := p.Campaigns[0]
	if first.Id <= 0 || first.CreatedAt.IsZero() || first.CreatedAt.Location() != time.UTC || first.UpdatedAt.Before(first.CreatedAt) {
		t.Fatalf("Campaign List: first campaign %+v: want an Id and UTC timestamps", first)
	}

	stats, err := c.GetCampaignStatsWithResponse(ctx, openapiclient.CampaignStatsRequest{CampaignId: first.Id})
	if err != nil {
		t.Fatal(err)
	}
	if stats.StatusCode() != http.StatusOK || stats.JSON200 == nil {
		t.Fatalf("Campaign Stats: status %d, body %s", stats.StatusCode(), stats.Body)
	}
	if e := stats.JSON200.EmailStat; e.Delivered > e.Sent {
		t.Errorf("Campaign Stats: %+v delivers more than it sends", e)
	}

	// The typed request always carries campaignId, so the §4.3 400 is sent
	// through the untyped body the client offers beside it.
	missing, err := c.GetCampaignStatsWithBodyWithResponse(ctx, "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if missing.StatusCode() != http.StatusBadRequest || missing.JSON400 == nil {
		t.Fatalf("Campaign Stats without campaignId: status %d, body %s", missing.StatusCode(), missing.Body)
	}
}

// TestGeneratedClient_RateLimit: past the limit every operation answers the
// 429 of spec §7, which the client reads as its typed RateLimitError.
func TestGeneratedClient_RateLimit(t *testing.T) {
	ctx := context.Background()
	c := mustOpenClient(t, 2)
	for i := 0; i < 2; i++ {
		r, err := c.ListCampaignsWithResponse(ctx, openapiclient.CampaignListRequest{Limit: 1, Page: 1})
		if err != nil || r.StatusCode() != http.StatusOK {
			t.Fatalf("request %d: %v, status %d", i+1, err, r.StatusCode())
		}
	}
	r, err := c.GetCampaignStatsWithResponse(ctx, openapiclient.CampaignStatsRequest{CampaignId: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r.StatusCode() != http.StatusTooManyRequests || r.JSON429 == nil {
		t.Fatalf("status %d, body %s, want a typed 429", r.StatusCode(), r.Body)
	}
	if got, want := r.JSON429.Error, openapiclient.RateLimitExceededTryAgainLater; got != want || string(want) != spec.MsgRateLimit {
		t.Fatalf("429 error %q, want %q (spec §7)", got, spec.MsgRateLimit)
	}
	if r.Headers429 == nil || r.Headers429.RetryAfter == nil || *r.Headers429.RetryAfter < 1 {
		t.Errorf("429 without the simulator's Retry-After: %+v", r.Headers429)
	}
}

// TestGeneratedClientIsCurrent regenerates the client into a temporary file
// and compares: the committed code is what the pinned oapi-codegen makes of
// the document today. It needs the module proxy (or a module cache that
// holds oapi-codegen); it skips when the generator cannot be fetched,
// unless REQUIRE_OPENAPI_TOOLS is set.
func TestGeneratedClientIsCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("runs oapi-codegen")
	}
	// The committed configuration, writing elsewhere.
	cfg, err := os.ReadFile("oapi-codegen.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "client.gen.go")
	if !bytes.Contains(cfg, []byte("\noutput: client.gen.go\n")) {
		t.Fatal("oapi-codegen.yaml no longer writes client.gen.go")
	}
	cfg = bytes.Replace(cfg, []byte("\noutput: client.gen.go\n"), []byte("\noutput: "+out+"\n"), 1)
	if err := os.WriteFile(filepath.Join(dir, "oapi-codegen.yaml"), cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	doc, err := filepath.Abs("../../fixtures/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "run", "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2",
		"-config", filepath.Join(dir, "oapi-codegen.yaml"), doc)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if os.Getenv("REQUIRE_OPENAPI_TOOLS") == "" {
			t.Skipf("oapi-codegen could not run (set REQUIRE_OPENAPI_TOOLS=1 to fail instead): %v\n%s", err, stderr.String())
		}
		t.Fatalf("oapi-codegen: %v\n%s", err, stderr.String())
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("client.gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("client.gen.go is stale: run go generate ./simulator/openapiclient")
	}
}
