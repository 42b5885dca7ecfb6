package partnerapi

// Hooks for the external tests of the profile's choices (profile_test.go).

// LatencyDraw is latencyDraw, for the statistical test of the draw.
var LatencyDraw = latencyDraw
