package redisstore_test

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// TestReplicaAccounts: a throwaway account (issue 12) made through one
// replica authenticates on the other at once (spec §5) and is served the
// same campaigns, byte for byte; its budget (spec §8) is one across both;
// deleted through the other replica, the first refuses it at once (401).
func TestReplicaAccounts(t *testing.T) {
	redisURL, accounts := replicaSetup(t)
	testReplicaAccounts(t, redisURL, accounts)
}

// testReplicaAccounts is TestReplicaAccounts on the Redis (or Redis
// Cluster) at redisURL.
func testReplicaAccounts(t *testing.T, redisURL string, accounts []*simulator.Account) {
	bin := buildSimulator(t)
	dataDir := t.TempDir()
	one := startReplica(t, bin, "replica one", redisURL, dataDir)
	two := startReplica(t, bin, "replica two", redisURL, dataDir)

	var a simulator.CreatedAccount
	if code := one.admin(t, http.MethodPost, "/accounts", map[string]any{"name": "replicated", "campaigns": 60}, &a); code != http.StatusCreated {
		t.Fatalf("POST /accounts on one: status %d", code)
	}
	list := map[string]int{"limit": 50, "page": 2}
	var pages [2][]byte
	for i, r := range []*replica{two, one} { // two first: it never saw the account
		status, _, body := r.call(t, &a.Account, spec.PathCampaignList, list)
		if status != http.StatusOK {
			t.Fatalf("%s: campaign/list with the new account: %d %s", r.name, status, body)
		}
		pages[i] = body
	}
	if !bytes.Equal(pages[0], pages[1]) {
		t.Fatalf("the replicas list different campaigns:\n%s\n%s", pages[0], pages[1])
	}
	if !bytes.Contains(pages[0], []byte(`"totalRecords":60`)) {
		t.Fatalf("page 2 of 60 campaigns: %s", pages[0])
	}
	if status, _, body := two.call(t, &a.Account, spec.PathContactAdd, map[string]string{"email": "r@example.com"}); status != http.StatusOK {
		t.Fatalf("two: contact/add: %d %s", status, body)
	}

	// One budget across the replicas: three requests counted.
	var budgets [2]simulator.Budget
	for i, r := range []*replica{one, two} {
		if code := r.admin(t, http.MethodGet, "/accounts/"+a.AccountID+"/budget", nil, &budgets[i]); code != http.StatusOK {
			t.Fatalf("%s: GET budget: status %d", r.name, code)
		}
		if budgets[i].Used != 3 || budgets[i].Remaining != spec.RateLimit-3 {
			t.Errorf("%s: budget %+v, want 3 used", r.name, budgets[i])
		}
	}

	// Both replicas list it, after the configured accounts.
	for _, r := range []*replica{one, two} {
		var l struct {
			Accounts []simulator.AccountInfo `json:"accounts"`
		}
		if code := r.admin(t, http.MethodGet, "/accounts", nil, &l); code != http.StatusOK || len(l.Accounts) != len(accounts)+1 {
			t.Fatalf("%s: GET /accounts: status %d, %d accounts, want %d", r.name, code, len(l.Accounts), len(accounts)+1)
		}
		if got := l.Accounts[len(accounts)]; got.AccountID != a.AccountID || !got.Throwaway {
			t.Errorf("%s: last account listed %+v, want the throwaway one", r.name, got)
		}
	}

	var deleted map[string]string
	if code := two.admin(t, http.MethodDelete, "/accounts/"+a.AccountID, nil, &deleted); code != http.StatusOK {
		t.Fatalf("DELETE on two: status %d", code)
	}
	// One served the account a moment ago (its campaigns are cached there):
	// it refuses it now, as two does.
	for _, r := range []*replica{one, two} {
		status, _, body := r.call(t, &a.Account, spec.PathCampaignList, list)
		if status != http.StatusUnauthorized || !bytes.Contains(body, []byte(spec.MsgInvalidCredentials)) {
			t.Errorf("%s: after the delete: %d %s, want 401 %q", r.name, status, body, spec.MsgInvalidCredentials)
		}
		var e map[string]string
		if code := r.admin(t, http.MethodGet, "/accounts/"+a.AccountID, nil, &e); code != http.StatusNotFound {
			t.Errorf("%s: GET the deleted account: status %d, want 404", r.name, code)
		}
	}
	var contacts struct {
		Total int `json:"total"`
	}
	if code := one.admin(t, http.MethodGet, "/contacts?accountId="+a.AccountID, nil, &contacts); code != http.StatusOK || contacts.Total != 0 {
		t.Errorf("one: the deleted account's contacts: status %d, total %d, want 0", code, contacts.Total)
	}
	// The configured accounts are untouched.
	if status, _, body := one.call(t, accounts[0], spec.PathCampaignList, list); status != http.StatusOK {
		t.Errorf("one: configured account after the delete: %d %s", status, body)
	}
}
