package simtest_test

// A partner imports simtest into a module of their own: this test makes
// one outside the repository (require + replace to this checkout), runs go
// mod tidy and go test in it, and checks that no testcontainers or Docker
// module comes with it. go mod tidy needs the kit's dependencies in the
// module cache or from the proxy: without either (no network), the test
// skips, unless REQUIRE_OPENAPI_TOOLS=1 (set in CI, where the module proxy
// must answer) or REQUIRE_MODULE_PROXY=1 asks it to fail.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/partner-v3/conformance-kit/simulator/internal/freshmodule"
)

// partnerTest is the partner's own test file: parallel tests, each with a
// simulator of its own.
const partnerTest = `package partner

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/simulator/simtest"
)

func listCampaigns(t *testing.T, sim *simtest.Simulator) int {
	t.Helper()
	acc := sim.Accounts[0]
	req, _ := http.NewRequest(http.MethodPost, sim.URL+"/campaign/list", strings.NewReader(` + "`" + `{"limit": 2, "page": 1}` + "`" + `))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-key", acc.APIKey)
	req.Header.Set("x-api-secret", acc.APISecret)
	req.Header.Set("x-account-id", acc.AccountID)
	resp, err := sim.HTTPClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestClient(t *testing.T) {
	t.Parallel()
	sim := simtest.New(t)
	if got := listCampaigns(t, sim); got != http.StatusOK {
		t.Fatalf("status %d", got)
	}
}

func TestClientMeetsAFault(t *testing.T) {
	t.Parallel()
	sim := simtest.New(t, simtest.WithFaults(control.FaultSpec{Operation: spec.PathCampaignList, Kind: simulator.FaultError}))
	if got := listCampaigns(t, sim); got != http.StatusInternalServerError {
		t.Fatalf("status %d, want the injected 500", got)
	}
	if _, err := sim.Control.Journal(context.Background(), control.JournalFilter{}); err != nil {
		t.Fatal(err)
	}
}

// A throwaway account per client under test, and the simulator's report on
// it: the impatient client's retry before Retry-After is a finding, the
// patient one's report is clean.
func TestClientReport(t *testing.T) {
	t.Parallel()
	sim := simtest.New(t, simtest.WithRateLimit(1, time.Minute))
	ctx := context.Background()
	for _, impatient := range []bool{false, true} {
		acc, err := sim.Control.CreateAccount(ctx, simulator.AccountSpec{Name: "client under test"})
		if err != nil {
			t.Fatal(err)
		}
		sim.Accounts[0] = acc.Account
		listCampaigns(t, sim)
		if impatient {
			listCampaigns(t, sim) // the 429
			listCampaigns(t, sim) // at once, before its Retry-After
		}
		rep, err := sim.Control.Report(ctx, acc.AccountID)
		if err != nil {
			t.Fatal(err)
		}
		retried := false
		for _, f := range rep.Findings {
			retried = retried || f.Kind == simulator.FindingRetryTooSoon
		}
		if rep.Clean == impatient || retried != impatient {
			t.Errorf("impatient %v: report %+v", impatient, rep)
		}
		if err := sim.Control.DeleteAccount(ctx, acc.AccountID); err != nil {
			t.Fatal(err)
		}
	}
}
`

func TestAFreshModuleUsesSimtestWithoutDocker(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds a module of its own")
	}
	t.Parallel()
	m := freshmodule.New(t, partnerTest)
	m.Go("mod", "tidy")

	// Neither the module's checksums nor its test's packages name a
	// container module: simtest brings no Docker client along.
	tidied := m.ReadFile("go.sum")
	deps := m.Go("list", "-deps", "-test", ".")
	if !strings.Contains(deps, "github.com/partner-v3/conformance-kit/simulator/simtest") {
		t.Fatalf("go list -deps -test does not name simtest:\n%s", deps)
	}
	for _, bad := range []string{"testcontainers", "docker", "moby", "containerd"} {
		if strings.Contains(tidied, bad) {
			t.Errorf("the partner's go.sum names %s:\n%s", bad, tidied)
		}
		if strings.Contains(deps, bad) {
			t.Errorf("the partner's test depends on a %s package", bad)
		}
	}
	m.CheckGoDirective()

	out := m.Go("test", "-count=1", "-v", ".")
	t.Logf("go test in the fresh module:\n%s", out)
	for _, want := range []string{"--- PASS: TestClient ", "--- PASS: TestClientMeetsAFault ", "--- PASS: TestClientReport "} {
		if !strings.Contains(out, want) {
			t.Errorf("go test in the fresh module: no %q", want)
		}
	}
}

// TestDocGivesTheModuleRecipe: docs/simtest.md's go mod edit is the one
// freshmodule runs (EditArgs), for a clone beside the partner's module.
func TestDocGivesTheModuleRecipe(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "simtest.md"))
	if err != nil {
		t.Fatal(err)
	}
	want := "go " + strings.Join(freshmodule.EditArgs("../conformance-kit"), " ")
	if !strings.Contains(string(doc), want) {
		t.Errorf("docs/simtest.md does not give the recipe the fresh-module tests run:\n%s", want)
	}
}
