//go:build race

package main

import "time"

// Under the race detector a request costs several times as much: 20 of
// them in a row must still fit in one rate-limit window (the suite sends up
// to 42 to spend a budget and blames the target when no 429 comes, however
// long they took), and fewer runs share the two cores. See
// alt_norace_test.go.
const (
	altWindow      = 4 * time.Second
	altConcurrency = 6
)

// matrixSample is TestMatrixCellsAreCaught's default: every cell, or under
// the race detector every few (each run costs several times as much; make
// matrix proves every cell without it).
const matrixSample = 5

// altLimit is the limit per altWindow the alternative implementations
// allow and the runner is told: the suite's bursts must fit in a window,
// and a run of about 930 requests takes some ten windows.
const altLimit = 100
