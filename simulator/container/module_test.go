package container_test

// A partner imports the kit into a module of their own: this test makes
// one outside the repository (require + replace to this checkout), runs
// go mod tidy and go test in it with no TESTCONTAINERS_* variable set, as
// a partner's machine has none (issue 11). Its in-process test needs no
// Docker; its container.Run test runs when Docker is usable here, and
// skips otherwise unless REQUIRE_DOCKER=1 (CI), where this test fails.

import (
	"os"
	"strings"
	"testing"

	"github.com/partner-v3/conformance-kit/simulator/internal/freshmodule"
)

// partnerTest is the partner's own test file: the simulator in-process,
// and in a container.
const partnerTest = `package partner

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/container"
	"github.com/partner-v3/conformance-kit/simulator/sim"
	"github.com/testcontainers/testcontainers-go"
)

func listCampaigns(t *testing.T, client *http.Client, baseURL string, acc simulator.Account) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, baseURL+"/campaign/list", strings.NewReader(` + "`" + `{"limit": 2, "page": 1}` + "`" + `))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-key", acc.APIKey)
	req.Header.Set("x-api-secret", acc.APISecret)
	req.Header.Set("x-account-id", acc.AccountID)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /campaign/list: status %d", resp.StatusCode)
	}
}

func TestInProcess(t *testing.T) {
	s, err := sim.New(context.Background(), sim.Config{Insecure: true, DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	listCampaigns(t, srv.Client(), srv.URL+spec.BasePath, *s.Accounts[0])
}

func TestContainer(t *testing.T) {
	image := os.Getenv("KIT_TEST_IMAGE")
	if image == "" {
		t.Skip("no KIT_TEST_IMAGE: no Docker")
	}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "TESTCONTAINERS_") {
			t.Fatalf("%s is set: the test is of a bare environment", kv)
		}
	}
	c, err := container.Run(context.Background(), container.WithImage(image))
	testcontainers.CleanupContainer(t, c)
	if err != nil {
		t.Fatal(err)
	}
	listCampaigns(t, c.HTTPClient(), c.URL, c.Accounts[0])
}
`

func TestAFreshModuleImportsTheKit(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds a module of its own")
	}
	t.Parallel()
	// The partner's environment: none of testcontainers' variables (this
	// test binary's TestMain set them in its own).
	m := freshmodule.New(t, partnerTest, "TESTCONTAINERS_", "KIT_TEST_IMAGE=")
	withDocker := dockerErr == nil && buildErr == nil
	switch {
	case withDocker:
		m.Setenv("KIT_TEST_IMAGE=" + simImage)
	case os.Getenv("REQUIRE_DOCKER") == "1":
		t.Errorf("REQUIRE_DOCKER=1 but the container part cannot run: docker %v, images %v", dockerErr, buildErr)
	}
	m.Go("mod", "tidy")
	m.CheckGoDirective()
	out := m.Go("test", "-count=1", "-v", ".")
	t.Logf("go test in the fresh module:\n%s", out)
	wantPass := []string{"--- PASS: TestInProcess"}
	if withDocker {
		wantPass = append(wantPass, "--- PASS: TestContainer")
	}
	for _, want := range wantPass {
		if !strings.Contains(out, want) {
			t.Errorf("go test in the fresh module: no %q", want)
		}
	}
}
