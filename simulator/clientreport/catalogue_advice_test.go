package clientreport_test

import (
	"testing"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/clientreport"
)

// TestUnknownOperationAdvice: the advice names every operation's path in
// the spec's order, worded as it always was (the client report's golden
// file holds it too).
func TestUnknownOperationAdvice(t *testing.T) {
	const want = "Spec §1 and §9: the operations are POST {base}/contact/add, /campaign/list and /campaign/stats, under the base address ending in /v3/partner/webhook. Build paths from the base address, without a trailing slash or escaped characters."
	if got := clientreport.FindingCatalogue[simulator.FindingUnknownOperation].Advice; got != want {
		t.Errorf("Advice = %q, want %q", got, want)
	}
}
