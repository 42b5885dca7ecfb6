package steps

import (
	"slices"
	"strings"
	"testing"

	"github.com/cucumber/godog"

	"github.com/partner-v3/conformance-kit/features"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// TestShapesMatchTheScenarios keeps the field tables every answer is
// checked against equal to the tables the scenarios state: one spec fact,
// written for people in the .feature files and for every answer here.
func TestShapesMatchTheScenarios(t *testing.T) {
	suite := godog.TestSuite{Options: &godog.Options{FS: features.FS, Paths: []string{"."}}}
	feats, err := suite.RetrieveFeatures()
	if err != nil {
		t.Fatal(err)
	}
	byFirst := map[string][]fieldRow{"status": contactShape, "pageNo": pageShape, "emailStat": statsShape}
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
				var want []fieldRow
				switch st.Text {
				case "every campaign of every kind should carry the fields of §2.2 in their formats:":
					want = campaignShape
				case `the "emailStat" object should have these fields:`:
					want = emailStatShape
				case `the "smsStat" object should have these fields:`:
					want = smsStatShape
				case "the response body should be a JSON object with these fields:":
					want = byFirst[got[0].field]
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
						w.format = ""
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

// TestSpecFieldsAreTheShapes: the fields of package spec, which the matrix's cells name, are the
// spec's tables the answers are checked against, in order.
func TestSpecFieldsAreTheShapes(t *testing.T) {
	for _, tt := range []struct {
		name   string
		fields []string
		shape  []fieldRow
	}{{"campaign", spec.CampaignFields(), campaignShape}, {"envelope", spec.ListFields(), pageShape}} {
		var names []string
		for _, r := range tt.shape {
			names = append(names, r.field)
		}
		if !slices.Equal(names, tt.fields) {
			t.Errorf("%s: package spec names %v, the shape %v", tt.name, tt.fields, names)
		}
	}
}

// TestAnswerShapesRefuseAnUnknownOperation: an operation added to the
// spec's table without an answer shape, or with one whose body is not its
// Response, is refused at init, not let through unchecked.
func TestAnswerShapesRefuseAnUnknownOperation(t *testing.T) {
	ops := spec.Operations()
	if err := checkAnswerShapes(ops, answerShapes); err != nil {
		t.Fatalf("the shapes disagree with the spec's table: %v", err)
	}
	added := append(slices.Clone(ops), spec.Operation{Name: "Contact Delete", Path: "contact/delete", Response: []string{"status"}})
	if err := checkAnswerShapes(added, answerShapes); err == nil || !strings.Contains(err.Error(), `"Contact Delete"`) {
		t.Errorf("an operation without a shape: err = %v, want one naming it", err)
	}
	changed := spec.Operations()
	changed[0].Response = append(changed[0].Response, "createdAt")
	if err := checkAnswerShapes(changed, answerShapes); err == nil {
		t.Error("a shape whose fields are not the operation's Response was accepted")
	}
	if err := checkAnswerShapes(ops[1:], answerShapes); err == nil {
		t.Error("a shape for an operation the spec does not have was accepted")
	}
	defer func() {
		if recover() == nil {
			t.Error("answerShapeOf of an unknown operation did not panic")
		}
	}()
	answerShapeOf("Contact Delete")
}
