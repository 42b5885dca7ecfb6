package learn

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// This file learns the fields a deployment adds inside the objects of a
// 200 (http.recordFields: each campaign, emailStat and smsStat) and the
// formats of added fields beyond a constant (issue 28): an identifier of
// a shape ("req-" and 19 digits) and a field echoing the request's own.

// refineField is f, a field of an answer to x whose value is v, with the
// format a constant does not say: the request's own value echoed (a field
// of the request's body by the same name, the same JSON), or an
// identifier of a shape (a string under a name that says it is one:
// requestId, traceId), read by the contactId's classifier (classifyID), so
// that the simulator makes fresh ones of its prefix, length and alphabet.
func refineField(f profile.Field, v json.RawMessage, x *exch) profile.Field {
	if f.Format != "" {
		return f
	}
	name := f.Name[strings.LastIndexByte(f.Name, '.')+1:]
	if _, vals, ok := object(x.reqBody); ok && vals[name] != nil && f.Type != "null" && bytes.Equal(compactJSON(vals[name]), compactJSON(v)) {
		// The value seen stays as the example: where the simulator has
		// no request at hand (an error body), it says that.
		f.Format, f.Example = profile.FormatEcho, append(json.RawMessage(nil), v...)
		return f
	}
	var s string
	if f.Type != "string" || !isIDName(name) || json.Unmarshal(v, &s) != nil {
		return f
	}
	if id := classifyID(s); id.Kind != profile.IDOpaque && id.Kind != profile.IDUUID {
		f.Format, f.ID = profile.FormatID, &id
	}
	return f
}

// isIDName says whether a field's name says it holds an identifier: id,
// or a name ending in Id, ID or _id (requestId, trace_id).
func isIDName(k string) bool {
	return strings.EqualFold(k, "id") || strings.HasSuffix(k, "Id") || strings.HasSuffix(k, "ID") || strings.HasSuffix(strings.ToLower(k), "_id")
}

func compactJSON(v json.RawMessage) []byte {
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return v
	}
	return b.Bytes()
}

// recordFields reads, from the first 200 of each operation with records
// (profile.RecordPaths), the fields added inside each of its objects: of
// a list of records (each campaign), the fields every record holds, in
// the first's order; of a single object (emailStat), its own. An
// operation whose answers hold no record (an empty page) is left out.
func (l *learner) recordFields() profile.Choice[map[string]map[string][]profile.Field] {
	out := map[string]map[string][]profile.Field{}
	var ev []*exch
	paths := profile.RecordPaths()
	for _, o := range spec.Operations() {
		objs, ok := paths[o.Path]
		if !ok {
			continue
		}
		for _, x := range l.exchanges() {
			if x.op != o.Path || x.status != http.StatusOK || x.header.Get("Content-Encoding") != "" {
				continue
			}
			added, seen := recordsOf(x, objs)
			if !seen {
				continue
			}
			if len(added) > 0 {
				out[o.Path] = added
			}
			ev = append(ev, x)
			break
		}
	}
	if len(ev) == 0 {
		return unknown[map[string]map[string][]profile.Field]("no answer of 200 held a campaign or statistics")
	}
	return profile.Choice[map[string]map[string][]profile.Field]{Value: out, Evidence: l.evidences(ev...)}
}

// recordsOf reads the fields one answer adds inside its objects; seen is
// false when it holds none of them (a page without campaigns).
func recordsOf(x *exch, objs map[string][]string) (added map[string][]profile.Field, seen bool) {
	_, top, ok := object(x.body)
	if !ok {
		return nil, false
	}
	added = map[string][]profile.Field{}
	for path, own := range objs {
		var records []json.RawMessage
		if key, isList := strings.CutSuffix(path, "[]"); isList {
			if json.Unmarshal(top[key], &records) != nil || len(records) == 0 {
				continue
			}
		} else if top[path] != nil {
			records = []json.RawMessage{top[path]}
		}
		var fs []profile.Field
		for i, rec := range records {
			keys, vals, isObj := object(rec)
			if !isObj {
				fs = nil
				break
			}
			if i == 0 {
				fs = extraFields(keys, vals, own, x)
				seen = true
				continue
			}
			fs = slices.DeleteFunc(fs, func(f profile.Field) bool { return vals[f.Name] == nil })
		}
		if len(fs) > 0 {
			added[path] = fs
		}
	}
	return added, seen
}
