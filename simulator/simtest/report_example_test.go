package simtest_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/simtest"
)

// A throwaway account of its own for each client under test, and the
// simulator's report on what that client did, judged against the spec.
func Example_report() {
	sim, err := simtest.Start()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sim.Close()
	ctx := context.Background()

	acc, err := sim.Control.CreateAccount(ctx, simulator.AccountSpec{Name: "my client"})
	if err != nil {
		fmt.Println(err)
		return
	}
	req, _ := http.NewRequest(http.MethodPost, sim.URL+"/campaign/list", strings.NewReader(`{"limit": 10, "page": 1}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-key", acc.APIKey)
	req.Header.Set("x-api-secret", acc.APISecret)
	req.Header.Set("x-account-id", acc.AccountID)
	resp, err := sim.HTTPClient().Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()

	report, err := sim.Control.Report(ctx, acc.AccountID)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(report.Requests, report.Clean, len(report.Findings))
	// Output: 1 true 0
}
