package steps

import "embed"

// Source is the step library's own source (this package and its internal
// packages), embedded so that a certificate can name, by digest, the steps
// that judged the target, and a verifier can compare it with its own.
// Tests are embedded too but left out of the digest.
//
//go:embed *.go internal
var Source embed.FS
