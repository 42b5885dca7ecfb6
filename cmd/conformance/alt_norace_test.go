//go:build !race

package main

import "time"

// altWindow is the rate-limit window of every alternative run: the runner
// is told 20 requests per altWindow, and its bursts send 20 in a row.
//
// altConcurrency bounds the runs of one table that go on at once. A run
// mostly waits for rate-limit windows, so the runs start on their own
// rather than each taking one of -parallel's slots (GOMAXPROCS, 2 here).
const (
	altWindow      = 2 * time.Second
	altConcurrency = 10
)

// matrixSample is TestMatrixCellsAreCaught's default: every cell, or under
// the race detector every few (each run costs several times as much; make
// matrix proves every cell without it).
const matrixSample = 1

// altLimit is the limit per altWindow the alternative implementations
// allow and the runner is told: the suite's bursts must fit in a window,
// and a run of about 930 requests takes some ten windows.
const altLimit = 100
