package controlapi

import (
	"crypto/rand"
	"encoding/binary"
	"sort"
)

// A Print stands for a credential in an Exchange without keeping it: its
// length and a rolling hash of it under a base drawn at random for this
// process. The partner API notes the prints of the credentials a request
// presented as it keeps the exchange (a few multiplications each); the
// bodies are searched for them only when GET /journal/{requestId} reads
// the exchange, so that the request path copies its bodies and does not
// search them (issue 30, docs/performance.md). A print matches every
// occurrence of its credential; another string of the same length matches
// by chance with a probability of about 2⁻⁶⁴, and is then hidden too.
type Print struct {
	n int
	h uint64
	// Shown is what stands for the credential where it is found.
	Shown string
}

// printBase is the hash's base: odd, random per process.
var printBase = func() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24)
	return binary.LittleEndian.Uint64(b[:]) | 1
}()

// PrintOf answers the print of the credential v, shown as shown where it
// is found.
func PrintOf(v, shown string) Print {
	var h uint64
	for i := 0; i < len(v); i++ {
		h = h*printBase + uint64(v[i])
	}
	return Print{n: len(v), h: h, Shown: shown}
}

// MaxPrints is how many prints an Exchange holds.
const MaxPrints = 6

type printMatch struct {
	at, n int
	shown string
}

// hidePrints answers b with every stretch that matches one of prints
// replaced by what stands for it: at a place the longest match wins, and
// matches are taken from the start, none overlapping the one before.
func hidePrints(b []byte, prints []Print) string {
	var matches []printMatch
	for i, p := range prints {
		if p.n == 0 || p.n > len(b) || seenLength(prints[:i], p.n) {
			continue // a length is rolled over once, for all its prints
		}
		var h, top uint64 = 0, 1 // top: printBase^(n-1)
		for j := 0; j < p.n; j++ {
			h = h*printBase + uint64(b[j])
			if j > 0 {
				top *= printBase
			}
		}
		for at := 0; ; at++ {
			for _, q := range prints[i:] {
				if q.n == p.n && q.h == h {
					matches = append(matches, printMatch{at, q.n, q.Shown})
					break
				}
			}
			if at+p.n >= len(b) {
				break
			}
			h = (h-uint64(b[at])*top)*printBase + uint64(b[at+p.n])
		}
	}
	if len(matches) == 0 {
		return string(b)
	}
	sort.Slice(matches, func(i, j int) bool {
		return matches[i].at < matches[j].at || matches[i].at == matches[j].at && matches[i].n > matches[j].n
	})
	out := make([]byte, 0, len(b))
	pos := 0
	for _, m := range matches {
		if m.at < pos {
			continue // inside the one before
		}
		out = append(out, b[pos:m.at]...)
		out = append(out, m.shown...)
		pos = m.at + m.n
	}
	return string(append(out, b[pos:]...))
}

func seenLength(prints []Print, n int) bool {
	for _, p := range prints {
		if p.n == n {
			return true
		}
	}
	return false
}
