package partnerapi

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/partner-v3/conformance-kit/simulator/profile"
)

// This file plays the fields a profile adds inside the objects of a 200
// (http.recordFields: each campaign, emailStat, smsStat) and the added
// fields that echo the request's own value (profile.FormatEcho), issue 28.

// fieldIDs numbers the decimal identifiers of added fields of format id
// (newID), across profiles: only their shape is the profile's.
var fieldIDs atomic.Int64

// requestBody is the body the request was read from, nil when none was
// kept (readFields keeps it in the request's state until it is answered).
func requestBody(r *http.Request) []byte {
	if st := stateFrom(r); st != nil && st.body != nil {
		return *st.body
	}
	return nil
}

// appendAddedFields appends `,"name":value` for each field added to a
// 200, a field of format echo the request's own value of its name.
func appendAddedFields(dst []byte, fs []profile.Field, status int, requestID string, req []byte) []byte {
	var vals map[string]json.RawMessage
	for _, f := range fs {
		if f.Format != profile.FormatEcho {
			dst = appendFields(dst, []profile.Field{f}, status, requestID)
			continue
		}
		if vals == nil {
			vals = topFields(req)
		}
		name, _ := json.Marshal(f.Name)
		dst = append(append(append(dst, ','), name...), ':')
		if v, ok := vals[f.Name[strings.LastIndexByte(f.Name, '.')+1:]]; ok {
			dst = append(dst, bytes.TrimSpace(v)...)
		} else {
			dst = append(dst, "null"...)
		}
	}
	return dst
}

// topFields are a JSON object's members; empty for anything else.
func topFields(body []byte) map[string]json.RawMessage {
	vals := map[string]json.RawMessage{}
	if json.Unmarshal(body, &vals) != nil {
		return map[string]json.RawMessage{}
	}
	return vals
}

// addRecordFields is body, one JSON object, with objs' fields added
// inside the objects they name: "campaigns[]" each item of campaigns,
// "emailStat" that object. A body that is no object is left as it is.
func addRecordFields(body []byte, objs map[string][]profile.Field, status int, requestID string, req []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return body
	}
	out := []byte{'{'}
	for first := true; dec.More(); first = false {
		t, err := dec.Token()
		k, isKey := t.(string)
		var v json.RawMessage
		if err != nil || !isKey || dec.Decode(&v) != nil {
			return body
		}
		if !first {
			out = append(out, ',')
		}
		name, _ := json.Marshal(k)
		out = append(append(out, name...), ':')
		switch {
		case objs[k] != nil:
			v = extendObject(v, objs[k], status, requestID, req)
		case objs[k+"[]"] != nil:
			var items []json.RawMessage
			if json.Unmarshal(v, &items) == nil && items != nil {
				list := []byte{'['}
				for i, it := range items {
					if i > 0 {
						list = append(list, ',')
					}
					list = append(list, extendObject(it, objs[k+"[]"], status, requestID, req)...)
				}
				v = append(list, ']')
			}
		}
		out = append(out, v...)
	}
	if _, err := dec.Token(); err != nil {
		return body
	}
	if _, err := dec.Token(); err != io.EOF {
		return body
	}
	return append(out, '}', '\n')
}

// extendObject is obj, one JSON object, with fs appended inside it.
func extendObject(obj json.RawMessage, fs []profile.Field, status int, requestID string, req []byte) json.RawMessage {
	obj = bytes.TrimSpace(obj)
	if len(obj) < 2 || obj[0] != '{' || obj[len(obj)-1] != '}' {
		return obj
	}
	inner := bytes.TrimSpace(obj[1 : len(obj)-1])
	out := append([]byte{'{'}, inner...)
	added := appendAddedFields(nil, fs, status, requestID, req)
	if len(inner) == 0 {
		added = added[1:] // no member before the first: no comma
	}
	return append(append(out, added...), '}')
}
