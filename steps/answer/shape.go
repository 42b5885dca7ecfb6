package answer

// The shape of every successful answer, checked on every answer the suite
// sees (not only in the scenarios that look at it): a field's type is due
// on every response where it appears, whatever the request that drew it.

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/result"
)

// The spec's field tables (§2.2, §2.3, §4.1, §4.2), as the scenarios' own
// tables state them; steps' TestShapesMatchTheScenarios keeps the two
// alike. Read them; never change them.
var (
	// ContactShape is §4.1's Add Contact answer.
	ContactShape = []FieldRow{{"status", "string", ""}, {"contactId", "string", ""}}
	// PageShape is §4.2's Campaign List envelope.
	PageShape = []FieldRow{{"pageNo", "integer", ""}, {"pageSize", "integer", ""}, {"totalPages", "integer", ""},
		{"totalRecords", "integer", ""}, {"filteredRecords", "integer", ""}, {"campaigns", "array", ""}}
	// CampaignShape is §2.2's Campaign, with the formats of its fields.
	CampaignShape = []FieldRow{
		{"Id", "integer", ""}, {"campaignName", "string", ""}, {"campaignType", "integer", "0 or 1"},
		{"campaignChannel", "string", "email or sms"}, {"status", "string", ""}, {"statusColor", "string", "hex colour"},
		{"active", "integer", "0 or 1"}, {"scheduledOn", "string", "timestamp"}, {"scheduledTimeZone", "string", ""},
		{"offset", "string", "utc offset"}, {"autoResend", "integer", ""}, {"broadcastOn", "string", "timestamp"},
		{"broadcast", "integer", ""}, {"createdAt", "string", "timestamp"}, {"updatedAt", "string", "timestamp"},
		{"reason", "null or string", ""},
	}
	// StatsShape is §4.3's Campaign Stats answer.
	StatsShape = []FieldRow{{spec.EmailStat, "object", ""}, {spec.SMSStat, "object", ""}}
	// EmailStatShape and SMSStatShape are §2.3's counts.
	EmailStatShape = countRows(spec.EmailStatKeys()...)
	SMSStatShape   = countRows(spec.SMSStatKeys()...)
)

func countRows(names ...string) []FieldRow {
	rows := make([]FieldRow, len(names))
	for i, n := range names {
		rows[i] = FieldRow{n, "integer", "count"}
	}
	return rows
}

// Warning is something the spec allows that a vendor should know about,
// seen in an answer: the sections it is of (nil: the scenario's own) and
// what it is.
type Warning struct {
	Sections []string
	Message  string
}

// answerShape is how the suite checks the 200 answer of one operation:
// the spec's table of the body's fields, and what lies inside them.
type answerShape struct {
	// sections are those a body without its table's fields breaks.
	sections []string
	// body is the table of the body's fields: the operation's
	// spec.Operation.Response, in its order, with the spec's types.
	body []FieldRow
	// inner checks what the body's fields hold once the body has them
	// (nil when the table says it all), like ShapeProblems.
	inner func(m map[string]any) (sections []string, problem string)
	// innerExtra names the fields the spec does not list inside the body's
	// fields (nil when there is no object inside).
	innerExtra func(m map[string]any) []Warning
}

// answerShapes are the operations' answer shapes by spec name; every
// operation of spec.Operations() has one (checked at init), and
// answerShapeOf refuses a name that has none.
var answerShapes = map[string]answerShape{
	spec.OpAddContact: {sections: []string{"4.1"}, body: ContactShape, inner: func(m map[string]any) ([]string, string) {
		if m["status"] != spec.StatusSuccess || m["contactId"] == "" {
			return []string{"4.1"}, fmt.Sprintf("the Add Contact answer has status %s and contactId %s, want %q and a non-empty string (spec §4.1)", JSONText(m["status"]), JSONText(m["contactId"]), spec.StatusSuccess)
		}
		return nil, ""
	}},
	spec.OpCampaignList: {sections: []string{"4.2"}, body: PageShape, inner: func(m map[string]any) ([]string, string) {
		for i, c := range m["campaigns"].([]any) {
			o, ok := c.(map[string]any)
			if !ok {
				return []string{"2.2"}, fmt.Sprintf("campaign %d of the page is %s, not an object (spec §2.2)", i+1, KindOf(c))
			}
			if sec, p := checkShape([]string{"2.2"}, fmt.Sprintf("campaign %d of the page (Id %s)", i+1, JSONText(o["Id"])), o, CampaignShape); p != "" {
				return sec, p
			}
		}
		return nil, ""
	}, innerExtra: func(m map[string]any) []Warning {
		var ext []string
		for _, c := range AsArray(m["campaigns"]) {
			if o, ok := c.(map[string]any); ok {
				_, e := CheckObject(o, CampaignShape)
				for _, k := range e {
					if !slices.Contains(ext, k) {
						ext = append(ext, k)
					}
				}
			}
		}
		if len(ext) == 0 {
			return nil
		}
		slices.Sort(ext)
		return []Warning{{Message: fmt.Sprintf("campaigns carry fields the spec does not list (§2.2): %s", Quoted(ext))}}
	}},
	spec.OpCampaignStats: {sections: []string{"2.3", "4.3"}, body: StatsShape, inner: func(m map[string]any) ([]string, string) {
		if sec, p := checkShape([]string{"2.3"}, strconv.Quote(spec.EmailStat), m[spec.EmailStat].(map[string]any), EmailStatShape); p != "" {
			return sec, p
		}
		return checkShape([]string{"2.3"}, strconv.Quote(spec.SMSStat), m[spec.SMSStat].(map[string]any), SMSStatShape)
	}, innerExtra: func(m map[string]any) []Warning {
		var ws []Warning
		for _, k := range []string{spec.EmailStat, spec.SMSStat} {
			if o, ok := m[k].(map[string]any); ok {
				rows := EmailStatShape
				if k == spec.SMSStat {
					rows = SMSStatShape
				}
				ws = append(ws, extraFields(fmt.Sprintf("%q", k), o, rows)...)
			}
		}
		return ws
	}},
}

// A new operation of spec.Operations() without an answer shape, or a shape
// whose body is not the operation's Response, stops every run at start
// rather than letting its answers through unchecked.
func init() {
	if err := checkAnswerShapes(spec.Operations(), answerShapes); err != nil {
		panic(err)
	}
}

// checkAnswerShapes returns an error unless shapes holds one shape per
// operation of ops, and no other, whose body's fields are the operation's
// Response in order.
func checkAnswerShapes(ops []spec.Operation, shapes map[string]answerShape) error {
	for _, o := range ops {
		sh, ok := shapes[o.Name]
		if !ok {
			return fmt.Errorf("steps: operation %q has no answer shape", o.Name)
		}
		names := make([]string, len(sh.body))
		for i, r := range sh.body {
			names[i] = r.Field
		}
		if !slices.Equal(names, o.Response) {
			return fmt.Errorf("steps: the answer shape of %s has fields %v, the spec's Response %v", o.Name, names, o.Response)
		}
	}
	if len(shapes) != len(ops) {
		return fmt.Errorf("steps: %d answer shapes for %d operations", len(shapes), len(ops))
	}
	return nil
}

// answerShapeOf returns the answer shape of the operation named op; an
// operation the table lacks is a programmer's error init already refused.
func answerShapeOf(op string) answerShape {
	sh, ok := answerShapes[op]
	if !ok {
		panic(fmt.Sprintf("steps: no answer shape for operation %q: the spec's are %s", op, strings.Join(spec.Names(), ", ")))
	}
	return sh
}

// checkShape checks obj against rows and, when it does not have them,
// returns secs and what is wrong with what.
func checkShape(secs []string, what string, obj map[string]any, rows []FieldRow) ([]string, string) {
	if p, _ := CheckObject(obj, rows); len(p) > 0 {
		return secs, fmt.Sprintf("%s does not have the spec's fields (%s):\n  %s", what, result.SectionList(secs), strings.Join(p, "\n  "))
	}
	return nil, ""
}

// ShapeProblems checks a 200 answer of an operation against the spec's
// tables and returns the sections it breaks and what is wrong; nil when
// nothing is. Fields the spec does not list are ExtraFields' to warn
// about.
func ShapeProblems(a *Answer) (sections []string, problem string) {
	if a.Err != nil || a.Status != http.StatusOK || a.Method != http.MethodPost {
		return nil, ""
	}
	op := a.Operation()
	if op == "" {
		return nil, ""
	}
	m, err := a.Object()
	if err != nil {
		return []string{"1"}, fmt.Sprintf("a 200 answer of %s: %v (spec §1 rule 3)", op, err)
	}
	sh := answerShapeOf(op)
	if sec, p := checkShape(sh.sections, "the "+op+" answer", m, sh.body); p != "" {
		return sec, p
	}
	if sh.inner == nil {
		return nil, ""
	}
	return sh.inner(m)
}

// ExtraFields names, for a 200 answer of an operation, the fields its body
// carries that the spec does not list: the spec lists fields but never
// forbids others, so they are a WARNING wherever they appear, whichever
// scenario met them. The messages are those of the field-table steps, so
// one warning is counted, not two.
func ExtraFields(a *Answer) []Warning {
	if a.Err != nil || a.Status != http.StatusOK || a.Method != http.MethodPost {
		return nil
	}
	m, err := a.Object()
	if err != nil {
		return nil
	}
	op := a.Operation()
	if op == "" {
		return nil
	}
	sh := answerShapeOf(op)
	ws := extraFields("the body", m, sh.body)
	if sh.innerExtra != nil {
		ws = append(ws, sh.innerExtra(m)...)
	}
	return ws
}

// extraFields names the fields of obj that rows do not list, as what's.
func extraFields(what string, obj map[string]any, rows []FieldRow) []Warning {
	if _, ext := CheckObject(obj, rows); len(ext) > 0 {
		return []Warning{{Message: fmt.Sprintf("%s carries fields the spec does not list: %s", what, Quoted(ext))}}
	}
	return nil
}
