package container_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/testcontainers/testcontainers-go"

	"github.com/partner-v3/conformance-kit/simulator/container"
)

// A partner's test starts the simulator, calls it with the development
// credentials over TLS it trusts, and terminates it. (Compiled, not run:
// it needs a Docker engine and the image `make image` builds.)
func ExampleRun() {
	ctx := context.Background()
	sim, err := container.Run(ctx,
		container.WithSeed(42),                    // same seed, same campaigns
		container.WithRateLimit(5, 2*time.Second), // exercise back-off in seconds
		container.WithEnv(map[string]string{"SIM_LOG_LEVEL": "debug"}),
	)
	defer func() {
		if err := testcontainers.TerminateContainer(sim); err != nil {
			fmt.Println("terminate:", err)
		}
	}()
	if err != nil {
		fmt.Println("run:", err)
		return
	}

	acc := sim.Accounts[0] // the primary development account
	req, _ := newCampaignListRequest(ctx, sim.URL, acc.APIKey, acc.APISecret, acc.AccountID)
	resp, err := sim.HTTPClient().Do(req) // trusts sim.CACertPEM only
	if err != nil {
		fmt.Println("request:", err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, strings.Contains(string(body), `"campaigns"`))
}

func newCampaignListRequest(ctx context.Context, baseURL, key, secret, account string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, baseURL+"/campaign/list", strings.NewReader(`{"limit": 10, "page": 1}`))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-key", key)
	req.Header.Set("x-api-secret", secret)
	req.Header.Set("x-account-id", account)
	return req, nil
}
