package violation_test

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/fixtures"
	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/simulator/violation"
)

var (
	kebabRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	// ruleRE is a rule's head: "§4.2", "§5 rule 1, §7", then a colon.
	ruleRE = regexp.MustCompile(`^§\d+(\.\d+)?( rule \d+)?(, §\d+(\.\d+)?( rule \d+)?)*: \S`)
)

// TestCatalogue_Entries: one catalogue of unique kebab names, each rule
// headed by the sections the entry lists, in the same order.
func TestCatalogue_Entries(t *testing.T) {
	all := violation.Catalogue()
	if len(all) == 0 {
		t.Fatal("empty catalogue")
	}
	seen := map[violation.Name]bool{}
	for i, v := range all {
		if seen[v.Name] {
			t.Errorf("%s: listed twice", v.Name)
		}
		seen[v.Name] = true
		if i > 0 && all[i-1].Name >= v.Name {
			t.Errorf("Catalogue not sorted at %s", v.Name)
		}
		if !kebabRE.MatchString(string(v.Name)) {
			t.Errorf("%s: not lower-case kebab", v.Name)
		}
		if !strings.HasPrefix(v.Rule, "§") || !ruleRE.MatchString(v.Rule) {
			t.Errorf("%s: rule %q does not start with its sections and a colon", v.Name, v.Rule)
		}
		if strings.Contains(v.Rule, "\n") {
			t.Errorf("%s: rule is not one line", v.Name)
		}
		head, _, _ := strings.Cut(v.Rule, ":")
		var named []string
		for _, m := range regexp.MustCompile(`§(\d+(?:\.\d+)?)`).FindAllStringSubmatch(head, -1) {
			named = append(named, m[1])
		}
		if !slices.Equal(named, v.Sections) || len(v.Sections) == 0 {
			t.Errorf("%s: Sections %v, but the rule names %v", v.Name, v.Sections, named)
		}
		got, ok := violation.Lookup(string(v.Name))
		if !ok || got.Rule != v.Rule {
			t.Errorf("Lookup(%q) = %v, %v", v.Name, got.Name, ok)
		}
	}
	if _, ok := violation.Lookup("be-nice"); ok {
		t.Error("Lookup found a name that is not in the catalogue")
	}
}

// TestCatalogue_Sections holds the catalogue against the suite's list of
// spec sections: every normative section is broken by some switch (so the
// suite is proven for each), and no switch names a section that does not
// exist.
func TestCatalogue_Sections(t *testing.T) {
	data, err := fixtures.FS.ReadFile("spec-sections.json")
	if err != nil {
		t.Fatal(err)
	}
	var spec struct {
		Sections []struct {
			ID        string `json:"id"`
			Normative bool   `json:"normative"`
		} `json:"sections"`
	}
	if err := json.Unmarshal(data, &spec); err != nil {
		t.Fatal(err)
	}
	exists, broken := map[string]bool{}, map[string]bool{}
	for _, v := range violation.Catalogue() {
		for _, s := range v.Sections {
			broken[s] = true
		}
	}
	for _, s := range spec.Sections {
		exists[s.ID] = true
		if s.Normative && !broken[s.ID] {
			t.Errorf("normative §%s: no switch breaks it", s.ID)
		}
	}
	for _, v := range violation.Catalogue() {
		for _, s := range v.Sections {
			if !exists[s] {
				t.Errorf("%s names §%s, which fixtures/spec-sections.json does not list", v.Name, s)
			}
		}
	}
}

func TestParse(t *testing.T) {
	if _, err := violation.Parse([]string{"list-total-pages-floor", "be-nice"}); err == nil || !strings.Contains(err.Error(), "be-nice") {
		t.Fatalf("err = %v, want one naming be-nice", err)
	}
	s, err := violation.Parse([]string{"rate-off-by-one", "list-total-pages-floor", "rate-off-by-one"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.Names(), []violation.Name{"list-total-pages-floor", "rate-off-by-one"}; !slices.Equal(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	if l, w := s.Limits(100, time.Minute); l != 101 || w != time.Minute {
		t.Fatalf("Limits = %d %v, want 101 1m", l, w)
	}
}

// TestSet_Faithful: without switches nothing is wrapped, so a faithful
// simulator pays nothing for the layer.
func TestSet_Faithful(t *testing.T) {
	var s violation.Set
	if !s.Empty() || len(s.Names()) != 0 {
		t.Fatal("the zero Set is not empty")
	}
	if s.Handler(nil, nil) != nil {
		t.Fatal("Handler wraps without switches")
	}
	if s.BasePath() != spec.BasePath {
		t.Fatalf("BasePath = %q", s.BasePath())
	}
	if l, w := s.Limits(7, time.Second); l != 7 || w != time.Second {
		t.Fatalf("Limits = %d %v", l, w)
	}
	var (
		accounts  simulator.AccountStore  = stubAccounts{}
		contacts  simulator.ContactStore  = stubContacts{}
		campaigns simulator.CampaignStore = stubCampaigns{}
		counter   simulator.RateCounter   = stubCounter{}
	)
	if s.AccountStore(accounts) != accounts || s.ContactStore(contacts) != contacts ||
		s.CampaignStore(campaigns) != campaigns || s.RateCounter(counter) != counter {
		t.Fatal("a store or the counter is wrapped without switches")
	}
	// A switch wraps only what it needs.
	one, _ := violation.Parse([]string{"list-total-pages-floor"})
	if one.Handler(accounts, campaigns) == nil {
		t.Fatal("list-total-pages-floor has no handler layer")
	}
	if one.CampaignStore(campaigns) != campaigns || one.RateCounter(counter) != counter {
		t.Fatal("list-total-pages-floor wraps a store or the counter")
	}
	store, _ := violation.Parse([]string{"list-page-size-capped"})
	if store.Handler(accounts, campaigns) != nil {
		t.Fatal("list-page-size-capped adds a handler layer")
	}
}

type (
	stubAccounts  struct{ simulator.AccountStore }
	stubContacts  struct{ simulator.ContactStore }
	stubCampaigns struct{ simulator.CampaignStore }
	stubCounter   struct{ simulator.RateCounter }
)
