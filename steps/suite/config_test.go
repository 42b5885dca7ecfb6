package suite

import (
	"errors"
	"net/http"
	"os"
	"testing"

	"github.com/partner-v3/conformance-kit/features"
	"github.com/partner-v3/conformance-kit/simulator/control"
)

// TestFeaturesFromADirectory checks that a --features directory is read
// like the embedded suite, and that --read-only's tag expression drops the
// @writes scenarios.
func TestFeaturesFromADirectory(t *testing.T) {
	embedded, err := planScenarios(features.FS, "@normative")
	if err != nil {
		t.Fatal(err)
	}
	dir, err := planScenarios(os.DirFS("../../features"), "@normative")
	if err != nil {
		t.Fatal(err)
	}
	if embedded.count == 0 || dir.count != embedded.count {
		t.Fatalf("embedded suite %d normative scenarios, directory %d", embedded.count, dir.count)
	}
	readOnly, err := planScenarios(features.FS, "@normative && ~@writes")
	if err != nil {
		t.Fatal(err)
	}
	if readOnly.count == 0 || readOnly.count >= embedded.count {
		t.Fatalf("read-only selects %d of %d normative scenarios", readOnly.count, embedded.count)
	}
	if _, err := planScenarios(features.FS, "@nothing-has-this"); !errors.Is(err, ErrConfig) {
		t.Fatalf("a tag expression that selects nothing gave %v, want ErrConfig", err)
	}
}

// TestOutlineRowsAreNamedByTheirValues checks that every row of every
// outline gets its values, so that reports tell rows apart.
func TestOutlineRowsAreNamedByTheirValues(t *testing.T) {
	p, err := planScenarios(features.FS, "@normative,@simulator")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, v := range p.examples {
		if v == "case=a limit as a string, field=limit, body={\"limit\": \"10\", \"page\": 1}" {
			found = true
		}
	}
	if !found {
		t.Fatalf("no outline row reads %q among %d rows", "case=a limit as a string, field=limit, body={\"limit\": \"10\", \"page\": 1}", len(p.examples))
	}
}

func TestConfigValidation(t *testing.T) {
	primary := control.Credentials{APIKey: "k1", APISecret: "s1", AccountID: "a1"}
	tests := []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"a URL and a primary account suffice", Config{BaseURL: "https://x.example/v3/partner/webhook", Primary: primary}, true},
		{"plain http is no usage error (spec §1 scenarios fail instead)", Config{BaseURL: "http://x.example/v2", Primary: primary}, true},
		{"a handler stands in for the URL", Config{Handler: http.NotFoundHandler(), Primary: primary}, true},
		{"no target", Config{Primary: primary}, false},
		{"a relative URL", Config{BaseURL: "/v3/partner/webhook", Primary: primary}, false},
		{"a primary account without secret", Config{BaseURL: "https://x.example", Primary: control.Credentials{APIKey: "k", AccountID: "a"}}, false},
		{"half a second account", Config{BaseURL: "https://x.example", Primary: primary, Second: control.Credentials{APIKey: "k2"}}, false},
		{"the primary account twice", Config{BaseURL: "https://x.example", Primary: primary, Second: primary}, false},
		{"a control API without token", Config{BaseURL: "https://x.example", Primary: primary, AdminURL: "https://127.0.0.1:8444"}, false},
		{"throwaway accounts need no credentials", Config{BaseURL: "https://x.example", EphemeralAccounts: true, AdminURL: "https://127.0.0.1:8444", AdminToken: "t"}, true},
		{"throwaway accounts need the control API", Config{BaseURL: "https://x.example", EphemeralAccounts: true}, false},
		{"throwaway accounts exclude given credentials", Config{BaseURL: "https://x.example", EphemeralAccounts: true, Primary: primary, AdminURL: "https://127.0.0.1:8444", AdminToken: "t"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if (err == nil) != tt.ok {
				t.Fatalf("Validate() = %v, want ok=%v", err, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrConfig) {
				t.Fatalf("%v does not wrap ErrConfig", err)
			}
		})
	}
}

func TestReleased(t *testing.T) {
	for v, want := range map[string]bool{
		"v1.2.3":            true,
		"v0.1.0":            true,
		"dev":               false,
		"b61d135":           false,
		"v1.2.3-dirty":      false,
		"v1.2.3-3-gabc1234": false,
		"v1.2.3-rc.1":       false,
		"1.2.3":             false,
		"v1.2.3+build.5":    false,
	} {
		if got := Released(v); got != want {
			t.Errorf("Released(%q) = %v, want %v", v, got, want)
		}
	}
}
