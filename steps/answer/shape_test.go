package answer

import (
	"slices"
	"strings"
	"testing"

	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// TestSpecFieldsAreTheShapes: the fields of package spec, which the matrix's cells name, are the
// spec's tables the answers are checked against, in order.
func TestSpecFieldsAreTheShapes(t *testing.T) {
	for _, tt := range []struct {
		name   string
		fields []string
		shape  []FieldRow
	}{{"campaign", spec.CampaignFields(), CampaignShape}, {"envelope", spec.ListFields(), PageShape}} {
		var names []string
		for _, r := range tt.shape {
			names = append(names, r.Field)
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
