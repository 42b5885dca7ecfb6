package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"time"

	"github.com/partner-v3/conformance-kit/fixtures"
	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/clientreport"
	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/simulator/httpjson"
	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// chartMinutes is how many minutes the overview's requests-per-minute
// chart covers.
const chartMinutes = 10

// overview is GET /ui/api/overview: every account with its standing.
type overview struct {
	Now        time.Time         `json:"now"`
	RateLimit  int               `json:"rateLimit"`
	RateWindow string            `json:"rateWindow"`
	Operations []string          `json:"operations"`
	FaultKinds []string          `json:"faultKinds"`
	Accounts   []accountOverview `json:"accounts"`
	// GlobalFaults are the pending faults of every account.
	GlobalFaults []control.FaultResponse `json:"globalFaults"`
}

// accountOverview is one account on the overview. It holds no credential:
// not the secret, not even the API key.
type accountOverview struct {
	AccountID string `json:"accountId"`
	Name      string `json:"name"`
	Throwaway bool   `json:"throwaway"`
	Profile   string `json:"profile"`
	// Clock is the account's time, as its requests are decided at.
	Clock time.Time `json:"clock"`
	// Used, Limit and Remaining are its budget in the current window
	// (spec §8), as GET /accounts/{id}/budget answers it.
	Used      int `json:"used"`
	Limit     int `json:"limit"`
	Remaining int `json:"remaining"`
	// FreesInMS is, when the budget is spent, the time on the account's
	// clock until a request is allowed again; EmptyInMS until no request
	// counts any more (the window's end). Zero when so already.
	FreesInMS int64 `json:"freesInMs"`
	EmptyInMS int64 `json:"emptyInMs"`
	// PerMinute counts the journal's requests of the account in each of
	// the last chartMinutes real minutes, oldest first.
	PerMinute []int                   `json:"perMinute"`
	Findings  []simulator.Finding     `json:"findings"`
	Faults    []control.FaultResponse `json:"faults"`
}

func (d *Dashboard) handleOverview(w http.ResponseWriter, r *http.Request) {
	out, err := d.overview(r.Context())
	if err != nil {
		d.api.Error(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, out)
}

func (d *Dashboard) now() time.Time {
	if d.api.Now != nil {
		return d.api.Now()
	}
	return time.Now()
}

func (d *Dashboard) accounts(ctx context.Context) ([]*simulator.AccountInfo, error) {
	if d.api.Registry == nil {
		return nil, nil
	}
	list, err := d.api.Registry.ListAccounts(ctx)
	if err != nil {
		return nil, fmt.Errorf("list accounts: %w", err)
	}
	return list, nil
}

func (d *Dashboard) overview(ctx context.Context) (*overview, error) {
	real := d.now()
	out := &overview{Now: real, RateLimit: d.api.RateLimit, RateWindow: d.api.RateWindow.String(),
		Operations: spec.Paths(), FaultKinds: simulator.FaultKinds, Accounts: []accountOverview{}, GlobalFaults: []control.FaultResponse{}}
	list, err := d.accounts(ctx)
	if err != nil {
		return nil, err
	}
	faults, err := d.api.Control.Faults(ctx)
	if err != nil {
		return nil, fmt.Errorf("list faults: %w", err)
	}
	for _, f := range faults {
		if f.AccountID == "" {
			out.GlobalFaults = append(out.GlobalFaults, control.NewFaultResponse(f))
		}
	}
	// One copy of the journal, taken under its lock once, read for every
	// account outside it: the partner API adds to it on every request.
	perMinute := requestsPerMinute(d.api.Journal.Latest(math.MaxInt), real)
	for _, a := range list {
		ao, err := d.accountOverview(ctx, a, faults, perMinute)
		if err != nil {
			return nil, err
		}
		out.Accounts = append(out.Accounts, *ao)
	}
	return out, nil
}

func (d *Dashboard) accountOverview(ctx context.Context, a *simulator.AccountInfo, faults []simulator.Fault, perMinute map[string][]int) (*accountOverview, error) {
	ao := &accountOverview{AccountID: a.AccountID, Name: a.Name, Throwaway: a.Throwaway, Limit: d.api.RateLimit,
		Profile: d.play.Source.Name, Findings: []simulator.Finding{}, Faults: []control.FaultResponse{}}
	if a.ProfileDigest != "" {
		ao.Profile = "own profile " + a.ProfileDigest
		if p, err := d.accountProfile(ctx, a); err == nil && p.Source.Name != "" {
			ao.Profile = p.Source.Name
		}
	}
	now, err := d.api.AccountClock(ctx, a.AccountID)
	if err != nil {
		return nil, fmt.Errorf("account clock: %w", err)
	}
	ao.Clock = now
	// The budget as GET /accounts/{id}/budget counts it.
	policy := d.api.RatePolicy(ctx, &simulator.Account{AccountID: a.AccountID, ProfileDigest: a.ProfileDigest})
	count := func(at time.Time) (int, error) {
		return simulator.CountPolicy(ctx, d.api.Counter, a.AccountID, at, policy)
	}
	if ao.Used, err = count(now); err != nil {
		return nil, fmt.Errorf("account budget: %w", err)
	}
	ao.Remaining = max(ao.Limit-ao.Used, 0)
	// With no request arriving meanwhile the count only falls: the first
	// moment it is below the limit, and the first it is zero, are found by
	// bisection over one window of the account's clock.
	if ao.Used >= ao.Limit {
		if ao.FreesInMS, err = firstBelow(count, now, d.api.RateWindow, ao.Limit); err != nil {
			return nil, err
		}
	}
	if ao.Used > 0 {
		if ao.EmptyInMS, err = firstBelow(count, now, d.api.RateWindow, 1); err != nil {
			return nil, err
		}
	}
	if ao.PerMinute = perMinute[a.AccountID]; ao.PerMinute == nil {
		ao.PerMinute = make([]int, chartMinutes)
	}
	if d.api.Reports != nil {
		ao.Findings = d.api.Reports.Report(a.AccountID).Findings
	}
	for _, f := range faults {
		if f.AccountID == a.AccountID {
			ao.Faults = append(ao.Faults, control.NewFaultResponse(f))
		}
	}
	return ao, nil
}

// requestsPerMinute counts the entries of each account (the one it
// authenticated as, else the one it was attributed to, as the journal's
// ?accountId= lists them) in each of the last chartMinutes minutes up to
// now, oldest first.
func requestsPerMinute(entries []simulator.JournalEntry, now time.Time) map[string][]int {
	out := map[string][]int{}
	start := now.Truncate(time.Minute).Add(-(chartMinutes - 1) * time.Minute)
	for _, e := range entries {
		if e.Time.Before(start) {
			break // newest first: the rest are older still
		}
		i := int(e.Time.Sub(start) / time.Minute)
		if i >= chartMinutes {
			continue
		}
		for k, id := range []string{e.AccountID, e.AttributedTo} {
			if id == "" || (k == 1 && id == e.AccountID) {
				continue
			}
			if out[id] == nil {
				out[id] = make([]int, chartMinutes)
			}
			out[id][i]++
		}
	}
	return out
}

// firstBelow returns the milliseconds after now until count falls below
// n, to 100 ms, searching one window (the count is all gone by then).
func firstBelow(count func(time.Time) (int, error), now time.Time, window time.Duration, n int) (int64, error) {
	lo, hi := time.Duration(0), window+time.Millisecond
	for hi-lo > 100*time.Millisecond {
		mid := lo + (hi-lo)/2
		c, err := count(now.Add(mid))
		if err != nil {
			return 0, fmt.Errorf("account budget: %w", err)
		}
		if c < n {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi.Milliseconds(), nil
}

// accountProfile returns the profile account a plays: its own, stored by
// digest, else the simulator's.
func (d *Dashboard) accountProfile(ctx context.Context, a *simulator.AccountInfo) (*profile.Profile, error) {
	if a.ProfileDigest == "" || d.api.Registry == nil {
		return d.play, nil
	}
	data, err := d.api.Registry.FindProfile(ctx, a.ProfileDigest)
	if err != nil {
		return nil, fmt.Errorf("find profile: %w", err)
	}
	p, err := profile.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("parse profile: %w", err)
	}
	return p, nil
}

// accountPlay is one account on the profile page: the profile it plays,
// compared choice by choice with the simulator's default (A: the default,
// B: the account's).
type accountPlay struct {
	AccountID  string              `json:"accountId"`
	Name       string              `json:"name"`
	Profile    string              `json:"profile"`
	Digest     string              `json:"digest,omitempty"`
	Differ     int                 `json:"differ"`
	Comparison *profile.Comparison `json:"comparison"`
}

func (d *Dashboard) handleProfiles(w http.ResponseWriter, r *http.Request) {
	list, err := d.accounts(r.Context())
	if err != nil {
		d.api.Error(w, r, err)
		return
	}
	def := profile.Default()
	out := struct {
		Default  string        `json:"default"`
		Accounts []accountPlay `json:"accounts"`
	}{Default: def.Source.Name, Accounts: []accountPlay{}}
	for _, a := range list {
		p, err := d.accountProfile(r.Context(), a)
		if err != nil {
			d.api.Error(w, r, err)
			return
		}
		c := profile.Compare(def, p)
		out.Accounts = append(out.Accounts, accountPlay{AccountID: a.AccountID, Name: a.Name, Profile: p.Source.Name,
			Digest: a.ProfileDigest, Differ: len(c.Differences()), Comparison: c})
	}
	httpjson.Write(w, http.StatusOK, out)
}

// specSection is one section on the spec page: the kit's list of the
// spec's sections (fixtures/spec-sections.json), with the client report's
// findings that cite it (clientreport.FindingCatalogue): what the
// simulator holds a client to under it.
type specSection struct {
	ID        string        `json:"id"`
	Title     string        `json:"title"`
	Normative bool          `json:"normative"`
	Why       string        `json:"why,omitempty"`
	Findings  []specFinding `json:"findings"`
}

type specFinding struct {
	Kind     string `json:"kind"`
	Severity string `json:"severity"`
	Title    string `json:"title"`
	Advice   string `json:"advice"`
}

// handleSpec answers the spec's sections: what a § of a finding links to.
func (d *Dashboard) handleSpec(w http.ResponseWriter, r *http.Request) {
	b, err := fixtures.FS.ReadFile("spec-sections.json")
	if err != nil {
		d.api.Error(w, r, fmt.Errorf("read spec sections: %w", err))
		return
	}
	var list struct {
		Spec     string        `json:"spec"`
		Sections []specSection `json:"sections"`
	}
	if err := json.Unmarshal(b, &list); err != nil {
		d.api.Error(w, r, fmt.Errorf("read spec sections: %w", err))
		return
	}
	kinds := slices.Sorted(maps.Keys(clientreport.FindingCatalogue))
	for i := range list.Sections {
		sec := &list.Sections[i]
		sec.Findings = []specFinding{}
		for _, k := range kinds {
			if f := clientreport.FindingCatalogue[k]; f.Section == "§"+sec.ID {
				sec.Findings = append(sec.Findings, specFinding{Kind: k, Severity: f.Severity, Title: f.Title, Advice: f.Advice})
			}
		}
	}
	httpjson.Write(w, http.StatusOK, list)
}
