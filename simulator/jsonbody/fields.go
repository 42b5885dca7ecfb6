// Package jsonbody reads a request body's top-level JSON fields, exactly:
// one pass over the bytes for the bodies a client usually sends, the
// standard library's decoder for the rest, and a refusal that says what is
// wrong for anything RFC 8259 does not allow or a reader would take
// silently in a way the client did not mean (a byte-order mark, invalid
// UTF-8, a lone surrogate escape, a field given twice, data after the
// object). Its refusals are simulator.Error values with code EINVALID
// (docs/bad-input.md lists them word for word); what a field's value must
// be is the caller's to say.
package jsonbody

import "encoding/json"

// Fields is a request body decoded one level deep, so that every error can
// name the field at fault and the JSON type it should have: its top-level
// names, distinct, in body order, each with its value's raw JSON. A slice
// looked up name by name rather than a map (issue 31): a body of the spec
// has at most MaxFields fields, and the one-pass reader fills the caller's
// array with names and values aliasing the body, allocating nothing.
type Fields []Field

// Field is one top-level name of a body and its value.
type Field struct {
	Name  []byte
	Value json.RawMessage
}

// Raw returns the value of the field name, or nil when it is absent (as a
// map's index would).
func (f Fields) Raw(name string) json.RawMessage {
	for i := range f {
		if string(f[i].Name) == name {
			return f[i].Value
		}
	}
	return nil
}

// Has reports whether the body gives the field name, null included.
func (f Fields) Has(name string) bool {
	for i := range f {
		if string(f[i].Name) == name {
			return true
		}
	}
	return false
}

// Present reports whether the field is given and not null.
func (f Fields) Present(name string) bool {
	raw := f.Raw(name)
	return raw != nil && string(raw) != "null"
}

// Blank reports whether the field is absent, null or the empty string: not
// given, as far as spec §4.1's "missing" goes.
func (f Fields) Blank(name string) bool {
	return !f.Present(name) || string(f.Raw(name)) == `""`
}
