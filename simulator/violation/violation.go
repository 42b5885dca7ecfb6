// Package violation breaks the spec on purpose. Each switch of its one
// catalogue breaks one normative rule, named by its section; the composition
// root (simulator/sim) wraps the switches a simulator is started with
// (--violate NAME) around the faithful parts: the partner API handler, the
// stores and the rate counter. The handlers themselves never know.
//
// The switches exist to prove the conformance suite: a run against a
// simulator with any one of them on must fail, in a scenario of the section
// the switch breaks. Never use them otherwise.
package violation

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// Name names one switch, as --violate takes it: lower-case kebab.
type Name string

// Violation is one switch of the catalogue.
type Violation struct {
	Name Name
	// Sections are the spec sections the switch breaks, such as "4.2" or
	// "8", in the order Rule names them.
	Sections []string
	// Rule says what is broken, starting with the sections: "§4.2:
	// totalPages is rounded down".
	Rule string

	breach breach
}

// Layers names the parts of the simulator the switch decorates: "handler"
// (requests or answers rewritten around the partner API), "accounts",
// "contacts", "campaigns" (the stores), "counter", "limits" (the rate
// limit or window the counter is given) or "base path".
func (v Violation) Layers() []string {
	b := v.breach
	var out []string
	for _, l := range []struct {
		name string
		on   bool
	}{
		{"handler", b.before != nil || b.after != nil || b.note || b.roles},
		{"base path", b.basePath != ""},
		{"accounts", b.accounts != nil},
		{"contacts", b.contacts != nil},
		{"campaigns", b.campaigns != nil},
		{"counter", b.counter != nil},
		{"limits", b.limits != nil},
	} {
		if l.on {
			out = append(out, l.name)
		}
	}
	return out
}

// breach is how a switch breaks its rule: the parts it decorates. Every
// field may be nil.
type breach struct {
	// before sees a request before the server does; it may rewrite it, note
	// something for the stores (in the request's context), or answer it
	// itself and report true.
	before func(x *exchange) bool
	// after edits the server's answer before the client gets it.
	after func(x *exchange)
	// note asks for the handler layer even without before or after: the
	// stores or the counter read what it notes (the operation).
	note bool
	// roles asks the layer to note each request's account role (the cell
	// switches of cells.go).
	roles bool
	// conns asks the server to tie each request to its connection
	// (Set.ConnContext; conns.go).
	conns bool

	accounts  func(simulator.AccountStore) simulator.AccountStore
	contacts  func(simulator.ContactStore) simulator.ContactStore
	campaigns func(simulator.CampaignStore) simulator.CampaignStore
	counter   func(simulator.RateCounter) simulator.RateCounter
	// limits changes the rate limit and window the counter enforces.
	limits func(limit int, window time.Duration) (int, time.Duration)
	// basePath replaces the spec's base path (§1, §9).
	basePath string
}

// sectionRE finds the sections a rule names ("§5 rule 1" gives "5").
var sectionRE = regexp.MustCompile(`§(\d+(?:\.\d+)?)`)

// v builds a catalogue entry; its sections are the ones its rule names
// before the colon, so the two never disagree.
func v(name Name, rule string, b breach) Violation {
	head, _, _ := strings.Cut(rule, ":")
	var sections []string
	for _, m := range sectionRE.FindAllStringSubmatch(head, -1) {
		sections = append(sections, m[1])
	}
	return Violation{Name: name, Sections: sections, Rule: rule, breach: b}
}

// all is the catalogue, then the matrix's cell switches.
var all = append(append([]Violation(nil), catalogue...), cells...)

// index finds a switch by name.
var index = func() map[Name]int {
	m := make(map[Name]int, len(all))
	for i, c := range all {
		m[c.Name] = i
	}
	return m
}()

// Catalogue returns every switch, sorted by name.
func Catalogue() []Violation {
	out := slices.Clone(catalogue)
	slices.SortFunc(out, func(a, b Violation) int { return strings.Compare(string(a.Name), string(b.Name)) })
	return out
}

// Lookup finds a switch by name.
func Lookup(name string) (Violation, bool) {
	i, ok := index[Name(name)]
	if !ok {
		return Violation{}, false
	}
	return all[i], true
}

// Set is the switches one simulator runs with. The zero Set is a faithful
// simulator: every method then returns what it is given.
type Set struct {
	on []Violation // in catalogue order, then the cells
}

// Parse checks names against the catalogue and returns their Set. A name
// given twice counts once.
func Parse(names []string) (Set, error) {
	seen := make(map[int]bool, len(names))
	for _, n := range names {
		i, ok := index[Name(n)]
		if !ok {
			return Set{}, fmt.Errorf("unknown violation %q (see --list-violations)", n)
		}
		seen[i] = true
	}
	var s Set
	for i, c := range all {
		if seen[i] {
			s.on = append(s.on, c)
		}
	}
	return s, nil
}

// Names returns the switches that are on, sorted.
func (s Set) Names() []Name {
	out := make([]Name, 0, len(s.on))
	for _, c := range s.on {
		out = append(out, c.Name)
	}
	slices.Sort(out)
	return out
}

// Empty reports whether no switch is on.
func (s Set) Empty() bool { return len(s.on) == 0 }

// Limits returns the rate limit and window the counter is to enforce: the
// configured ones, unless a switch breaks spec §8 with others.
func (s Set) Limits(limit int, window time.Duration) (int, time.Duration) {
	for _, c := range s.on {
		if c.breach.limits != nil {
			limit, window = c.breach.limits(limit, window)
		}
	}
	return limit, window
}

// BasePath returns the path prefix the simulator serves the operations
// under: spec.BasePath, unless a switch breaks spec §9.
func (s Set) BasePath() string {
	for _, c := range s.on {
		if c.breach.basePath != "" {
			return c.breach.basePath
		}
	}
	return spec.BasePath
}

// wrap wraps next with every switch on whose breach has a decorator for
// it (pick returns nil when it has none); next itself when none does.
func wrap[T any](s Set, next T, pick func(breach) func(T) T) T {
	for _, c := range s.on {
		if d := pick(c.breach); d != nil {
			next = d(next)
		}
	}
	return next
}

// AccountStore wraps next with the switches that change how credentials
// are matched; next itself when none does.
func (s Set) AccountStore(next simulator.AccountStore) simulator.AccountStore {
	return wrap(s, next, func(b breach) func(simulator.AccountStore) simulator.AccountStore { return b.accounts })
}

// ContactStore wraps next with the switches that refuse or change contacts
// as they are stored; next itself when none does.
func (s Set) ContactStore(next simulator.ContactStore) simulator.ContactStore {
	return wrap(s, next, func(b breach) func(simulator.ContactStore) simulator.ContactStore { return b.contacts })
}

// CampaignStore wraps next with the switches that page or find campaigns
// wrongly; next itself when none does.
func (s Set) CampaignStore(next simulator.CampaignStore) simulator.CampaignStore {
	return wrap(s, next, func(b breach) func(simulator.CampaignStore) simulator.CampaignStore { return b.campaigns })
}

// RateCounter wraps next with the switches that count requests under the
// wrong key, or not at all; next itself when none does.
func (s Set) RateCounter(next simulator.RateCounter) simulator.RateCounter {
	return wrap(s, next, func(b breach) func(simulator.RateCounter) simulator.RateCounter { return b.counter })
}

// Handler returns the layer the switches that rewrite requests or answers
// put around the partner API, or nil when none does (a faithful simulator
// pays nothing). accounts and campaigns are the faithful stores: the layer
// reads them to decide which answers a switch concerns (the account behind
// a set of headers, a campaign's channel).
func (s Set) Handler(accounts simulator.AccountStore, campaigns simulator.CampaignStore) func(http.Handler) http.Handler {
	l := &layer{basePath: s.BasePath(), accounts: accounts, campaigns: campaigns}
	need := l.basePath != spec.BasePath
	for _, c := range s.on {
		if c.breach.before != nil {
			l.before = append(l.before, c.breach.before)
		}
		if c.breach.after != nil {
			l.after = append(l.after, c.breach.after)
		}
		need = need || c.breach.before != nil || c.breach.after != nil || c.breach.note || c.breach.roles
		l.roles = l.roles || c.breach.roles
	}
	if !need {
		return nil
	}
	return func(next http.Handler) http.Handler {
		l := *l
		l.next = next
		return &l
	}
}
