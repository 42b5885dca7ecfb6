// Package features embeds the Gherkin scenarios of the conformance suite, so
// the runner binary carries them and needs nothing beside it.
package features

import "embed"

// FS holds every .feature file at its root. godog reads it with
// Paths: []string{"."} (godog only looks for a "features" directory inside an
// FS by default).
//
//go:embed *.feature
var FS embed.FS
