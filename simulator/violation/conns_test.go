package violation

import (
	"context"
	"testing"

	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/matrix"
)

// TestConnContext: only a switch that lives in connections ties requests
// to them (the faithful server adds nothing per connection), and each
// connection gets an identity of its own.
func TestConnContext(t *testing.T) {
	conn := matrix.CellSwitch(matrix.Cell{Rule: "auth-connection", Operation: spec.OpCampaignList, Account: matrix.Primary,
		Condition: matrix.WrongOn(spec.HeaderAPIKey, matrix.ConnReusedHTTP1)})
	other := matrix.CellSwitch(matrix.Cell{Rule: "framing", Operation: spec.OpCampaignList, Account: matrix.Primary, Condition: matrix.FrameChunked})
	tests := []struct {
		name     string
		switches []string
		want     bool
	}{
		{"a faithful simulator", nil, false},
		{"a framing switch", []string{other}, false},
		{"an auth-connection switch", []string{conn}, true},
		{"both", []string{other, conn}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse(tt.switches)
			if err != nil {
				t.Fatal(err)
			}
			cc := s.ConnContext()
			if got := cc != nil; got != tt.want {
				t.Fatalf("ConnContext set %v, want %v", got, tt.want)
			}
			if cc == nil {
				return
			}
			a, b := cc(context.Background(), nil), cc(context.Background(), nil)
			ia, _ := a.Value(connKey{}).(*connID)
			ib, _ := b.Value(connKey{}).(*connID)
			if ia == nil || ib == nil || ia == ib {
				t.Errorf("connections %p and %p, want two identities", ia, ib)
			}
		})
	}
}
