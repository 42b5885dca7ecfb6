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
