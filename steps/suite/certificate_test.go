package suite

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"path/filepath"
	"testing"
	"testing/fstest"
	"time"

	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/result"
)

func testResult() *Result {
	r := &Result{SuiteVersion: "v1.0.0", SpecVersion: spec.Version, Spec: "Partner API", Target: "https://partner.example/v3/partner/webhook",
		Started: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), Ended: time.Date(2026, 11, 22, 10, 2, 0, 0, time.UTC),
		Verdict: VerdictPass, Certification: true, Digests: OwnDigests(), Flags: map[string]string{"api-key": MaskCredential("dev-key-alpha-7f3c2b9e")},
		TLS: []TLSSession{{Version: "TLS 1.3", Protocol: "HTTP/2.0", Chain: []string{"ab12"}, Verified: true}}}
	r.Scenarios = []*result.ScenarioResult{{Name: "A page", Sections: []string{"4.2"}, Status: result.StatusPassed, Requests: 2,
		Warnings: []result.Finding{{Level: result.LevelWarning, Sections: []string{"4.2"}, Message: `the body carries fields the spec does not list: "requestId"`}}}}
	return r
}

func keyPair(t *testing.T) (ed25519.PrivateKey, ed25519.PublicKey) {
	t.Helper()
	dir := t.TempDir()
	priv, pub := filepath.Join(dir, "key.pem"), filepath.Join(dir, "pub.pem")
	if _, err := GenerateKeyFiles(priv, pub); err != nil {
		t.Fatal(err)
	}
	if _, err := GenerateKeyFiles(priv, pub); err == nil {
		t.Fatal("GenerateKeyFiles overwrote an existing key")
	}
	k, err := LoadPrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	p, err := LoadPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return k, p
}

// TestCertificateVerifies checks the whole round trip: a signed certificate
// verifies with its key; any changed byte of the certificate, another key,
// no signature, or other digests than this binary's do not.
func TestCertificateVerifies(t *testing.T) {
	key, pub := keyPair(t)
	_, otherPub := keyPair(t)
	var signed bytes.Buffer
	if err := WriteCertificate(&signed, testResult().Certificate(), key); err != nil {
		t.Fatal(err)
	}
	c, err := VerifyCertificate(signed.Bytes(), pub)
	if err != nil {
		t.Fatalf("a freshly signed certificate does not verify: %v", err)
	}
	if c.Target != "https://partner.example/v3/partner/webhook" || !c.Certification || len(c.Scenarios) != 1 || len(c.Scenarios[0].Warnings) != 1 {
		t.Fatalf("the verified certificate lost content: %+v", c)
	}
	// Flip one byte inside the certificate's value: the target's host.
	tampered := bytes.Replace(signed.Bytes(), []byte("partner.example"), []byte("partnes.example"), 1)
	if _, err := VerifyCertificate(tampered, pub); !errors.Is(err, ErrBadSignature) {
		t.Errorf("a changed byte gave %v, want ErrBadSignature", err)
	}
	if _, err := VerifyCertificate(signed.Bytes(), otherPub); !errors.Is(err, ErrBadSignature) {
		t.Errorf("another key gave %v, want ErrBadSignature", err)
	}
	var unsigned bytes.Buffer
	if err := WriteCertificate(&unsigned, testResult().Certificate(), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := VerifyCertificate(unsigned.Bytes(), pub); !errors.Is(err, ErrUnsigned) {
		t.Errorf("an unsigned certificate gave %v, want ErrUnsigned", err)
	}
	r := testResult()
	r.Digests.Steps = "0000"
	var other bytes.Buffer
	if err := WriteCertificate(&other, r.Certificate(), key); err != nil {
		t.Fatal(err)
	}
	if _, err := VerifyCertificate(other.Bytes(), pub); !errors.Is(err, ErrDigestMismatch) {
		t.Errorf("another step library gave %v, want ErrDigestMismatch", err)
	}
}

// TestDigestsIgnoreTests checks that the digest covers the library's
// source but not its tests, so a verifier built from the same release has
// the same digest whatever tests it carries.
func TestDigestsIgnoreTests(t *testing.T) {
	a, b := OwnDigests(), OwnDigests()
	if a != b || len(a.Steps) != 64 || len(a.Scenarios) != 64 {
		t.Fatalf("digests %+v and %+v", a, b)
	}
	base := fstest.MapFS{"a.go": {Data: []byte("package a")}, "internal/b/b.go": {Data: []byte("package b")}}
	withTest := fstest.MapFS{"a.go": base["a.go"], "internal/b/b.go": base["internal/b/b.go"], "a_test.go": {Data: []byte("package a")}}
	changed := fstest.MapFS{"a.go": {Data: []byte("package a // changed")}, "internal/b/b.go": base["internal/b/b.go"]}
	d := func(f fstest.MapFS) string { s, _ := digestTree(f, "steps/", ".go"); return s }
	if d(base) != d(withTest) {
		t.Error("a test file changed the digest")
	}
	if d(base) == d(changed) {
		t.Error("a changed source file left the digest as it was")
	}
}
