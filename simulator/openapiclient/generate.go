// Package openapiclient is a Go client of the partner API generated from
// fixtures/openapi.yaml by oapi-codegen, unedited. It shows that the
// document generates a working client (its test calls the three operations
// of spec §4 on the simulator); a partner may use it, or generate their own
// the same way (docs/openapi.md).
//
// Regenerate with `go generate ./simulator/openapiclient` after changing the
// document; TestGeneratedClientIsCurrent fails when it is stale.
package openapiclient

//go:generate go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2 -config oapi-codegen.yaml ../../fixtures/openapi.yaml
