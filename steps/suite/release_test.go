package suite

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/result"
)

// TestOnlyACleanReleaseBuildCertifies: a version is a label anyone sets
// (VERSION=v9.0.0 make build); a build from a modified tree carries
// "-dirty" in its commit and certifies nothing, whatever its label.
func TestOnlyACleanReleaseBuildCertifies(t *testing.T) {
	const rev = "0123456789abcdef0123456789abcdef01234567"
	tests := []struct {
		name, version, commit string
		caveat                string // "": a certification
	}{
		{"the clean build of a tag", "v1.4.0", rev, ""},
		{"a go install build at the tag, no commit recorded", "v1.4.0", "", ""},
		{"a release label on a modified tree", "v1.4.0", rev + "-dirty", "built from a modified tree (commit " + rev + "-dirty)"},
		{"git describe past a tag", "v1.4.0-3-g0123456", rev, "unreleased suite"},
		{"a label that is no version", "v9", rev, "unreleased suite"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Result{TLS: []TLSSession{{Version: "TLS 1.3", Verified: true}}, ControlAPI: true,
				Scenarios: []*result.ScenarioResult{{Name: "A page", Sections: []string{"4.2"}, Tags: []string{"@normative"}, Status: result.StatusPassed}}}
			r.judge(Config{SuiteVersion: tt.version, SuiteCommit: tt.commit, Tags: DefaultTags}, spec.RateLimit, spec.RateWindow)
			if got, want := r.Certification, tt.caveat == ""; got != want {
				t.Fatalf("Certification=%v, want %v; caveats %q", got, want, r.Caveats)
			}
			if tt.caveat != "" && !slices.ContainsFunc(r.Caveats, func(c string) bool { return strings.Contains(c, tt.caveat) }) {
				t.Fatalf("caveats %q do not say %q", r.Caveats, tt.caveat)
			}
		})
	}
}

// TestCertificateRecordsTheSuitesSource: the certificate names the commit
// and the source digest (scenarios, steps and matrix), and a verifier
// refuses a certificate whose matrix is not its own.
func TestCertificateRecordsTheSuitesSource(t *testing.T) {
	own := OwnDigests()
	for name, d := range map[string]string{"scenarios": own.Scenarios, "steps": own.Steps, "matrix": own.Matrix, "source": own.Source} {
		if len(d) != 64 {
			t.Fatalf("the %s digest %q is no SHA-256", name, d)
		}
	}
	if own.Source != sourceDigest(own.Scenarios, own.Steps, own.Matrix) || own.Source == own.Steps || own.Source == own.Matrix {
		t.Fatalf("the source digest %s is not that of its parts %+v", own.Source, own)
	}
	r := testResult()
	r.SuiteCommit = "0123456789abcdef0123456789abcdef01234567"
	c := r.Certificate()
	if c.Suite.Commit != r.SuiteCommit || c.Suite.Digests.Source != own.Source || c.Suite.Digests.Matrix != own.Matrix {
		t.Fatalf("the certificate's suite %+v does not record the commit and the source", c.Suite)
	}
	key, pub := keyPair(t)
	r.Digests.Matrix = strings.Repeat("0", 64)
	r.Digests.Source = sourceDigest(r.Digests.Scenarios, r.Digests.Steps, r.Digests.Matrix)
	var other bytes.Buffer
	if err := WriteCertificate(&other, r.Certificate(), key); err != nil {
		t.Fatal(err)
	}
	_, err := VerifyCertificate(other.Bytes(), pub)
	if !errors.Is(err, ErrDigestMismatch) || !strings.Contains(err.Error(), "matrix 000000000000") {
		t.Fatalf("another matrix gave %v, want ErrDigestMismatch naming it", err)
	}
}

// TestMarkdownWarningKeepsItsLines: a multi-line warning in summary.md is
// its first line in the list item and the rest as a block under it, line
// for line (issue 27).
func TestMarkdownWarningKeepsItsLines(t *testing.T) {
	r := &Result{Verdict: VerdictPass, Warnings: 1, Scenarios: []*result.ScenarioResult{{Name: "Walk", Sections: []string{"4.2"}, Status: result.StatusPassed,
		Warnings: []result.Finding{{Level: result.LevelWarning, Sections: []string{"2.2"}, Count: 1,
			Message: "2 cells could not be checked:\n  [kind=sms, field=Hardbounce]\n  [kind=email, field=Softbounce]"}}}}}
	var b bytes.Buffer
	if err := r.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	want := "- **WARNING §2.2** 2 cells could not be checked: (Walk; seen 1×)\n\n  ```\n    [kind=sms, field=Hardbounce]\n    [kind=email, field=Softbounce]\n  ```\n"
	if !strings.Contains(b.String(), want) {
		t.Fatalf("summary.md does not keep the warning's lines; want\n%s\nin\n%s", want, b.String())
	}
}
