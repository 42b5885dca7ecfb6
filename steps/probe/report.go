package probe

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// Report is a comparison's outcome: agreement Agree of Total request
// classes, and each class's observations side by side.
type Report struct {
	// Sides are A and B as probed.
	Sides [2]Side `json:"sides"`
	// Agree is the number of request classes answered alike, of Total.
	Agree int `json:"agree"`
	Total int `json:"total"`
	// Took is the comparison's wall time.
	Took string `json:"took"`
	// Results are every request class, in the order sent.
	Results []Result `json:"results"`
}

// Side is one side as the report shows it.
type Side struct {
	// BaseURL is the side's address, secrets hidden.
	BaseURL string `json:"baseUrl"`
	// Sent is the number of requests the probes sent (the runner's
	// preflight not counted); Limit per Window is the budget assumed
	// (§8), Waited the time the pacer waited for it.
	Sent   int    `json:"sent"`
	Limit  int    `json:"limit"`
	Window string `json:"window"`
	Waited string `json:"waited"`
	// CampaignID is the listed Id the side's probes put in {campaignId},
	// PastLastPage the page after its last ({page} of
	// campaignList.pastLast): each side's own data.
	CampaignID   int `json:"campaignId"`
	PastLastPage int `json:"pastLastPage"`
}

// Result is one request class on both sides.
type Result struct {
	// Name says what the request is (a learner's: its choice); Learned
	// says whether a profile is learned from it.
	Name    string `json:"name"`
	Learned bool   `json:"learned"`
	// Request is the request as text (Probe.describe).
	Request string `json:"request"`
	// Observations are side A's and side B's, one per request sent.
	Observations [2][]Observation `json:"observations"`
	// Order is the order of the campaigns over every page the class
	// listed, on each side: the orders (Orders) joined by " or " ("" when
	// fewer than two were listed).
	Order [2]string `json:"order"`
	// Orders are the orders each side's campaigns are consistent with
	// (Id or campaignName, ascending or descending): a few pages may be
	// in more than one. The sides differ only when no order is in both.
	Orders [2][]string `json:"orders,omitempty"`
	// Differences say what a client sees differently; empty when the
	// sides agree.
	Differences []string `json:"differences,omitempty"`
}

// Agreed reports whether the sides answered every request class alike.
func (r *Report) Agreed() bool { return r.Agree == r.Total }

// differences compares a result's observations, send by send.
func differences(r Result) []string {
	var out []string
	a, b := r.Observations[0], r.Observations[1]
	for i := range min(len(a), len(b)) {
		prefix := ""
		if len(a) > 1 {
			prefix = fmt.Sprintf("request %d: ", i+1)
		}
		for _, d := range observationDiff(a[i], b[i]) {
			out = append(out, prefix+d)
		}
	}
	if ordersDisjoint(r.Orders[0], r.Orders[1]) {
		out = append(out, fmt.Sprintf("order of pages: A %s, B %s", r.Order[0], r.Order[1]))
	}
	return out
}

// observationDiff names each aspect in which two answers differ.
func observationDiff(a, b Observation) []string {
	var out []string
	if (a.Error == "") != (b.Error == "") {
		out = append(out, fmt.Sprintf("answer: A %s, B %s", answered(a), answered(b)))
	}
	if a.Status != b.Status {
		out = append(out, fmt.Sprintf("status: A %d, B %d", a.Status, b.Status))
	}
	if a.MediaType != b.MediaType {
		out = append(out, fmt.Sprintf("media type: A %q, B %q", a.MediaType, b.MediaType))
	}
	if onlyA, onlyB := listedData(minus(a.Shape, b.Shape), b.Shape), listedData(minus(b.Shape, a.Shape), a.Shape); len(onlyA)+len(onlyB) > 0 {
		out = append(out, fmt.Sprintf("body: only A has %s; only B has %s", list(onlyA), list(onlyB)))
	}
	if a.Message != b.Message {
		out = append(out, fmt.Sprintf("message: A %q, B %q", a.Message, b.Message))
	}
	if !slices.Equal(a.RateHeaders, b.RateHeaders) {
		out = append(out, fmt.Sprintf("rate-limit headers: A %s, B %s", list(a.RateHeaders), list(b.RateHeaders)))
	}
	if a.Allow != b.Allow {
		out = append(out, fmt.Sprintf("Allow: A %q, B %q", a.Allow, b.Allow))
	}
	if a.ContentEncoding != b.ContentEncoding {
		out = append(out, fmt.Sprintf("Content-Encoding: A %q, B %q", a.ContentEncoding, b.ContentEncoding))
	}
	for _, k := range slices.Sorted(maps.Keys(union(a.IDs, b.IDs))) {
		// An id only one side has shows in the body's paths already.
		if va, vb := a.IDs[k], b.IDs[k]; va != "" && vb != "" && va != vb {
			out = append(out, fmt.Sprintf("id format of %s: A %s, B %s", k, va, vb))
		}
	}
	return out
}

// listedData leaves out of only, a side's paths the other lacks, a field
// of a listed record that is null on one side and of a type on the other:
// which records a page holds is each side's data, and §2.2 makes such a
// field "null or string" (reason). A type against another type stays.
func listedData(only, other []string) []string {
	var out []string
	for _, e := range only {
		path, typ, _ := strings.Cut(e, ":")
		if strings.Contains(path, "[]") && slices.ContainsFunc(other, func(o string) bool {
			p, t, _ := strings.Cut(o, ":")
			return p == path && (typ == "null" || t == "null")
		}) {
			continue
		}
		out = append(out, e)
	}
	return out
}

func answered(o Observation) string {
	if o.Error != "" {
		return "no answer (" + o.Error + ")"
	}
	return fmt.Sprintf("answered %d", o.Status)
}

func union(a, b map[string]string) map[string]string {
	out := map[string]string{}
	maps.Copy(out, a)
	maps.Copy(out, b)
	return out
}

// minus is what of a b lacks (both sorted).
func minus(a, b []string) []string {
	var out []string
	for _, s := range a {
		if _, found := slices.BinarySearch(b, s); !found {
			out = append(out, s)
		}
	}
	return out
}

func list(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// String is one observation on one line.
func (o Observation) String() string {
	if o.Error != "" && o.Status == 0 {
		return "no answer: " + o.Error
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d", o.Status)
	if o.MediaType != "" {
		b.WriteString(" " + o.MediaType)
	}
	fmt.Fprintf(&b, " {%s}", strings.Join(o.Shape, ", "))
	if o.Message != "" {
		fmt.Fprintf(&b, " message %q", o.Message)
	}
	if len(o.RateHeaders) > 0 {
		fmt.Fprintf(&b, " rate headers %s", list(o.RateHeaders))
	}
	if o.Allow != "" {
		fmt.Fprintf(&b, " Allow %q", o.Allow)
	}
	if o.ContentEncoding != "" {
		fmt.Fprintf(&b, " Content-Encoding %q", o.ContentEncoding)
	}
	for _, k := range slices.Sorted(maps.Keys(o.IDs)) {
		fmt.Fprintf(&b, " %s: %s", k, o.IDs[k])
	}
	return b.String()
}

// Counts are the agreeing and all request classes, the profile's own
// (Learned) and the others.
func (r *Report) Counts() (learnedAgree, learned, otherAgree, other int) {
	for _, res := range r.Results {
		ok := len(res.Differences) == 0
		switch {
		case res.Learned:
			learned++
			if ok {
				learnedAgree++
			}
		default:
			other++
			if ok {
				otherAgree++
			}
		}
	}
	return
}

// WriteText writes the disagreements side by side (every class with all),
// then the agreement N/M and what each side was sent.
func (r *Report) WriteText(w io.Writer, all bool) {
	fmt.Fprintf(w, "conformance diff --probe: what a client observes\n  A: %s\n  B: %s\n", r.Sides[0].BaseURL, r.Sides[1].BaseURL)
	for _, res := range r.Results {
		agree := len(res.Differences) == 0
		if agree && !all {
			continue
		}
		label, learned := "DIFFER", ""
		if agree {
			label = "SAME"
		}
		if res.Learned {
			learned = " (the profile learns from it)"
		}
		fmt.Fprintf(w, "\n%-7s %s%s\n  %s\n", label, res.Name, learned, res.Request)
		for _, d := range res.Differences {
			fmt.Fprintf(w, "  - %s\n", d)
		}
		for k, name := range []string{"A", "B"} {
			for i, o := range res.Observations[k] {
				tag := name
				if len(res.Observations[k]) > 1 {
					tag = fmt.Sprintf("%s%d", name, i+1)
				}
				fmt.Fprintf(w, "  %-3s %s\n", tag+":", o)
			}
		}
	}
	la, l, oa, o := r.Counts()
	fmt.Fprintf(w, "\nagreement %d/%d request classes (the profile's own %d/%d, others %d/%d)\n", r.Agree, r.Total, la, l, oa, o)
	for k, s := range r.Sides {
		fmt.Fprintf(w, "side %c: %d requests (budget %d per %s, spec §8; waited %s); campaignId %d, page past the last %d\n",
			'A'+k, s.Sent, s.Limit-1, s.Window, s.Waited, s.CampaignID, s.PastLastPage)
	}
	if r.Agreed() {
		fmt.Fprintln(w, "A and B answer every request class alike")
	} else {
		fmt.Fprintf(w, "A and B answer %d request %s differently\n", r.Total-r.Agree, map[bool]string{true: "class", false: "classes"}[r.Total-r.Agree == 1])
	}
}

// WriteJSON writes the report as JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("write probe report: %w", err)
	}
	return nil
}
