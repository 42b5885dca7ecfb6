package controlapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/simulator/httpjson"
)

// Throwaway accounts (issue 12): a CI job makes its own account through the
// control API, runs against it with credentials nobody else holds (spec §5)
// and a rate budget of its own (spec §8), and deletes it. The calls are
// listed in docs/control-api.md, "Throwaway accounts".

// registry returns the registry of throwaway accounts.
func (api *API) registry() (simulator.AccountRegistry, error) {
	reg := api.Registry
	if reg == nil {
		// ASSUMPTION: a server given a fixed account store (no registry)
		// answers every account call as unknown rather than 500.
		return nil, simulator.Errorf(simulator.ENOTFOUND, "This simulator keeps no throwaway accounts")
	}
	return reg, nil
}

// maxCreateAttempts bounds the retries of a create whose random key or
// identifier was taken: with 96 and 128 random bits, only a configured
// account that copied the throwaway prefixes could make one happen.
const maxCreateAttempts = 3

// handleAccountCreate makes a throwaway account. Its secret is in this
// answer only.
func (api *API) handleAccountCreate(w http.ResponseWriter, r *http.Request) {
	reg, err := api.registry()
	if err != nil {
		api.Error(w, r, err)
		return
	}
	var spec simulator.AccountSpec
	if err := api.decode(r, &spec); err != nil {
		api.Error(w, r, err)
		return
	}
	// A profile is checked first (400 with Check's reasons) and stored
	// once by digest, which the account names, for every replica (issue 20).
	var digest string
	if len(spec.Profile) > 0 && string(spec.Profile) != "null" {
		if digest, err = api.StoreProfile(r.Context(), reg, spec.Profile); err != nil {
			api.Error(w, r, err)
			return
		}
	}
	var a *simulator.CreatedAccount
	for range maxCreateAttempts {
		if a, err = simulator.NewThrowawayAccount(spec, reg.AccountDefaults(), api.now()); err != nil {
			api.Error(w, r, err)
			return
		}
		a.ProfileDigest = digest
		if err = reg.CreateAccount(r.Context(), a); simulator.ErrorCode(err) != simulator.ECONFLICT {
			break
		}
	}
	if err != nil {
		api.Error(w, r, fmt.Errorf("create account: %w", err))
		return
	}
	if api.Reports != nil {
		api.Reports.StartAccount(a.AccountID) // its report starts at its creation
	}
	w.Header().Set("Location", "/accounts/"+a.AccountID)
	httpjson.Write(w, http.StatusCreated, a)
}

func (api *API) handleAccountList(w http.ResponseWriter, r *http.Request) {
	reg, err := api.registry()
	if err != nil {
		api.Error(w, r, err)
		return
	}
	list, err := reg.ListAccounts(r.Context())
	if err != nil {
		api.Error(w, r, fmt.Errorf("list accounts: %w", err))
		return
	}
	httpjson.Write(w, http.StatusOK, &control.AccountsResponse{Accounts: list})
}

// account returns the account accountID, configured or throwaway, and the
// registry that holds it; ENOTFOUND for an unknown one.
func (api *API) account(ctx context.Context, accountID string) (simulator.AccountRegistry, *simulator.AccountInfo, error) {
	reg, err := api.registry()
	if err != nil {
		return nil, nil, err
	}
	a, err := reg.FindAccount(ctx, accountID)
	if simulator.ErrorCode(err) == simulator.ENOTFOUND {
		return nil, nil, simulator.NotFoundAccount(httpjson.Shorten(accountID)) // the id as given, cut short
	}
	if err != nil {
		return nil, nil, fmt.Errorf("find account: %w", err)
	}
	return reg, a, nil
}

// findAccount answers the account of the path's {accountId}, or writes the
// error (404 for an unknown one) and returns nil.
func (api *API) findAccount(w http.ResponseWriter, r *http.Request) (simulator.AccountRegistry, *simulator.AccountInfo) {
	reg, a, err := api.account(r.Context(), r.PathValue("accountId"))
	if err != nil {
		api.Error(w, r, err)
		return nil, nil
	}
	return reg, a
}

func (api *API) handleAccountGet(w http.ResponseWriter, r *http.Request) {
	if _, a := api.findAccount(w, r); a != nil {
		httpjson.Write(w, http.StatusOK, a)
	}
}

// handleAccountDelete removes a throwaway account and everything the
// simulator keeps of it. The credentials go first, so the account's
// requests answer 401 from then on (spec §5 rule 1), on every replica; then
// its contacts, its rate budget (spec §8), the faults scoped to it and this
// replica's cached campaigns. Other replicas may keep its campaigns cached
// until evicted: harmless, as authentication refuses its requests first.
// If a later step fails, the answer is a 500 and POST /reset clears what
// is left (a second DELETE answers 404: the account is gone).
func (api *API) handleAccountDelete(w http.ResponseWriter, r *http.Request) {
	reg, a := api.findAccount(w, r)
	if a == nil {
		return
	}
	ctx, id := r.Context(), a.AccountID
	if err := reg.DeleteAccount(ctx, id); err != nil {
		code := simulator.ErrorCode(err)
		if code != simulator.ENOTFOUND && code != simulator.ECONFLICT {
			err = fmt.Errorf("delete account: %w", err)
		}
		api.Error(w, r, err)
		return
	}
	api.Campaigns.ForgetCampaigns(id)
	if api.Reports != nil {
		api.Reports.ForgetAccount(id)
	}
	if err := errors.Join(
		api.Contacts.DeleteContacts(ctx, id),
		api.Counter.Reset(ctx, id),
		api.Control.SetAccountOffset(ctx, id, 0),
		api.deleteAccountFaults(r, id),
	); err != nil {
		api.Error(w, r, fmt.Errorf("delete account %s: %w", id, err))
		return
	}
	httpjson.Write(w, http.StatusOK, map[string]string{"status": "deleted", "accountId": id})
}

// deleteAccountFaults removes the pending faults scoped to accountID.
func (api *API) deleteAccountFaults(r *http.Request, accountID string) error {
	fs, err := api.Control.Faults(r.Context())
	if err != nil {
		return fmt.Errorf("list faults: %w", err)
	}
	for _, f := range fs {
		if f.AccountID != accountID {
			continue
		}
		// One taken to zero meanwhile is gone already: that is fine.
		if _, err := api.Control.DeleteFault(r.Context(), f.ID); err != nil && simulator.ErrorCode(err) != simulator.ENOTFOUND {
			return fmt.Errorf("delete fault: %w", err)
		}
	}
	return nil
}

// handleAccountBudget reports the account's standing against spec §8's
// limit at the account's clock (the gate's), without counting a request.
func (api *API) handleAccountBudget(w http.ResponseWriter, r *http.Request) {
	_, a := api.findAccount(w, r)
	if a == nil {
		return
	}
	now, err := api.AccountClock(r.Context(), a.AccountID)
	if err != nil {
		api.Error(w, r, err)
		return
	}
	// Counted as the account's profile counts (issue 20: a fixed window
	// empties at its end).
	policy := api.RatePolicy(r.Context(), &simulator.Account{AccountID: a.AccountID, ProfileDigest: a.ProfileDigest})
	used, err := simulator.CountPolicy(r.Context(), api.Counter, a.AccountID, now, policy)
	if err != nil {
		api.Error(w, r, fmt.Errorf("account budget: %w", err))
		return
	}
	limit, window := api.RateLimit, api.RateWindow
	httpjson.Write(w, http.StatusOK, &simulator.Budget{
		AccountID: a.AccountID, Limit: limit, Window: window.String(), Used: used, Remaining: max(limit-used, 0),
	})
}
