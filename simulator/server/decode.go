package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/partner-v3/conformance-kit/simulator"
)

// fields is a request body decoded one level deep, so that every error can
// name the field at fault and the JSON type it should have.
type fields map[string]json.RawMessage

// readFields reads a JSON object body. Bad JSON, a body that is not an
// object and a body over the size cap are all 4xx errors that say so.
func readFields(r *http.Request) (fields, error) {
	body, err := io.ReadAll(r.Body)
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, simulator.Errorf(simulator.ETOOLARGE, "Request body exceeds %d bytes", tooLarge.Limit)
	} else if err != nil {
		return nil, simulator.Errorf(simulator.EINVALID, "Request body could not be read: %v", err)
	}
	return parseFields(body)
}

func parseFields(body []byte) (fields, error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil, simulator.Errorf(simulator.EINVALID, "Request body is empty: a JSON object is required")
	}
	if body[0] != '{' {
		return nil, simulator.Errorf(simulator.EINVALID, "Request body must be a JSON object")
	}
	var f fields
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&f); err != nil {
		return nil, simulator.Errorf(simulator.EINVALID, "Request body is not valid JSON: %s", jsonErrorText(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, simulator.Errorf(simulator.EINVALID, "Request body is not valid JSON: data after the object")
	}
	return f, nil
}

func jsonErrorText(err error) string {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return fmt.Sprintf("%s (at byte %d)", syn.Error(), syn.Offset)
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// only rejects fields outside allowed: a misspelt field ("phone") fails
// loudly instead of being dropped, which is what a partner testing a client
// wants to hear about.
func (f fields) only(allowed ...string) error {
	var unknown []string
	for k := range f {
		if !contains(allowed, k) {
			unknown = append(unknown, strconv.Quote(k))
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	return simulator.Errorf(simulator.EINVALID, "Unknown field %s: the fields are %s",
		strings.Join(unknown, ", "), strings.Join(allowed, ", "))
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// present reports whether the field is given and not null.
func (f fields) present(name string) bool {
	raw, ok := f[name]
	return ok && string(raw) != "null"
}

// blank reports whether the field is absent, null or the empty string: not
// given, as far as spec §4.1's "missing" goes.
func (f fields) blank(name string) bool {
	return !f.present(name) || string(f[name]) == `""`
}

func (f fields) str(name string) (string, error) {
	if !f.present(name) {
		return "", nil
	}
	var v string
	if err := json.Unmarshal(f[name], &v); err != nil {
		return "", simulator.Errorf(simulator.EINVALID, "%s must be a string", name)
	}
	return v, nil
}

// integer decodes a JSON integer: 5 is one, 5.0, "5" and 5e0 are not.
func (f fields) integer(name string) (v int64, ok bool, err error) {
	if !f.present(name) {
		return 0, false, nil
	}
	raw := string(f[name])
	v, perr := strconv.ParseInt(raw, 10, 64)
	if perr != nil {
		return 0, false, simulator.Errorf(simulator.EINVALID, "%s must be an integer", name)
	}
	return v, true, nil
}

func (f fields) strings(name string) ([]string, error) {
	if !f.present(name) {
		return nil, nil
	}
	var v []string
	if err := json.Unmarshal(f[name], &v); err != nil {
		return nil, simulator.Errorf(simulator.EINVALID, "%s must be an array of strings", name)
	}
	return v, nil
}
