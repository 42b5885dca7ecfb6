package partnerapi

import (
	"context"
	"net/http"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/controlapi"
	"github.com/partner-v3/conformance-kit/simulator/httpjson"
	"github.com/partner-v3/conformance-kit/simulator/jsonbody"
)

// requestState is everything the request path learns of one partner
// request: its record (for the journal, the client report and the
// metrics), the authenticated account and whether the rate limit admitted
// it (then record.Now is its time). record puts it in the request's
// context once; authenticate and limitRate fill it in place. Before issue
// 21 each of them layered a context.WithValue and copied the request
// (Request.WithContext, some 250 bytes each): three copies per request
// where one does.
type requestState struct {
	record   simulator.RequestRecord
	account  *simulator.Account
	admitted bool
	// play is the choices the request plays (API.play), resolved for
	// playAccount: the first call's, until authentication names the
	// account.
	play        *play
	playAccount *simulator.Account
	// rateVals holds the X-RateLimit-Limit and -Remaining values the
	// answer's header slices share (rateHeaders): no allocation of their own.
	rateVals [2]string
	// rated is whether limitRate counted the request (or refused it for
	// the limit): a refusal after authentication it did not count carries
	// rateLimit.headerClasses' refused headers (refusedHeaders).
	rated bool

	// body is the pooled buffer the body was read into (readFields), given
	// back once the request is answered (release); fieldBuf holds the
	// fields read from it.
	body     *[]byte
	fieldBuf [jsonbody.MaxFields]jsonbody.Field
	// bodyCut: readFields stopped before the body's end (too large, too
	// slow, cut off): what body holds is its beginning.
	bodyCut bool

	// exchange is the request's slot in the ring of exchanges kept in
	// full (exchange.go), zero when the simulator keeps none; creds is
	// what it must hide.
	exchange   controlapi.ExchangeRef
	creds      credentials
	answerFull bool

	// record's own: the request's context and answer writer, and what
	// commit needs.
	ctx       stateContext
	rw        statusRecorder
	s         *API
	r         *http.Request
	began     time.Time
	committed bool
}

// stateContext is a request's context carrying its requestState: it
// answers the record's key and simulator.AccountFromContext's, and passes
// every other question (and its deadline and cancellation) to the
// request's own context.
type stateContext struct {
	context.Context
	st *requestState
}

type stateKey struct{}

func (c *stateContext) Value(key any) any {
	if _, ok := key.(stateKey); ok {
		return c.st
	}
	if c.st.account != nil && simulator.IsAccountKey(key) {
		return c.st.account
	}
	return c.Context.Value(key)
}

// stateFrom returns the request's state, or nil for a request served
// outside record (a test calling a handler alone).
func stateFrom(r *http.Request) *requestState {
	st, _ := r.Context().Value(stateKey{}).(*requestState)
	return st
}

// release gives back the body's buffer once the request is answered:
// nothing after reads the fields that alias it.
func (st *requestState) release() {
	if st.body != nil {
		httpjson.PutBuffer(st.body)
		st.body = nil
	}
}
