package controlapi

import (
	"bytes"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/httpjson"
)

// DefaultExchanges is how many partner exchanges the simulator keeps in
// full (headers and bodies) when its configuration names no number: half
// the journal's 1000 entries, some 8 MiB at worst (issue 30).
const DefaultExchanges = 500

// ExchangeBodyBytes caps each body an Exchange keeps: a Campaign List's
// page of 50 is some 20 KB, and its first 8 KiB say what it is.
const ExchangeBodyBytes = 8 << 10

// Exchanges is a ring of the latest partner exchanges in full: the request's
// headers and body and the answer's, beside the journal's entries (which it
// outlives by nothing: it keeps fewer). The partner API fills one slot per
// request in place (Take), its buffers reused from one request to the next,
// so that keeping them costs a copy up to the caps and no allocation once
// the ring has gone round; the control API reads them (Detail).
type Exchanges struct {
	slots []Exchange
	// taken counts the exchanges taken: the next one's slot is
	// taken % len(slots), its generation taken+1 (0 names none).
	taken atomic.Uint64
}

// NewExchanges returns a ring that keeps the latest size exchanges.
func NewExchanges(size int) *Exchanges {
	return &Exchanges{slots: make([]Exchange, max(size, 1))}
}

// Len is how many exchanges the ring keeps.
func (x *Exchanges) Len() int { return len(x.slots) }

// Body states of a request (Exchange.RequestBodyState): what the
// simulator did with it.
const (
	// BodyComplete: read to its end; RequestRead is its size.
	BodyComplete uint8 = iota
	// BodyCut: the simulator stopped reading it (too large, too slow,
	// cut off): RequestRead bytes of it were read.
	BodyCut
	// BodyUnread: the request was answered without its body being read
	// (refused on its line or headers); it is not read for the exchange.
	BodyUnread
)

// Exchange is one slot of the ring, filled in place by the partner API
// while it holds the slot (Take, ExchangeRef.Open; then Unlock). The
// header buffers hold "Name: value\n" lines, masked before they are
// written; the bodies at most ExchangeBodyBytes each, as they were, the
// credentials of Prints hidden from them when they are read.
type Exchange struct {
	mu  sync.Mutex
	gen uint64

	RequestID, Method, Path string
	Status                  int

	RequestHead, RequestBody []byte
	// RequestRead is how many bytes of the request's body the simulator
	// read; RequestLength its Content-Length, -1 unknown.
	RequestRead, RequestLength int64
	RequestBodyState           uint8

	AnswerHead, AnswerBody []byte
	// AnswerBytes is how many bytes of body the answer wrote.
	AnswerBytes int64

	// Prints are the credentials the bodies are searched for when read
	// (Print): the header buffers are written with them hidden already,
	// the bodies are copied as they are.
	Prints  [MaxPrints]Print
	NPrints int
}

// Unlock gives the slot back to the ring's readers.
func (e *Exchange) Unlock() { e.mu.Unlock() }

// ExchangeRef names the exchange a Take filled, to add to it later
// (ExchangeRef.Open) unless the ring has reused its slot meanwhile.
type ExchangeRef struct {
	e   *Exchange
	gen uint64
}

// Take empties the ring's oldest slot for a new exchange and answers it
// locked, with its reference; the caller fills it and calls Unlock.
func (x *Exchanges) Take(requestID, method, path string) (*Exchange, ExchangeRef) {
	gen := x.taken.Add(1)
	e := &x.slots[(gen-1)%uint64(len(x.slots))]
	e.mu.Lock()
	if e.gen > gen {
		// A request a whole ring later took the slot first (the ring is
		// smaller than the requests in flight): it is the one to keep.
		e.mu.Unlock()
		e = &Exchange{}
		e.mu.Lock()
	}
	e.gen = gen
	e.RequestID, e.Method, e.Path, e.Status = requestID, method, path, 0
	e.RequestHead, e.RequestBody = e.RequestHead[:0], e.RequestBody[:0]
	e.RequestRead, e.RequestLength, e.RequestBodyState = 0, -1, BodyComplete
	e.AnswerHead, e.AnswerBody, e.AnswerBytes = e.AnswerHead[:0], e.AnswerBody[:0], 0
	e.NPrints = 0
	return e, ExchangeRef{e: e, gen: gen}
}

// Open answers the exchange ref names, locked, or nil when the ring has
// reused its slot for a later one (or ref names none).
func (ref ExchangeRef) Open() *Exchange {
	if ref.e == nil {
		return nil
	}
	ref.e.mu.Lock()
	if ref.e.gen != ref.gen {
		ref.e.mu.Unlock()
		return nil
	}
	return ref.e
}

// Clear forgets every exchange (POST /reset, DELETE /journal).
func (x *Exchanges) Clear() {
	for i := range x.slots {
		e := &x.slots[i]
		e.mu.Lock()
		e.gen, e.RequestID = 0, ""
		e.RequestHead, e.RequestBody, e.AnswerHead, e.AnswerBody = nil, nil, nil, nil
		e.mu.Unlock()
	}
}

// Detail answers the exchange of requestID, if the ring still keeps it.
func (x *Exchanges) Detail(requestID string) (simulator.JournalDetail, bool) {
	if requestID == "" {
		return simulator.JournalDetail{}, false
	}
	for i := range x.slots {
		e := &x.slots[i]
		e.mu.Lock()
		if e.gen != 0 && e.RequestID == requestID {
			d := e.detail()
			e.mu.Unlock()
			return d, true
		}
		e.mu.Unlock()
	}
	return simulator.JournalDetail{}, false
}

// detail copies the exchange out, e locked.
func (e *Exchange) detail() simulator.JournalDetail {
	d := simulator.JournalDetail{RequestID: e.RequestID,
		Request: simulator.Message{Headers: headerLines(e.RequestHead), Body: hidePrints(e.RequestBody, e.Prints[:e.NPrints])},
		Answer:  simulator.Message{Headers: headerLines(e.AnswerHead), Body: hidePrints(e.AnswerBody, e.Prints[:e.NPrints]), BodyBytes: e.AnswerBytes}}
	kept := int64(len(e.RequestBody))
	req := &d.Request
	switch req.BodyBytes = max(e.RequestRead, e.RequestLength); {
	case e.RequestBodyState == BodyUnread && e.RequestLength > 0:
		req.Note = fmt.Sprintf("not read: the simulator answered before reading it (it refused the request on its line or headers); %d bytes by its Content-Length", e.RequestLength)
	case e.RequestBodyState == BodyUnread:
		req.Note = "not read: the simulator answered before reading it (it refused the request on its line or headers)"
	case e.RequestBodyState == BodyCut:
		req.Note = fmt.Sprintf("cut: the simulator stopped reading the body after %d bytes (it refused the rest: too large, too slow or cut off)", e.RequestRead)
		if e.RequestLength >= 0 {
			req.Note += fmt.Sprintf(" of %d by its Content-Length", e.RequestLength)
		}
		if kept < e.RequestRead {
			req.Note += fmt.Sprintf("; the first %d kept", kept)
		}
	case kept < req.BodyBytes:
		req.Note = fmt.Sprintf("truncated, %d bytes in all: the first %d kept", req.BodyBytes, kept)
	}
	req.Truncated = req.Note != ""
	if ans := &d.Answer; int64(len(e.AnswerBody)) < ans.BodyBytes {
		ans.Truncated = true
		ans.Note = fmt.Sprintf("truncated, %d bytes in all: the first %d kept", ans.BodyBytes, len(e.AnswerBody))
	}
	return d
}

// headerLines parses "Name: value\n" lines into headers in name order
// (the order each name's values came in kept).
func headerLines(b []byte) []simulator.Header {
	out := []simulator.Header{}
	for len(b) > 0 {
		line, rest, _ := bytes.Cut(b, []byte{'\n'})
		b = rest
		name, value, ok := bytes.Cut(line, []byte(": "))
		if !ok {
			continue
		}
		out = append(out, simulator.Header{Name: string(name), Value: string(value)})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// AppendHeaderLine appends one "name: value\n" line to dst, as the
// header buffers of an Exchange hold them. A value's own line breaks
// (net/http refuses them, but a header set in Go could hold one) become
// spaces.
func AppendHeaderLine(dst []byte, name, value string) []byte {
	dst = append(dst, name...)
	dst = append(dst, ": "...)
	start := len(dst)
	dst = append(dst, value...)
	for i := start; i < len(dst); i++ {
		if dst[i] == '\n' || dst[i] == '\r' {
			dst[i] = ' '
		}
	}
	return append(dst, '\n')
}

// handleAdminJournalDetail answers GET /journal/{requestId}: the exchange
// in full while the ring keeps it, with its journal entry while the journal
// does; a 404 that says which of the two let it go, or that the simulator
// keeps no exchange in full.
func (api *API) handleAdminJournalDetail(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("requestId")
	entry, inJournal := api.Journal.Find(id)
	if api.Exchanges == nil {
		api.Error(w, r, simulator.Errorf(simulator.ENOTFOUND,
			"This simulator keeps no request in full (--journal-detail 0): GET /journal lists its requests without headers and bodies"))
		return
	}
	d, ok := api.Exchanges.Detail(id)
	switch {
	case !ok && inJournal:
		api.Error(w, r, simulator.Errorf(simulator.ENOTFOUND,
			"Request %q is no longer kept in full: the simulator keeps the headers and bodies of its latest %d requests only; its journal entry is still in GET /journal",
			httpjson.Shorten(id), api.Exchanges.Len()))
		return
	case !ok:
		api.Error(w, r, simulator.Errorf(simulator.ENOTFOUND,
			"No request %q is kept: the simulator keeps the headers and bodies of its latest %d requests, the journal its latest entries, and neither holds it (never sent, or since reset)",
			httpjson.Shorten(id), api.Exchanges.Len()))
		return
	}
	if inJournal {
		d.Entry = &entry
	}
	httpjson.Write(w, http.StatusOK, &d)
}
