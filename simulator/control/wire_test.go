package control_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/simulator/simtest"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// The server answers and decodes the wire types of simulator/control/wire.go
// and the client encodes and reads the same ones. These tests hold both
// sides to them through a real simulator: a local struct that drifted on
// either side (a field renamed, added, or omitted differently) fails here.

// call sends one control request and returns the answer's status and body.
func call(t *testing.T, s *simtest.Simulator, method, path string, body any) (int, []byte) {
	t.Helper()
	var in io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		in = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.AdminURL+path, in)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.AdminToken)
	resp, err := s.HTTPClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// sameShape checks that answer is exactly what the wire type v shows:
// decoded strictly into v (every field known) and encoded again, it is the
// same JSON value.
func sameShape(t *testing.T, name string, answer []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(answer))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Errorf("%s: %T does not decode the answer %s: %v", name, v, answer, err)
		return
	}
	again, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("%s: encode %T: %v", name, v, err)
	}
	var want, got any
	if err := json.Unmarshal(answer, &want); err != nil {
		t.Fatalf("%s: answer %s: %v", name, answer, err)
	}
	if err := json.Unmarshal(again, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: %T encodes the answer as\n%s\nwant the server's\n%s", name, v, again, answer)
	}
}

// jsonFields lists the JSON names of a struct type's fields.
func jsonFields(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			out = append(out, jsonFields(f.Type.Elem())...)
			continue
		}
		out = append(out, strings.Split(f.Tag.Get("json"), ",")[0])
	}
	slices.Sort(out)
	return out
}

// TestWireTypesAreTheServersAnswers checks every answer of the control API
// against its wire type, with every optional field present in one answer
// or another: a fault of each kind, a journal entry a fault answered, one
// account's clock, a simulator with and without a campaigns file.
func TestWireTypesAreTheServersAnswers(t *testing.T) {
	t.Parallel()
	s := simtest.New(t, simtest.WithContacts(2))
	alpha := s.Accounts[0]

	// A fault of each kind with its own field, scoped to alpha: its
	// answer carries status, retryAfter, delay and accountId.
	var faultIDs []string
	for _, f := range []control.FaultRequest{
		{Operation: spec.PathCampaignList, Kind: simulator.FaultError, AccountID: &alpha.AccountID, Status: ref(503)},
		{Operation: "*", Kind: simulator.FaultRateLimit, RetryAfter: ref(7), Probability: ref(0.5), Count: ref(2)},
		{Operation: spec.PathContactAdd, Kind: simulator.FaultDelay, Delay: ref("1500ms")},
		{Operation: spec.PathCampaignStats, Kind: simulator.FaultMalformed},
	} {
		status, b := call(t, s, http.MethodPost, "/faults", f)
		if status != http.StatusCreated {
			t.Fatalf("POST /faults %s: %d %s", f.Kind, status, b)
		}
		var out control.FaultResponse
		sameShape(t, "POST /faults "+f.Kind, b, &out)
		faultIDs = append(faultIDs, out.ID)
	}
	_, b := call(t, s, http.MethodGet, "/faults", nil)
	sameShape(t, "GET /faults", b, &control.FaultsResponse{})
	// The error fault answers alpha's next campaign/list: its journal
	// entry names the fault.
	if got := list(t, s, alpha); got != http.StatusServiceUnavailable {
		t.Fatalf("campaign/list with an error fault: %d, want 503", got)
	}
	_, b = call(t, s, http.MethodDelete, "/faults/"+faultIDs[2], nil)
	sameShape(t, "DELETE /faults/{id}", b, &control.FaultResponse{})
	_, b = call(t, s, http.MethodDelete, "/faults", nil)
	sameShape(t, "DELETE /faults", b, &control.FaultsResponse{})

	// A refused request: its entry is attributed, not authenticated.
	if got := partner(t, s, simulator.Account{APIKey: alpha.APIKey, APISecret: "wrong", AccountID: alpha.AccountID},
		spec.PathCampaignList, `{"limit":1,"page":1}`); got != http.StatusUnauthorized {
		t.Fatalf("a wrong secret: %d, want 401", got)
	}
	_, b = call(t, s, http.MethodGet, "/journal", nil)
	if !bytes.Contains(b, []byte(`"faultId"`)) || !bytes.Contains(b, []byte(`"attributedTo"`)) {
		t.Fatalf("GET /journal %s: want an entry a fault answered and a refused one", b)
	}
	sameShape(t, "GET /journal", b, &control.JournalResponse{})
	_, b = call(t, s, http.MethodDelete, "/journal", nil)
	sameShape(t, "DELETE /journal", b, &control.JournalResponse{})

	_, b = call(t, s, http.MethodGet, "/contacts?accountId="+alpha.AccountID, nil)
	sameShape(t, "GET /contacts", b, &control.ContactsResponse{})

	for _, path := range []string{"/config", "/version"} {
		_, b = call(t, s, http.MethodGet, path, nil)
		var cfg control.ConfigResponse
		sameShape(t, "GET "+path, b, &cfg)
		if cfg.BuildInfo == nil || cfg.Seed == nil || cfg.CampaignsPerAccount == nil || cfg.ContactsPerAccount != 2 || cfg.Violations == nil {
			t.Errorf("GET %s = %s: want the build, the seed, the campaigns and the contacts", path, b)
		}
	}

	at := simulator.Timestamp{Time: time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)}
	for _, req := range []control.ClockRequest{
		{Set: &at}, {Freeze: ref(true)}, {Advance: "61s"}, {Freeze: ref(false)}, {Reset: true},
		{AccountID: alpha.AccountID, Advance: "2m"}, {AccountID: alpha.AccountID, Reset: true},
	} {
		status, b := call(t, s, http.MethodPost, "/clock", req)
		if status != http.StatusOK {
			t.Fatalf("POST /clock %+v: %d %s", req, status, b)
		}
		sameShape(t, "POST /clock", b, &control.ClockResponse{})
	}
	_, b = call(t, s, http.MethodGet, "/clock?accountId="+alpha.AccountID, nil)
	var clock control.ClockResponse
	sameShape(t, "GET /clock?accountId=", b, &clock)
	if clock.AccountID != alpha.AccountID || clock.AccountOffset == "" {
		t.Errorf("GET /clock?accountId= = %s: want the account and its offset", b)
	}

	for _, req := range []control.RateResetRequest{{}, {AccountID: alpha.AccountID}} {
		if status, b := call(t, s, http.MethodPost, "/rate-limit/reset", req); status != http.StatusOK {
			t.Fatalf("POST /rate-limit/reset %+v: %d %s", req, status, b)
		}
	}

	status, b := call(t, s, http.MethodPost, "/accounts", simulator.AccountSpec{Name: "wire", Campaigns: ref(2), Seed: 9})
	if status != http.StatusCreated {
		t.Fatalf("POST /accounts: %d %s", status, b)
	}
	var created simulator.CreatedAccount
	sameShape(t, "POST /accounts", b, &created)
	_, b = call(t, s, http.MethodGet, "/accounts", nil)
	sameShape(t, "GET /accounts", b, &control.AccountsResponse{})
	for _, id := range []string{alpha.AccountID, created.AccountID} {
		_, b = call(t, s, http.MethodGet, "/accounts/"+id, nil)
		sameShape(t, "GET /accounts/{id}", b, &simulator.AccountInfo{})
		_, b = call(t, s, http.MethodGet, "/accounts/"+id+"/budget", nil)
		sameShape(t, "GET /accounts/{id}/budget", b, &simulator.Budget{})
		_, b = call(t, s, http.MethodGet, "/accounts/"+id+"/report", nil)
		sameShape(t, "GET /accounts/{id}/report", b, &simulator.ClientReport{})
	}
}

// TestServerKnowsEveryRequestField sends every field of every request
// type (each with a kind it applies to): the server decodes strictly, so
// a field the client encodes and the server does not know answers 400.
func TestServerKnowsEveryRequestField(t *testing.T) {
	t.Parallel()
	s := simtest.New(t)
	alpha := s.Accounts[0].AccountID
	at := simulator.Timestamp{Time: time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)}
	tests := []struct {
		path string
		body any
	}{
		{"/faults", control.FaultRequest{Operation: "*", Kind: simulator.FaultError, AccountID: &alpha, Count: ref(2), Status: ref(502), Probability: ref(0.25)}},
		{"/faults", control.FaultRequest{Operation: "*", Kind: simulator.FaultRateLimit, RetryAfter: ref(0)}},
		{"/faults", control.FaultRequest{Operation: "*", Kind: simulator.FaultDelay, Delay: ref("1ms")}},
		{"/clock", control.ClockRequest{Reset: true, Set: &at, Advance: "1s", Freeze: ref(true)}},
		{"/clock", control.ClockRequest{AccountID: alpha, Reset: true, Advance: "1s"}},
		{"/rate-limit/reset", control.RateResetRequest{AccountID: alpha}},
		{"/accounts", simulator.AccountSpec{Name: "every field", Campaigns: ref(1), Seed: 3, Profile: profile.DefaultJSON()}},
	}
	sent := map[reflect.Type][]string{}
	for _, tt := range tests {
		status, b := call(t, s, http.MethodPost, tt.path, tt.body)
		if status/100 != 2 {
			t.Errorf("POST %s %+v: %d %s", tt.path, tt.body, status, b)
		}
		enc, err := json.Marshal(tt.body)
		if err != nil {
			t.Fatal(err)
		}
		var fields map[string]any
		if err := json.Unmarshal(enc, &fields); err != nil {
			t.Fatal(err)
		}
		typ := reflect.TypeOf(tt.body)
		for k := range fields {
			if !slices.Contains(sent[typ], k) {
				sent[typ] = append(sent[typ], k)
			}
		}
	}
	for typ, got := range sent {
		slices.Sort(got)
		if want := jsonFields(typ); !slices.Equal(got, want) {
			t.Errorf("the requests sent %s fields %v; want every one of %v", typ, got, want)
		}
	}
}

func ref[T any](v T) *T { return &v }
