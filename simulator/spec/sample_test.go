package spec_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// full is a sample with every input an operation may read.
var full = spec.Sample{Email: "a@b.test", FirstName: "Conformance", Limit: 1, CampaignID: 42}

// TestEveryOperationHasABody: every operation of the table builds a valid
// body from a full sample, a JSON object of fields of its own request, in
// the spec's order, with its required ones (§4.2, §4.3; §4.1's email),
// so a new operation without a builder fails here, not in a run.
func TestEveryOperationHasABody(t *testing.T) {
	for _, o := range spec.Operations() {
		b, err := o.Body(full)
		if err != nil {
			t.Errorf("%s: %v", o.Name, err)
			continue
		}
		keys, err := objectKeys(b)
		if err != nil {
			t.Errorf("%s: body %s is no JSON object: %v", o.Name, b, err)
			continue
		}
		if len(keys) == 0 {
			t.Errorf("%s: body %s is empty", o.Name, b)
		}
		last := -1
		for _, k := range keys {
			i := slices.Index(o.Request, k)
			if i <= last {
				t.Errorf("%s: body %s: %q is not a request field after the one before it (%q)", o.Name, b, k, o.Request)
			}
			last = i
		}
	}
	if _, err := (spec.Operation{Name: "Contact Delete", Path: "contact/delete"}).Body(full); err == nil || !strings.Contains(err.Error(), "Contact Delete") {
		t.Errorf("an operation outside the table: err = %v, want one naming it", err)
	}
}

// TestBodies: the bytes each caller has always sent (the suite's reports
// show them, the learner's evidence holds them, the load's figures were
// measured with them), and a sample that lacks what an operation needs.
func TestBodies(t *testing.T) {
	tests := []struct {
		name, op string
		s        spec.Sample
		want     string // "" for an error
	}{
		{"the suite's contact", spec.OpAddContact, spec.Sample{Email: "c@x.test", FirstName: "Conformance"}, `{"email": "c@x.test", "firstName": "Conformance"}`},
		{"the learner's contact", spec.OpAddContact, spec.Sample{Email: "learn-r-1@x.test", Limit: 1}, `{"email": "learn-r-1@x.test"}`},
		{"the load's contact", spec.OpAddContact, spec.Sample{Email: "load-r-1@example.com", FirstName: "Load", LastName: "Test", Country: "US", Tags: []string{"load"}},
			`{"email": "load-r-1@example.com", "firstName": "Load", "lastName": "Test", "country": "US", "tag": ["load"]}`},
		{"an address to escape", spec.OpAddContact, spec.Sample{Email: `"q\\"@x.test`}, `{"email": "\"q\\\\\"@x.test"}`},
		{"a contact without an address", spec.OpAddContact, spec.Sample{FirstName: "Conformance"}, ""},
		{"a page of one", spec.OpCampaignList, spec.Sample{Limit: 1, CampaignID: 7}, `{"limit": 1, "page": 1}`},
		{"the largest page", spec.OpCampaignList, spec.Sample{Limit: spec.MaxPageSize}, `{"limit": 50, "page": 1}`},
		{"no page size", spec.OpCampaignList, spec.Sample{}, ""},
		{"a page too large", spec.OpCampaignList, spec.Sample{Limit: spec.MaxPageSize + 1}, ""},
		{"a campaign's statistics", spec.OpCampaignStats, spec.Sample{CampaignID: 1001, Email: "c@x.test"}, `{"campaignId": 1001}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := spec.OperationNamed(tt.op)
			if err != nil {
				t.Fatal(err)
			}
			got, err := o.Body(tt.s)
			if tt.want == "" {
				if err == nil || !strings.Contains(err.Error(), tt.op) {
					t.Errorf("Body = %s, %v, want an error naming %s", got, err, tt.op)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Errorf("Body = %s, %v, want %s", got, err, tt.want)
			}
		})
	}
}

// TestOperationProperties: what callers branch on, per operation: only
// Add Contact writes, only Campaign Stats needs a campaign.
func TestOperationProperties(t *testing.T) {
	for _, o := range spec.Operations() {
		if got, want := o.Writes, o.Name == spec.OpAddContact; got != want {
			t.Errorf("%s: Writes = %v, want %v", o.Name, got, want)
		}
		if got, want := o.NeedsCampaign, o.Name == spec.OpCampaignStats; got != want {
			t.Errorf("%s: NeedsCampaign = %v, want %v", o.Name, got, want)
		}
	}
}

// objectKeys returns the keys of a JSON object in the order they come.
func objectKeys(b []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, err
		}
		keys = append(keys, k.(string))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
	}
	return keys, nil
}
