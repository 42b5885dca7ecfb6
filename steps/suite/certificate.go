package suite

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/partner-v3/conformance-kit/features"
	"github.com/partner-v3/conformance-kit/steps/internal/mask"
	"github.com/partner-v3/conformance-kit/steps/result"
)

// CertificateFormat names the layout of certificate.json; a verifier
// refuses another.
const CertificateFormat = "partner-v3-conformance-certificate/1"

// Certificate is what a run proves, in a form a third party can check:
// which suite (by digest) judged which target (by address and certificate
// chain), when, how, and with what outcome.
type Certificate struct {
	Format string `json:"format"`
	Suite  struct {
		Version string `json:"version"`
		// Commit is the commit the suite was built from ("-dirty" for a
		// modified tree), empty when the build did not record it.
		Commit  string  `json:"commit,omitempty"`
		Digests Digests `json:"digests"`
	} `json:"suite"`
	Spec struct {
		Title   string `json:"title"`
		Version string `json:"version"`
	} `json:"spec"`
	Target string `json:"target"`
	// TLS holds each TLS session shape the target showed: version, HTTP
	// protocol, the SHA-256 fingerprints of the certificate chain, and
	// whether the chain was verified.
	TLS           []TLSSession          `json:"tls"`
	Started       time.Time             `json:"started"`
	Ended         time.Time             `json:"ended"`
	Flags         map[string]string     `json:"flags"`
	RateLimit     int                   `json:"rateLimit"`
	RateWindow    string                `json:"rateWindow"`
	Requests      int64                 `json:"requests"`
	Verdict       string                `json:"verdict"`
	Certification bool                  `json:"certification"`
	Caveats       []string              `json:"caveats"`
	Scenarios     []CertificateScenario `json:"scenarios"`
	// ProfileDigest is the SHA-256 of the run's profile.json (the
	// deployment profile learned after the scenarios), empty without one.
	ProfileDigest string `json:"profileDigest,omitempty"`
}

// CertificateScenario is one scenario's line in a certificate.
type CertificateScenario struct {
	Name     string        `json:"name"`
	Feature  string        `json:"feature"`
	Sections []string      `json:"sections"`
	Status   result.Status `json:"status"`
	// FailureSections are the sections a failure counts against.
	FailureSections []string `json:"failureSections,omitempty"`
	Warnings        []string `json:"warnings,omitempty"`
	Requests        int      `json:"requests"`
}

// Certificate returns what the run proves.
func (r *Result) Certificate() *Certificate {
	c := &Certificate{Format: CertificateFormat, Target: r.Target, TLS: r.TLS, Started: r.Started, Ended: r.Ended,
		Flags: r.Flags, RateLimit: r.RateLimit, RateWindow: r.RateWindow, Requests: r.Requests,
		Verdict: r.Verdict, Certification: r.Certification, Caveats: r.Caveats, Scenarios: []CertificateScenario{},
		ProfileDigest: r.ProfileDigest}
	c.Suite.Version, c.Suite.Commit, c.Suite.Digests = r.SuiteVersion, r.SuiteCommit, r.Digests
	c.Spec.Title, c.Spec.Version = r.Spec, r.SpecVersion
	if c.TLS == nil {
		c.TLS = []TLSSession{}
	}
	if c.Flags == nil {
		c.Flags = map[string]string{}
	}
	for _, s := range r.Scenarios {
		cs := CertificateScenario{Name: s.Title(), Feature: s.Feature, Sections: s.Sections, Status: s.Status, Requests: s.Requests}
		if s.Status == result.StatusFailed {
			cs.FailureSections = s.FailureSections()
		}
		for _, w := range s.Warnings {
			cs.Warnings = append(cs.Warnings, result.SectionList(w.Sections)+": "+w.Message)
		}
		c.Scenarios = append(c.Scenarios, cs)
	}
	return c
}

// Signature is an Ed25519 signature of the exact bytes of the
// "certificate" value of certificate.json.
type Signature struct {
	Algorithm string `json:"algorithm"`
	// KeyID is the SHA-256 (hex) of the public key, to tell keys apart.
	KeyID string `json:"keyId"`
	// PublicKey is the raw public key (base64), for information: a verifier
	// trusts the key it is given, never this one.
	PublicKey string `json:"publicKey"`
	Value     string `json:"value"`
}

// envelope is certificate.json: the certificate and, when signed, its
// signature.
type envelope struct {
	Certificate json.RawMessage `json:"certificate"`
	Signature   *Signature      `json:"signature,omitempty"`
}

// WriteCertificate writes c as certificate.json, signed with key when key
// is not nil. The signature covers the exact bytes of the "certificate"
// value as written: a changed byte there fails verification.
func WriteCertificate(w io.Writer, c *Certificate, key ed25519.PrivateKey) error {
	body, err := json.MarshalIndent(c, "  ", "  ")
	if err != nil {
		return fmt.Errorf("encode certificate: %w", err)
	}
	var b bytes.Buffer
	b.WriteString("{\n  \"certificate\": ")
	b.Write(body)
	if key != nil {
		pub := key.Public().(ed25519.PublicKey)
		sig, err := json.MarshalIndent(&Signature{Algorithm: "Ed25519", KeyID: KeyID(pub),
			PublicKey: base64.StdEncoding.EncodeToString(pub), Value: base64.StdEncoding.EncodeToString(ed25519.Sign(key, body))}, "  ", "  ")
		if err != nil {
			return fmt.Errorf("encode signature: %w", err)
		}
		b.WriteString(",\n  \"signature\": ")
		b.Write(sig)
	}
	b.WriteString("\n}\n")
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("write certificate: %w", err)
	}
	return nil
}

// Errors of VerifyCertificate.
var (
	// ErrUnsigned: the certificate carries no signature.
	ErrUnsigned = errors.New("the certificate is not signed")
	// ErrBadSignature: the signature does not match the certificate's bytes
	// and the given key.
	ErrBadSignature = errors.New("the signature does not verify")
	// ErrDigestMismatch: the certificate names other scenarios, another
	// step library or another matrix than the verifying binary's.
	ErrDigestMismatch = errors.New("the suite digests differ from this binary's")
)

// VerifyCertificate checks certificate.json: that it is signed by pub, over
// its exact bytes, and that the scenarios, step library and matrix it
// names by digest are the ones this binary carries. It returns the certificate when
// both hold, and, for a digest mismatch, the certificate with the error.
func VerifyCertificate(data []byte, pub ed25519.PublicKey) (*Certificate, error) {
	var env envelope
	if err := json.Unmarshal(data, &env); err != nil {
		return nil, fmt.Errorf("read certificate: %w", err)
	}
	if len(env.Certificate) == 0 {
		return nil, errors.New("read certificate: no \"certificate\" value")
	}
	if env.Signature == nil {
		return nil, ErrUnsigned
	}
	if env.Signature.Algorithm != "Ed25519" {
		return nil, fmt.Errorf("%w: algorithm %q, want Ed25519", ErrBadSignature, env.Signature.Algorithm)
	}
	sig, err := base64.StdEncoding.DecodeString(env.Signature.Value)
	if err != nil || !ed25519.Verify(pub, env.Certificate, sig) {
		why := "the certificate was changed after signing, or signed with another key"
		if env.Signature.KeyID != KeyID(pub) {
			why = fmt.Sprintf("it was signed by key %s, not by the given key %s", env.Signature.KeyID, KeyID(pub))
		}
		return nil, fmt.Errorf("%w: %s", ErrBadSignature, why)
	}
	var c Certificate
	dec := json.NewDecoder(bytes.NewReader(env.Certificate))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("decode certificate: %w", err)
	}
	if c.Format != CertificateFormat {
		return &c, fmt.Errorf("certificate format %q, want %q", c.Format, CertificateFormat)
	}
	if own := OwnDigests(); c.Suite.Digests != own {
		return &c, fmt.Errorf("%w: the certificate's source %s (scenarios %s, steps %s, matrix %s); this binary's %s (%s, %s, %s)",
			ErrDigestMismatch, short(c.Suite.Digests.Source), short(c.Suite.Digests.Scenarios), short(c.Suite.Digests.Steps), short(c.Suite.Digests.Matrix),
			short(own.Source), short(own.Scenarios), short(own.Steps), short(own.Matrix))
	}
	return &c, nil
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// OwnDigests are the digests of the scenarios, step library and matrix
// built into this binary, and its source digest.
func OwnDigests() Digests { return digestsOf(features.FS) }

// KeyID is the SHA-256 (hex) of a public key.
func KeyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:])
}

// LoadPrivateKey reads an Ed25519 private key from a PEM "PRIVATE KEY"
// (PKCS #8) file, as `openssl genpkey -algorithm ed25519` or
// GenerateKeyFiles writes it.
func LoadPrivateKey(path string) (ed25519.PrivateKey, error) {
	der, err := readPEM(path, "PRIVATE KEY")
	if err != nil {
		return nil, err
	}
	k, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	ek, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("%s: a %T, want an Ed25519 key", path, k)
	}
	return ek, nil
}

// LoadPublicKey reads an Ed25519 public key from a PEM "PUBLIC KEY" (PKIX)
// file, as `openssl pkey -pubout` or GenerateKeyFiles writes it.
func LoadPublicKey(path string) (ed25519.PublicKey, error) {
	der, err := readPEM(path, "PUBLIC KEY")
	if err != nil {
		return nil, err
	}
	k, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	ek, ok := k.(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("%s: a %T, want an Ed25519 key", path, k)
	}
	return ek, nil
}

func readPEM(path, typ string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read key: %w", err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != typ {
		return nil, fmt.Errorf("%s holds no PEM %q block", path, typ)
	}
	return blk.Bytes, nil
}

// GenerateKeyFiles makes a new Ed25519 key pair and writes the private key
// (mode 0600) and the public key as PEM files. It refuses to overwrite.
func GenerateKeyFiles(privatePath, publicPath string) (ed25519.PublicKey, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate key: %w", err)
	}
	pk, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, fmt.Errorf("encode private key: %w", err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, fmt.Errorf("encode public key: %w", err)
	}
	for _, f := range []struct {
		path, typ string
		der       []byte
		mode      os.FileMode
	}{{privatePath, "PRIVATE KEY", pk, 0o600}, {publicPath, "PUBLIC KEY", pubDER, 0o644}} {
		file, err := os.OpenFile(f.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, f.mode)
		if err != nil {
			return nil, fmt.Errorf("write key: %w", err)
		}
		if err := pem.Encode(file, &pem.Block{Type: f.typ, Bytes: f.der}); err != nil {
			file.Close()
			return nil, fmt.Errorf("write key %s: %w", f.path, err)
		}
		if err := file.Close(); err != nil {
			return nil, fmt.Errorf("write key %s: %w", f.path, err)
		}
	}
	return pub, nil
}

// MaskCredential hides a key or account id for a report: its first four
// characters and its length.
func MaskCredential(v string) string { return mask.Credential(v) }

// MaskSecret hides a secret for a report: its length only.
func MaskSecret(v string) string { return mask.Secret(v) }
