package simtest_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/simulator/simtest"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// A partner's client test: start the simulator, call Campaign List (spec
// §4.2) with the client that trusts its certificate, read what the
// simulator saw in its journal, close it.
func Example() {
	sim, err := simtest.Start(simtest.WithCampaigns(3))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sim.Close()

	acc := sim.Accounts[0] // the primary development account
	req, _ := http.NewRequest(http.MethodPost, sim.URL+"/campaign/list", strings.NewReader(`{"limit": 10, "page": 1}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-key", acc.APIKey) // the three headers of spec §5
	req.Header.Set("x-api-secret", acc.APISecret)
	req.Header.Set("x-account-id", acc.AccountID)
	resp, err := sim.HTTPClient().Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()

	entries, _ := sim.Control.Journal(context.Background(), control.JournalFilter{AccountID: acc.AccountID})
	fmt.Println(resp.StatusCode, len(entries), entries[0].Operation, entries[0].Status)
	// Output: 200 1 campaign/list 200
}

// TestPartnerClient is how a partner's own test looks: a simulator per
// test, parallel tests apart, a fault injected to see the client retry.
func TestPartnerClient(t *testing.T) {
	t.Parallel()
	sim := simtest.New(t, simtest.WithFaults(control.FaultSpec{
		Operation: spec.PathContactAdd, Kind: simulator.FaultError, Status: http.StatusServiceUnavailable}))
	client := &partnerClient{http: sim.HTTPClient(), baseURL: sim.URL, acc: sim.Accounts[0]}

	if err := client.addContact(`{"email": "jane@example.com"}`); err != nil {
		t.Fatal(err)
	}
	entries, err := sim.Control.Journal(context.Background(), control.JournalFilter{})
	if err != nil {
		t.Fatal(err)
	}
	// Newest first: the retry's 200 after the injected 503.
	if len(entries) != 2 || entries[1].Status != http.StatusServiceUnavailable || entries[0].Status != http.StatusOK {
		t.Fatalf("journal %+v: want a 503 then a 200", entries)
	}
}

// partnerClient stands for a partner's client: it retries a 5xx once.
type partnerClient struct {
	http    *http.Client
	baseURL string
	acc     simulator.Account
}

func (c *partnerClient) addContact(body string) error {
	for attempt := 1; ; attempt++ {
		req, err := http.NewRequest(http.MethodPost, c.baseURL+"/contact/add", strings.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("x-api-key", c.acc.APIKey)
		req.Header.Set("x-api-secret", c.acc.APISecret)
		req.Header.Set("x-account-id", c.acc.AccountID)
		resp, err := c.http.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		switch {
		case resp.StatusCode == http.StatusOK:
			return nil
		case resp.StatusCode >= 500 && attempt == 1:
			continue
		default:
			return fmt.Errorf("contact/add: status %d", resp.StatusCode)
		}
	}
}
