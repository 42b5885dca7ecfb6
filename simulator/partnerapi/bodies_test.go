package partnerapi_test

import (
	"regexp"
	"testing"

	"github.com/partner-v3/conformance-kit/simulator/jsonbody"
	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/simulator/sim"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// TestProfile_PlaysAFrameworksWordsForBodiesNoObject (issue 28): JSON that
// is no object is answered requestBody.notObject's way, a body that ends
// early requestBody.endOfInput's (its offset where it ended), and a body
// with a byte that cannot be there still malformedJSON's.
func TestProfile_PlaysAFrameworksWordsForBodiesNoObject(t *testing.T) {
	p := profile.Default()
	p.RequestBody.MalformedJSON.Value = profile.Outcome{Status: 400, Message: "JSON parse error at offset {offset}: unexpected character '{char}'"}
	p.RequestBody.NotObject.Value = profile.Outcome{Status: 422, Message: "Input should be a valid dictionary"}
	p.RequestBody.EndOfInput.Value = profile.Outcome{Status: 400, Message: "JSON parse error at offset {offset}: unexpected end of input"}
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	h := mustOpenProfile(t, p, sim.Config{})
	for _, c := range []struct {
		path, body string
		status     int
		msg        string
	}{
		{spec.PathCampaignList, `[1, 2]`, 422, "Input should be a valid dictionary"},
		{spec.PathCampaignStats, `null`, 422, "Input should be a valid dictionary"},
		{spec.PathCampaignList, `{"limit": 1,`, 400, "JSON parse error at offset 12: unexpected end of input"},
		{spec.PathCampaignList, ``, 400, "JSON parse error at offset 0: unexpected end of input"},
		{spec.PathCampaignList, `{"limit": 1, "page": x}`, 400, "JSON parse error at offset 21: unexpected character 'x'"},
	} {
		wantError(t, h.probe(probe{path: c.path, body: c.body, as: h.alpha}), c.status, c.msg)
	}
}

// TestProbeBodyErrors: profile.ProbeNotObjectError and
// ProbeEndOfInputError are what the simulator says of those probes
// ({parseError} there, which Compare renders).
func TestProbeBodyErrors(t *testing.T) {
	for body, want := range map[string]string{profile.ProbeNotObject: profile.ProbeNotObjectError, profile.ProbeEndOfInput: profile.ProbeEndOfInputError} {
		_, err := jsonbody.Parse([]byte(body))
		if err == nil || !regexp.MustCompile(`message=`+regexp.QuoteMeta(want)+`$`).MatchString(err.Error()) {
			t.Errorf("%s: error %v, want %q", body, err, want)
		}
	}
}
