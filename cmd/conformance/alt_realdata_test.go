package main

// Real data (§2.1, §4.1) against the alternative implementation: a strict
// validator is a correct choice where §2.1 leaves the shape or length open
// and must pass, with warnings; a service that fails on real data must
// fail §4.1.

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/matrix"
)

var (
	// strictEmailRE is the plainest address: lower-case letters, digits,
	// dots and hyphens, a top-level domain of 2 to 6 letters.
	strictEmailRE = regexp.MustCompile(`^[a-z0-9._-]+@[a-z0-9-]+(\.[a-z0-9-]+)*\.[a-z]{2,6}$`)
	// strictPhoneRE is E.164 and nothing else.
	strictPhoneRE = regexp.MustCompile(`^\+[1-9][0-9]{7,14}$`)
)

// strictContact is altOptions.StrictContacts: what a strict validator
// refuses of what §2.1 leaves open ("Maximum request size, maximum field
// lengths and maximum number of tags: not shown"; an email's or a phone's
// format: not shown). 0 when it accepts the contact.
func strictContact(body map[string]any) (int, string) {
	for k, v := range body {
		if s, ok := v.(string); ok && len([]rune(s)) > 64 {
			return http.StatusUnprocessableEntity, k + " is longer than 64 characters"
		}
		if l, ok := v.([]any); ok && len(l) > 10 {
			return http.StatusUnprocessableEntity, k + " holds more than 10 names"
		}
	}
	if e, ok := body["email"].(string); ok && !strictEmailRE.MatchString(e) {
		return http.StatusBadRequest, "email is not a valid email address"
	}
	if p, ok := body["phoneNo"].(string); ok && !strictPhoneRE.MatchString(p) {
		return http.StatusBadRequest, "phoneNo must be in E.164 format"
	}
	return 0, ""
}

// beyondLatin1 reports whether s has a letter outside Latin-1.
func beyondLatin1(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return r > 0xFF }) >= 0
}

// altRealDataDefects break §4.1 on real data only: the suite's contacts of
// rule contact-created and contact-values are plain ASCII, so only the
// real-data cells can catch them.
func altRealDataDefects() []altDefectCase {
	const contact = "§4.1, §2.1: a contact with email or phoneNo is created: 200 {\"status\": \"success\", \"contactId\": <string>, identifier of the created contact}; §7: 500 is for an unexpected server-side problem"
	s41 := []string{"4.1", "2.1"}
	var mu sync.Mutex
	byName := map[string]string{}
	return []altDefectCase{
		{"contact: names outside Latin-1 are answered 500 (a Latin-1 column)", contact, s41, altDefect{contact: func(b map[string]any, id string) (int, any) {
			for _, k := range []string{"firstName", "lastName"} {
				if s, _ := b[k].(string); beyondLatin1(s) {
					return http.StatusInternalServerError, nil
				}
			}
			return http.StatusOK, id
		}}},
		{"contact: contacts with the same first and last name get the same contactId", contact, s41, altDefect{contact: func(b map[string]any, id string) (int, any) {
			first, _ := b["firstName"].(string)
			last, _ := b["lastName"].(string)
			if first == "" || last == "" {
				return http.StatusOK, id
			}
			mu.Lock()
			defer mu.Unlock()
			key := first + "\x00" + last
			if prev, ok := byName[key]; ok {
				return http.StatusOK, prev
			}
			byName[key] = id
			return http.StatusOK, id
		}}},
		{"contact: a dateOfBirth before 1901 is refused with 400", contact, s41, altDefect{contact: func(b map[string]any, id string) (int, any) {
			if d, _ := b["dateOfBirth"].(string); d != "" && d < "1901" {
				return http.StatusBadRequest, nil
			}
			return http.StatusOK, id
		}}},
	}
}

// TestAlternativeRealDataDefectsAreObservable: each real-data defect
// changes the answer to a contact of rule contact-realdata, so one the
// suite lets through is a gap of the suite, not a hook that does nothing.
func TestAlternativeRealDataDefectsAreObservable(t *testing.T) {
	accounts := altAccounts(t)
	var probes []altProbe
	for i, d := range matrix.RealData {
		body := d.Body(fmt.Sprintf("probe-%d@example.com", i), fmt.Sprintf("+1202555%04d", i), time.Now())
		probes = append(probes, altProbe{op: spec.PathContactAdd, body: string(body)})
	}
	for _, tt := range altRealDataDefects() {
		t.Run(tt.name, func(t *testing.T) {
			right := answers(newAltService(accounts, 1<<20, altWindow, altOptions{}, altDefect{}), accounts, probes)
			wrong := answers(newAltService(accounts, 1<<20, altWindow, altOptions{}, tt.defect), accounts, probes)
			if slices.Equal(right, wrong) {
				t.Errorf("no contact of rule contact-realdata tells the defect from the right service")
			}
		})
	}
}

// TestAlternativeRealData: a strict validator (altOptions.StrictContacts)
// passes with a warning for each shape it refuses, none a failure. (Each
// real-data defect failing the run in a scenario of §4.1 or §2.1 is
// TestAlternativeDefectsAreCaught's.)
func TestAlternativeRealData(t *testing.T) {
	waitsForWindows(t)
	runs := startAltRuns(t, []altTarget{{opts: altOptions{StrictContacts: true}, limit: altLimit}})
	t.Run("a strict validator passes, with warnings", func(t *testing.T) {
		t.Parallel()
		r := <-runs[0]
		wantPass(t, r)
		var warned []string
		for _, sc := range r.res.Scenarios {
			for _, w := range sc.Warnings {
				warned = append(warned, w.Message)
			}
		}
		all := strings.Join(warned, "\n")
		for _, d := range matrix.RealData {
			refused := d.Condition == matrix.RealEmailLocal || d.Condition == matrix.RealEmailTLD || d.Condition == matrix.RealEmailUpper ||
				d.Condition == matrix.RealPhoneGrouped || d.Condition == matrix.RealPhoneNation || d.Condition == matrix.RealListsMany || d.Condition == matrix.RealLongValues
			if got := strings.Contains(all, "refused a contact with "+d.Condition); got != refused {
				t.Errorf("warning for %q: %v, want %v; warnings:\n%s", d.Condition, got, refused, all)
			}
		}
		t.Logf("%d passed, %d warnings, %d requests, %s", r.res.Passed, r.res.Warnings, r.res.Requests, r.took.Round(time.Millisecond))
	})
}
