package steps

// The field tables of the scenarios (package answer judges against them).

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
