package steps

import (
	"testing"

	"github.com/cucumber/godog"

	"github.com/partner-v3/conformance-kit/features"
	"github.com/partner-v3/conformance-kit/steps/answer"
)

// TestShapesMatchTheScenarios keeps the field tables every answer is
// checked against (package answer) equal to the tables the scenarios
// state: one spec fact, written for people in the .feature files and for
// every answer there.
func TestShapesMatchTheScenarios(t *testing.T) {
	suite := godog.TestSuite{Options: &godog.Options{FS: features.FS, Paths: []string{"."}}}
	feats, err := suite.RetrieveFeatures()
	if err != nil {
		t.Fatal(err)
	}
	byFirst := map[string][]answer.FieldRow{"status": answer.ContactShape, "pageNo": answer.PageShape, "emailStat": answer.StatsShape}
	checked := 0
	for _, f := range feats {
		for _, p := range f.Pickles {
			for _, st := range p.Steps {
				if st.Argument == nil || st.Argument.DataTable == nil {
					continue
				}
				got, err := tableRows(st.Argument.DataTable)
				if err != nil {
					t.Fatal(err)
				}
				hasFormat := len(st.Argument.DataTable.Rows[0].Cells) > 2
				var want []answer.FieldRow
				switch st.Text {
				case "every campaign of every kind should carry the fields of §2.2 in their formats:":
					want = answer.CampaignShape
				case `the "emailStat" object should have these fields:`:
					want = answer.EmailStatShape
				case `the "smsStat" object should have these fields:`:
					want = answer.SMSStatShape
				case "the response body should be a JSON object with these fields:":
					want = byFirst[got[0].Field]
				default:
					continue
				}
				if len(want) != len(got) {
					t.Errorf("%s: %q has %d rows, the shape %d", p.Name, st.Text, len(got), len(want))
					continue
				}
				for i := range want {
					w, g := want[i], got[i]
					if !hasFormat {
						w.Format = ""
					}
					if w != g {
						t.Errorf("%s: row %d is %+v in the scenario, %+v in the shape", p.Name, i+1, g, w)
					}
				}
				checked++
			}
		}
	}
	if checked < 8 {
		t.Fatalf("only %d tables compared", checked)
	}
}
