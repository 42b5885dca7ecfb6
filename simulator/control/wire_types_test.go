package control_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// A stored fault shown on the wire and read back is the fault, with the
// defaults a stored fault leaves zero filled in.
func TestFaultResponseRoundTrip(t *testing.T) {
	tests := []struct {
		name      string
		stored    simulator.Fault
		wire      string
		readsBack simulator.Fault
	}{
		{"an error fault shows status 500 and probability 1 when left zero",
			simulator.Fault{ID: "flt_1", Operation: "*", Kind: simulator.FaultError, Remaining: 2},
			`{"id":"flt_1","operation":"*","kind":"error","remaining":2,"status":500,"probability":1}`,
			simulator.Fault{ID: "flt_1", Operation: "*", Kind: simulator.FaultError, Remaining: 2, Status: 500, Probability: 1}},
		{"a rate-limit fault shows its Retry-After in seconds, zero included",
			simulator.Fault{ID: "flt_2", Operation: spec.PathCampaignList, AccountID: "acc", Kind: simulator.FaultRateLimit, Remaining: 1, Probability: 0.5},
			`{"id":"flt_2","operation":"campaign/list","accountId":"acc","kind":"rate-limit","remaining":1,"retryAfter":0,"probability":0.5}`,
			simulator.Fault{ID: "flt_2", Operation: spec.PathCampaignList, AccountID: "acc", Kind: simulator.FaultRateLimit, Remaining: 1, Probability: 0.5}},
		{"a delay fault shows its delay as a Go duration and no status",
			simulator.Fault{ID: "flt_3", Operation: spec.PathContactAdd, Kind: simulator.FaultDelay, Remaining: 1, Delay: 1500 * time.Millisecond, Status: 502, Probability: 1},
			`{"id":"flt_3","operation":"contact/add","kind":"delay","remaining":1,"delay":"1.5s","probability":1}`,
			simulator.Fault{ID: "flt_3", Operation: spec.PathContactAdd, Kind: simulator.FaultDelay, Remaining: 1, Delay: 1500 * time.Millisecond, Probability: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(control.NewFaultResponse(tt.stored))
			if err != nil {
				t.Fatal(err)
			}
			if got := string(b); got != tt.wire {
				t.Errorf("wire %s, want %s", got, tt.wire)
			}
			var r control.FaultResponse
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatal(err)
			}
			got, err := r.Fault()
			if err != nil || got != tt.readsBack {
				t.Errorf("Fault() = %+v, %v; want %+v", got, err, tt.readsBack)
			}
		})
	}
	if _, err := (control.FaultResponse{ID: "flt_4", Kind: simulator.FaultDelay, Delay: "soon"}).Fault(); err == nil {
		t.Error("a delay that is no Go duration was read")
	}
}

// A server with no BuildInfo (a bare partnerapi.API) answers the limits
// only; a simulator with a campaigns file names no seed.
func TestConfigResponseOmits(t *testing.T) {
	tests := []struct {
		name string
		cfg  control.ConfigResponse
		want string
	}{
		{"no build info", control.ConfigResponse{RateLimit: 100, RateWindow: "1m0s", MaxBodyBytes: 1, BasePath: "/b"},
			`{"rateLimit":100,"rateWindow":"1m0s","maxBodyBytes":1,"basePath":"/b"}`},
		{"campaigns from a file", control.ConfigResponse{RateLimit: 100, RateWindow: "1m0s", MaxBodyBytes: 1, BasePath: "/b",
			BuildInfo: &control.BuildInfo{Version: "dev", Violations: []string{}, ContactsPerAccount: 0}},
			`{"rateLimit":100,"rateWindow":"1m0s","maxBodyBytes":1,"basePath":"/b","version":"dev","violations":[],"contactsPerAccount":0}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.cfg)
			if err != nil || string(b) != tt.want {
				t.Errorf("wire %s, %v; want %s", b, err, tt.want)
			}
		})
	}
}
