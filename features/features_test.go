package features_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/cucumber/godog"
	messages "github.com/cucumber/messages/go/v21"
	"github.com/partner-v3/conformance-kit/features"
	"github.com/partner-v3/conformance-kit/fixtures"
	"github.com/partner-v3/conformance-kit/steps/matrix"
)

// sectionList is fixtures/spec-sections.json, the suite's own copy of the
// spec's sections and error rows.
type sectionList struct {
	Sections []struct {
		ID        string `json:"id"`
		Normative bool   `json:"normative"`
	} `json:"sections"`
	ErrorRows []struct {
		Section    string   `json:"section"`
		Status     int      `json:"status"`
		Message    string   `json:"message"`
		Level      string   `json:"level"`
		Operations []string `json:"operations"`
	} `json:"errorRows"`
}

func loadSections(t *testing.T) *sectionList {
	t.Helper()
	b, err := fixtures.FS.ReadFile("spec-sections.json")
	if err != nil {
		t.Fatalf("read section list: %v", err)
	}
	var l sectionList
	if err := json.Unmarshal(b, &l); err != nil {
		t.Fatalf("decode section list: %v", err)
	}
	return &l
}

// pickles returns every scenario of the embedded suite (outline rows
// expanded), as godog runs them.
func pickles(t *testing.T) []*messages.Pickle {
	t.Helper()
	suite := godog.TestSuite{Options: &godog.Options{FS: features.FS, Paths: []string{"."}}}
	feats, err := suite.RetrieveFeatures()
	if err != nil {
		t.Fatalf("parse features: %v", err)
	}
	var out []*messages.Pickle
	for _, f := range feats {
		out = append(out, f.Pickles...)
	}
	if len(out) == 0 {
		t.Fatal("the embedded suite has no scenario")
	}
	return out
}

func tagsOf(p *messages.Pickle) []string {
	var out []string
	for _, t := range p.Tags {
		out = append(out, t.Name)
	}
	return out
}

// text is everything a scenario says: its name, steps and their arguments.
func text(p *messages.Pickle) string {
	var b strings.Builder
	b.WriteString(p.Name + "\n")
	for _, s := range p.Steps {
		b.WriteString(s.Text + "\n")
		if s.Argument != nil && s.Argument.DocString != nil {
			b.WriteString(s.Argument.DocString.Content + "\n")
		}
	}
	return b.String()
}

// TestEveryScenarioIsTagged checks the tag vocabulary of the docs: each
// scenario names its spec sections, has exactly one level, and uses no
// unknown tag.
func TestEveryScenarioIsTagged(t *testing.T) {
	known := map[string]bool{"@normative": true, "@simulator": true, "@writes": true, "@rate-limit": true, "@two-accounts": true}
	for _, r := range matrix.Matrix() {
		known[matrix.Tag(r.ID)] = true
	}
	for _, p := range pickles(t) {
		tags := tagsOf(p)
		levels, specs := 0, 0
		for _, tag := range tags {
			switch {
			case tag == "@normative" || tag == "@simulator":
				levels++
			case strings.HasPrefix(tag, "@spec-"):
				specs++
			case !known[tag]:
				t.Errorf("%s: unknown tag %s", p.Name, tag)
			}
		}
		if levels != 1 {
			t.Errorf("%s: %d of @normative/@simulator, want exactly one (tags %v)", p.Name, levels, tags)
		}
		if specs == 0 {
			t.Errorf("%s: no @spec-* tag", p.Name)
		}
		if slices.Contains(tags, "@two-accounts") && !strings.Contains(text(p), "second account") {
			t.Errorf("%s: tagged @two-accounts but never uses the second account", p.Name)
		}
		if strings.Contains(text(p), "a second account is configured") && !slices.Contains(tags, "@two-accounts") {
			t.Errorf("%s: needs a second account but is not tagged @two-accounts", p.Name)
		}
		if strings.Contains(text(p), "rate-limit budget") && !slices.Contains(tags, "@rate-limit") {
			t.Errorf("%s: spends the rate-limit budget but is not tagged @rate-limit", p.Name)
		}
	}
}

// TestSpecCoverage checks that every @spec-* tag names a section of the
// spec, and that every normative section has a normative scenario.
func TestSpecCoverage(t *testing.T) {
	l := loadSections(t)
	sections := make(map[string]bool)
	for _, s := range l.Sections {
		sections[s.ID] = true
	}
	covered := make(map[string]int)
	for _, p := range pickles(t) {
		tags := tagsOf(p)
		for _, tag := range tags {
			id, ok := strings.CutPrefix(tag, "@spec-")
			if !ok {
				continue
			}
			if !sections[id] {
				t.Errorf("%s: tag %s names no section of the spec", p.Name, tag)
			}
			if slices.Contains(tags, "@normative") {
				covered[id]++
			}
		}
	}
	for _, s := range l.Sections {
		if s.Normative && covered[s.ID] == 0 {
			t.Errorf("normative section §%s has no @normative scenario", s.ID)
		}
		t.Logf("§%-4s %3d normative scenarios", s.ID, covered[s.ID])
	}
}

// TestErrorRowCoverage checks that every error row of spec §4 and §7 is
// exercised, for each operation it applies to, by a scenario of the row's
// level that states its status and message.
func TestErrorRowCoverage(t *testing.T) {
	l := loadSections(t)
	ps := pickles(t)
	for _, row := range l.ErrorRows {
		for _, op := range row.Operations {
			found := false
			for _, p := range ps {
				txt := text(p)
				if slices.Contains(tagsOf(p), "@"+row.Level) && strings.Contains(txt, row.Message) &&
					strings.Contains(txt, op) && strings.Contains(txt, strings.TrimSpace(jsonInt(row.Status))) {
					found = true
					break
				}
			}
			if !found {
				t.Errorf("§%s row %d %q for %s: no @%s scenario checks it", row.Section, row.Status, row.Message, op, row.Level)
			}
		}
	}
}

func jsonInt(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestNormativeScenariosAllowExtraFields: the spec lists fields but never
// forbids others, so no normative scenario may demand an exact key set
// (extra fields are warnings). The 429 body is the one exception: §7 fixes
// its whole shape ("one string field error").
func TestNormativeScenariosAllowExtraFields(t *testing.T) {
	for _, p := range pickles(t) {
		if !slices.Contains(tagsOf(p), "@normative") {
			continue
		}
		for _, s := range p.Steps {
			if strings.Contains(s.Text, "exactly these fields") {
				t.Errorf("%s: normative step %q demands an exact key set", p.Name, s.Text)
			}
			if strings.Contains(s.Text, "exactly this JSON body") && !strings.Contains(s.Text, "429") {
				t.Errorf("%s: normative step %q demands an exact body other than the 429's", p.Name, s.Text)
			}
		}
	}
}

// TestEveryRuleHasItsScenario: every rule of the matrix (steps/matrix.go)
// is checked by a normative scenario tagged with it, in one of the rule's
// sections; a @rule tag names a rule of the matrix (see
// TestEveryScenarioIsTagged).
func TestEveryRuleHasItsScenario(t *testing.T) {
	ps := pickles(t)
	for _, r := range matrix.Matrix() {
		found := false
		for _, p := range ps {
			tags := tagsOf(p)
			if !slices.Contains(tags, matrix.Tag(r.ID)) {
				continue
			}
			if !slices.Contains(tags, "@normative") {
				t.Errorf("rule %s: scenario %q is not @normative", r.ID, p.Name)
			}
			for _, sec := range r.Sections {
				found = found || slices.Contains(tags, "@spec-"+sec)
			}
		}
		if !found {
			t.Errorf("rule %s (%s) has no normative scenario tagged %s with one of its sections", r.ID, r.Statement, matrix.Tag(r.ID))
		}
		if len(r.Cells()) == 0 {
			t.Errorf("rule %s has no cell", r.ID)
		}
	}
}
