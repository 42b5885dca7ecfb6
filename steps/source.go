package steps

import "embed"

// Source is the step library's own source (this package and the packages
// under it that judge with it: answer, internal, result, session),
// embedded so that a certificate can name, by digest, the steps that
// judged the target, and a verifier can compare it with its own. Tests are embedded too but left
// out of the digest.
//
//go:embed *.go answer internal result session
var Source embed.FS
