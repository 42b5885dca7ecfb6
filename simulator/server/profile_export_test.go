package server

// Hooks for the external tests of the profile's choices (profile_test.go).

// CheckBody is checkBody, for a test that plays an invalid body before
// play-http's bodyError is merged in.
var CheckBody = &checkBody

// LatencyDraw is latencyDraw, for the statistical test of the draw.
var LatencyDraw = latencyDraw
