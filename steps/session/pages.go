package session

import (
	"fmt"

	"github.com/partner-v3/conformance-kit/steps/answer"
)

// PageView is an answer's envelope numbers and campaigns, checked for type.
type PageView struct {
	PageNo, PageSize, TotalPages, TotalRecords, FilteredRecords int64
	Campaigns                                                   []any
}

// ReadPage reads a 200 answer's envelope: nil and the problem when a field
// of §4.2 is missing or not of its type.
func ReadPage(x *Exchange) (*PageView, string) {
	m, err := x.Object()
	if err != nil {
		return nil, err.Error()
	}
	var p PageView
	for _, f := range []struct {
		name string
		dst  *int64
	}{{"pageNo", &p.PageNo}, {"pageSize", &p.PageSize}, {"totalPages", &p.TotalPages}, {"totalRecords", &p.TotalRecords}, {"filteredRecords", &p.FilteredRecords}} {
		v, ok := answer.IntOf(m[f.name])
		if !ok {
			return nil, fmt.Sprintf("%q is %s, want an integer", f.name, answer.KindOf(m[f.name]))
		}
		*f.dst = v
	}
	cs, ok := m["campaigns"].([]any)
	if !ok {
		return nil, fmt.Sprintf(`"campaigns" is %s, want an array`, answer.KindOf(m["campaigns"]))
	}
	p.Campaigns = cs
	return &p, ""
}

// IDOf is the "Id" of a listed campaign c (nil when c is not an object or
// has none).
func IDOf(c any) any {
	o, _ := c.(map[string]any)
	return o["Id"]
}
