package main

// conformance verify and conformance keygen: what a certifying body needs
// to check a certificate.json and to sign one.

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/partner-v3/conformance-kit/cmd/internal/flagenv"
	"github.com/partner-v3/conformance-kit/steps/suite"
)

// parseInterspersed parses flags wherever they stand among the arguments
// ("verify certificate.json --public-key k.pem" as well as "verify
// --public-key k.pem certificate.json") and returns the other arguments.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var rest []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return rest, nil
		}
		rest = append(rest, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// verify checks a certificate.json: exit 0 when its signature verifies
// with the given public key and its suite digests are this binary's, 1
// when either does not hold, 2 for a usage error.
func verify(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("conformance verify", flag.ContinueOnError)
	flagenv.Quiet(fs)
	pubFile := fs.String("public-key", "", "Ed25519 public key (PEM) of the signer (required)")
	rest, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		flagenv.WriteHelp(stdout, fs, flagenv.Help{
			Usage: "usage: conformance verify certificate.json --public-key FILE",
			Intro: "Checks the certificate's Ed25519 signature and that its scenarios, step library\n" +
				"and matrix are, by SHA-256, those of this binary, and prints the suite's version,\n" +
				"commit and source digest it records: compare them with the release's (the tagged\n" +
				"build's conformance --version). Its flags have no variables.",
			ExitCodes: []flagenv.ExitCode{
				{Code: exitPass, Meaning: "verified (also --help); the verdict it certifies is printed"},
				{Code: exitFail, Meaning: "not verified: bad signature, or not this suite's scenarios, steps and matrix"},
				{Code: exitUsage, Meaning: "usage error: missing or unreadable certificate or key"},
			},
		})
		return exitPass
	}
	if err == nil && (len(rest) != 1 || *pubFile == "") {
		err = errors.New("want one certificate file and --public-key FILE")
	}
	if err != nil {
		fmt.Fprintf(stderr, "conformance verify: usage error: %v\n", err)
		return exitUsage
	}
	pub, err := suite.LoadPublicKey(*pubFile)
	if err != nil {
		fmt.Fprintf(stderr, "conformance verify: usage error: %v\n", err)
		return exitUsage
	}
	data, err := os.ReadFile(rest[0])
	if err != nil {
		fmt.Fprintf(stderr, "conformance verify: usage error: %v\n", err)
		return exitUsage
	}
	c, err := suite.VerifyCertificate(data, pub)
	if err != nil {
		fmt.Fprintf(stdout, "NOT VERIFIED: %s: %v\n", rest[0], err)
		return exitFail
	}
	what := "PASS, a certification"
	switch {
	case c.Verdict != suite.VerdictPass:
		what = "FAIL: the target does not conform"
	case !c.Certification:
		what = "PASS, but not a certification (see its caveats)"
	}
	built := "commit not recorded"
	if c.Suite.Commit != "" {
		built = "commit " + c.Suite.Commit
	}
	// The source digest and the commit, not the version label, say which
	// suite judged: compare them with the release's (README, "Make a
	// release"): `conformance --version` of the tagged build prints both.
	fmt.Fprintf(stdout, "VERIFIED: %s\n  signed by key %s\n  suite %s (%s), source sha256:%s, the same as this binary's (scenarios %.12s, steps %.12s, matrix %.12s)\n  target %s, %s to %s\n  verdict: %s\n",
		rest[0], suite.KeyID(pub), c.Suite.Version, built, c.Suite.Digests.Source, c.Suite.Digests.Scenarios, c.Suite.Digests.Steps, c.Suite.Digests.Matrix,
		c.Target, c.Started.Format("2006-01-02 15:04:05Z"), c.Ended.Format("15:04:05Z"), what)
	for _, cv := range c.Caveats {
		fmt.Fprintf(stdout, "  - %s\n", cv)
	}
	return exitPass
}

// keygen writes a new Ed25519 key pair for --sign-key and verify.
func keygen(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("conformance keygen", flag.ContinueOnError)
	flagenv.Quiet(fs)
	priv := fs.String("private", "conformance-signing-key.pem", "where to write the private key (mode 0600; never overwritten)")
	pub := fs.String("public", "conformance-signing-key.pub.pem", "where to write the public key")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			flagenv.WriteHelp(stdout, fs, flagenv.Help{
				Usage: "usage: conformance keygen [--private FILE] [--public FILE]",
				Intro: "Writes a new Ed25519 key pair: the private key for --sign-key, the public one\n" +
					"for verify --public-key. Its flags have no variables.",
				ExitCodes: []flagenv.ExitCode{
					{Code: exitPass, Meaning: "both keys written (also --help)"},
					{Code: exitUsage, Meaning: "usage error, or a key file exists already or cannot be written"},
				},
			})
			return exitPass
		}
		fmt.Fprintf(stderr, "conformance keygen: usage error: %v\n", err)
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "conformance keygen: usage error: unexpected arguments %v\n", fs.Args())
		return exitUsage
	}
	key, err := suite.GenerateKeyFiles(*priv, *pub)
	if err != nil {
		fmt.Fprintf(stderr, "conformance keygen: %v\n", err)
		return exitUsage
	}
	fmt.Fprintf(stdout, "private key: %s (keep it secret: --sign-key)\npublic key:  %s (give it to whoever verifies: verify --public-key)\nkey id:      %s\n", *priv, *pub, suite.KeyID(key))
	return exitPass
}
