// Package probe is the client-eye comparison of two live sides
// (conformance diff --probe, issue 28): it sends the same requests to a
// deployment and to, typically, a simulator playing the deployment's
// profile, in lockstep, and compares what a client observes of each
// answer: status, media type, the body's paths and JSON types, the
// message, which rate-limit headers are present, identifier formats and
// the order of pages. A profile comparison (profile.Compare) holds two
// profiles to each other; this holds two sides' answers to each other,
// on the learner's requests and on requests no profile was learned from,
// so that a choice generalised wrongly shows.
//
// Each side is a resolved target (steps/internal/target): its paced
// client keeps the probes within the account's budget (spec §8), waiting
// for the window when more are needed.
package probe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/internal/target"
	"github.com/partner-v3/conformance-kit/steps/learn"
)

// UnknownAccountID is the x-account-id an UnknownAccount probe sends: the
// same on both sides, since a message may echo it.
const UnknownAccountID = "probe-unknown-account"

// Env is what a comparison needs: the two sides, each resolved once by
// the runner (steps/suite.Probe), and what to send.
type Env struct {
	// A and B are the sides. BaseURL, Client, Pacer and Primary are
	// required on each.
	A, B target.Target
	// Probes are the requests sent. Nil: Probes().
	Probes []Probe
	// Log receives progress lines. May be nil.
	Log io.Writer
}

// side is one side's state during a comparison.
type side struct {
	t      target.Target
	sent   int
	vars   learn.Vars
	listed []int // the Ids of the first page at the spec's largest page
	// lastPage is the last page of that listing (at least 1), 0 before it.
	lastPage int
}

// Run sends every probe to A and then to B, one request at a time, and
// compares the answers. An error means the comparison could not run (the
// context ended, a side could not be reached at all); a side that answers
// one request with a closed connection is an observation.
func Run(ctx context.Context, env Env) (*Report, error) {
	for _, t := range []target.Target{env.A, env.B} {
		if t.BaseURL == nil || t.Client == nil || t.Pacer == nil || !t.Primary.Complete() {
			return nil, errors.New("probe: BaseURL, Client, Pacer and Primary are required on both sides")
		}
	}
	probes := env.Probes
	if probes == nil {
		probes = Probes()
	}
	log := env.Log
	if log == nil {
		log = io.Discard
	}
	run := fmt.Sprintf("%x", time.Now().UnixNano()&0xffffffff)
	// The same new contact on both sides: each side stores its own.
	common := learn.Vars{Email: fmt.Sprintf("probe-%s@%s", run, cmpOr(env.A.EmailDomain, "example.com")),
		Phone: fmt.Sprintf("+1555%07d", time.Now().UnixNano()%10000000)}
	sides := [2]*side{{t: env.A, vars: common}, {t: env.B, vars: common}}
	total := 0
	for _, p := range probes {
		total += p.sends()
	}
	for i, s := range sides {
		if budget := s.t.Pacer.Limit() - 1; total > budget {
			fmt.Fprintf(log, "conformance: probing side %c: %d requests, above the budget of %d per %s (spec §8): the pacer waits for the window\n",
				'A'+i, total, budget, s.t.Pacer.Window())
		}
	}
	rep := &Report{}
	started := time.Now()
	for n, p := range probes {
		if n > 0 && n%20 == 0 {
			fmt.Fprintf(log, "conformance: probing: %d of %d request classes\n", n, len(probes))
		}
		res := Result{Name: p.Name, Learned: p.Learned, Request: p.describe()}
		var ids [2][]int
		var names [2][]string
		for i := range p.sends() {
			for k, s := range sides {
				o, err := s.send(ctx, p, i)
				if err != nil {
					return nil, fmt.Errorf("probe side %c (%s): %w", 'A'+k, p.Name, err)
				}
				res.Observations[k] = append(res.Observations[k], o)
				ids[k] = append(ids[k], o.campaignIDs...)
				names[k] = append(names[k], o.campaignNames...)
				if p.Choice == "campaignList.order" && i == 0 {
					s.learnIDs(o)
				}
			}
		}
		if p.Choice == "campaignList.order" {
			// The account's Ids are each side's data; the Id asked for as
			// unknown must be unknown on both.
			unknown := learn.UnknownCampaignID(append(append([]int{0}, sides[0].listed...), sides[1].listed...))
			sides[0].vars.UnknownCampaignID, sides[1].vars.UnknownCampaignID = unknown, unknown
		}
		if len(p.Pages) > 0 {
			// Only a walk shows the order of pages: which Ids a single page
			// of some other request holds is each side's data.
			for k := range sides {
				res.Orders[k] = orders(ids[k], names[k])
				res.Order[k] = strings.Join(res.Orders[k], " or ")
			}
		}
		res.Differences = differences(res)
		if len(res.Differences) == 0 {
			rep.Agree++
		}
		rep.Results = append(rep.Results, res)
	}
	rep.Total = len(rep.Results)
	for k, s := range sides {
		rep.Sides[k] = Side{
			BaseURL: s.t.Secrets.String(s.t.BaseURL.String()), Sent: s.sent, CampaignID: s.vars.CampaignID, PastLastPage: s.vars.Page,
			Limit: s.t.Pacer.Limit(), Window: s.t.Pacer.Window().String(), Waited: s.t.Pacer.Waited().Round(time.Millisecond).String(),
		}
	}
	rep.Took = time.Since(started).Round(time.Millisecond).String()
	return rep, nil
}

// learnIDs reads, from the first page at the spec's largest page, the Id
// the side's probes ask for and the page after its last.
func (s *side) learnIDs(o Observation) {
	s.listed = o.campaignIDs
	if len(o.campaignIDs) > 0 {
		s.vars.CampaignID = o.campaignIDs[0]
	}
	s.lastPage = max(o.totalPages, 1)
	s.vars.Page = s.lastPage + 1
}

// send sends the i-th request of p and observes the answer.
func (s *side) send(ctx context.Context, p Probe, i int) (Observation, error) {
	v := s.vars
	if len(p.Pages) > 0 {
		v.Page = p.Pages[min(i, len(p.Pages)-1)]
	}
	if p.UpToPage > 0 {
		v.Page = p.UpToPage
		if s.lastPage > 0 {
			v.Page = min(p.UpToPage, s.lastPage)
		}
	}
	r := p.With(v)
	method := cmpOr(r.Method, http.MethodPost)
	var body io.Reader
	if r.Body != "" {
		body = strings.NewReader(r.Body)
	}
	u := strings.TrimSuffix(s.t.BaseURL.String(), "/") + "/" + r.Path
	hr, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return Observation{}, fmt.Errorf("build request: %w", err)
	}
	if !p.NoContentType && method != http.MethodGet {
		hr.Header.Set("Content-Type", cmpOr(r.ContentType, spec.ContentType))
	}
	acct := s.t.Primary
	if p.WrongKey {
		acct.APIKey += "-wrong"
	}
	if p.WrongSecret {
		acct.APISecret += "-wrong"
	}
	if p.UnknownAccount {
		acct.AccountID = UnknownAccountID
	}
	hr.Header.Set(spec.HeaderAPIKey, acct.APIKey)
	hr.Header.Set(spec.HeaderAPISecret, acct.APISecret)
	if !p.NoAccount {
		hr.Header.Set(spec.HeaderAccountID, acct.AccountID)
	}
	for k, val := range r.Header {
		hr.Header.Set(k, val)
	}
	s.sent++
	resp, err := s.t.Client.Do(hr)
	if err != nil {
		if ctx.Err() != nil {
			return Observation{}, ctx.Err()
		}
		// A side may hang up on a request it will not read: what a
		// client observes, not a failure of the comparison.
		return Observation{Error: s.t.Secrets.String(err.Error())}, nil
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return Observation{Status: resp.StatusCode, Error: s.t.Secrets.String("read the answer: " + err.Error())}, nil
	}
	subst := map[string]string{}
	if strings.Contains(p.Body, "{campaignId}") && v.CampaignID != 0 {
		subst[strconv.Itoa(v.CampaignID)] = "{campaignId}"
	}
	if strings.Contains(p.Body, "{page}") && len(p.Pages) == 0 && p.UpToPage == 0 {
		subst[strconv.Itoa(v.Page)] = "{page}"
	}
	return observe(resp, b, subst, s.t.Secrets.String), nil
}

// describe is the request as the report shows it: method, path, body
// (placeholders unfilled: their values are each side's) and how the
// credentials and Content-Type are sent.
func (p Probe) describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", cmpOr(p.Method, http.MethodPost), p.Path)
	switch body := strings.TrimRight(p.Body, " }"); {
	case len(p.Body) > 256:
		fmt.Fprintf(&b, " %s… (%d bytes)", body[:min(len(body), 64)], len(p.Body))
	case p.Body != "":
		b.WriteString(" " + p.Body)
	}
	var notes []string
	switch {
	case p.NoContentType:
		notes = append(notes, "no Content-Type")
	case p.ContentType != "":
		notes = append(notes, "Content-Type: "+p.ContentType)
	}
	for k, v := range p.Header {
		notes = append(notes, k+": "+v)
	}
	for _, c := range []struct {
		on   bool
		note string
	}{{p.WrongKey, "wrong " + spec.HeaderAPIKey}, {p.WrongSecret, "wrong " + spec.HeaderAPISecret},
		{p.UnknownAccount, "unknown " + spec.HeaderAccountID}, {p.NoAccount, "no " + spec.HeaderAccountID}} {
		if c.on {
			notes = append(notes, c.note)
		}
	}
	if len(p.Pages) > 0 {
		notes = append(notes, fmt.Sprintf("pages %v", p.Pages))
	}
	if p.UpToPage > 0 {
		notes = append(notes, fmt.Sprintf("page %d, or the side's last when it has fewer", p.UpToPage))
	}
	if p.Times > 1 {
		notes = append(notes, fmt.Sprintf("sent %d times", p.Times))
	}
	if len(notes) > 0 {
		b.WriteString(" (" + strings.Join(notes, "; ") + ")")
	}
	return b.String()
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
