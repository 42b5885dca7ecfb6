package steps

// The field tables of the scenarios, and the warnings every answer is
// looked at for (package answer judges; a scenario records).

import (
	"fmt"
	"strings"

	"github.com/cucumber/godog"

	"github.com/partner-v3/conformance-kit/steps/answer"
)

// tableRows reads a scenario's "field | type | format" table.
func tableRows(t *godog.Table) ([]answer.FieldRow, error) {
	if t == nil || len(t.Rows) < 2 {
		return nil, fmt.Errorf("the step needs a table with a header row and a row per field")
	}
	var rows []answer.FieldRow
	for _, r := range t.Rows[1:] {
		var fr answer.FieldRow
		for i, c := range r.Cells {
			switch strings.TrimSpace(t.Rows[0].Cells[i].Value) {
			case "field":
				fr.Field = c.Value
			case "type":
				fr.Type = c.Value
			case "format":
				fr.Format = c.Value
			}
		}
		rows = append(rows, fr)
	}
	return rows, nil
}

// inspect records, as the scenario's warnings, what every answer shows that
// the spec allows but a vendor should know (answer.Warnings): an unusual
// JSON media type or parameter (§1 rule 3), fields the spec does not list,
// timestamps with +00:00, headers that contradict each other or the run's
// rate limit (§8).
func (s *scenario) inspect(x *Exchange) {
	for _, w := range answer.Warnings(x.answer(), s.env.Pacer.Limit(), s.env.Pacer.Window()) {
		s.Warn(w.Sections, x, "%s", w.Message)
	}
}
