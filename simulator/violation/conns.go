package violation

// The cell switches of the rules that live in connections, framing and
// concurrency (issue 27): auth-connection (§5 checked per request, never
// per connection), framing (§1, §4: the same request however its body is
// framed) and contact-concurrent (§4.1: each created contact its own
// identifier, however many are created at once).
//
// A switch of auth-connection must know which connection a request came
// on. The server's http.Server.ConnContext (Server.ConnContext, set by the
// composition root from Set.ConnContext) puts a connID of its own in each
// connection's context, and net/http hands that context to every request
// of the connection, HTTP/1 and HTTP/2 alike. Only a Set with such a switch
// on returns a ConnContext: the faithful server adds nothing.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/matrix"
)

// connID is one connection's identity: its address is what the switches
// key their state by.
type connID struct{ n uint64 }

type connKey struct{}

var connSeq atomic.Uint64

// ConnContext returns the http.Server.ConnContext the switches that are on
// need to tie requests to their connections, or nil when none does.
func (s Set) ConnContext() func(context.Context, net.Conn) context.Context {
	for _, c := range s.on {
		if c.breach.conns {
			return func(ctx context.Context, _ net.Conn) context.Context {
				return context.WithValue(ctx, connKey{}, &connID{n: connSeq.Add(1)})
			}
		}
	}
	return nil
}

// conn is the connection the request came on; nil without one (an
// in-process request, or a server without ConnContext).
func (x *exchange) conn() *connID {
	id, _ := x.r.Context().Value(connKey{}).(*connID)
	return id
}

// connSet is a set of connections, safe for concurrent use.
type connSet struct {
	mu sync.Mutex
	m  map[*connID]bool
}

func (s *connSet) add(id *connID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[*connID]bool{}
	}
	s.m[id] = true
}

func (s *connSet) has(id *connID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[id]
}

// connCondition reads a condition of rule auth-connection: the header sent
// wrong ("" for a right request after a refusal) and the connection.
func connCondition(cond string) (header, conn string, ok bool) {
	if conn, ok := strings.CutPrefix(cond, "served after a refusal on "); ok {
		return "", conn, true
	}
	rest, ok := strings.CutPrefix(cond, "wrong ")
	if !ok {
		return "", "", false
	}
	header, conn, ok = strings.Cut(rest, " on ")
	return header, conn, ok
}

// protoOf is the HTTP major version a cell's connection speaks, 0 for any.
func protoOf(conn string) int {
	switch conn {
	case matrix.ConnReusedHTTP1:
		return 1
	case matrix.ConnHTTP2:
		return 2
	}
	return 0
}

// connAuthBreach breaks §5 on one kind of connection, the way a service
// that keeps authentication state per connection does:
//
//   - wrong header on a reused connection: once the connection carried a
//     request of the account that was served, the header is no longer
//     checked on it (an authentication cached per connection);
//   - served after a refusal: once the connection carried a refusal of the
//     account, its right requests are refused too (a connection that was
//     refused once stays refused);
//   - wrong header on a fresh connection: a connection's first request is
//     let through unchecked (the check is set up on the connection after
//     its first request).
//
// Each for the cell's operation and account alone.
func connAuthBreach(c matrix.Cell, op string) (breach, bool) {
	header, conn, ok := connCondition(c.Condition)
	if !ok || (header != "" && !slices.Contains(spec.Headers(), header)) {
		return breach{}, false
	}
	proto := protoOf(conn)
	var served, refused, seen connSet
	mine := func(x *exchange) bool {
		return x.operation() == op && (proto == 0 || x.r.ProtoMajor == proto)
	}
	// wrongHere reports whether the request is the account's with header
	// (only) wrong, and the right value.
	wrongHere := func(x *exchange) (string, bool) {
		a, all := x.ownerBy(header)
		if a == nil || roleOf(a, all) != c.Account {
			return "", false
		}
		right := credentialOf(a, header)
		return right, x.r.Header.Get(header) != right
	}
	b := breach{conns: true, after: func(x *exchange) {
		id := x.conn()
		if id == nil || x.note.role != c.Account {
			return
		}
		switch x.status {
		case http.StatusOK:
			served.add(id)
		case http.StatusUnauthorized, http.StatusForbidden:
			refused.add(id)
		}
	}}
	switch {
	case header == "":
		b.before = func(x *exchange) bool {
			id := x.conn()
			if id == nil || !mine(x) || x.note.role != c.Account || !x.rightCredentials() || !refused.has(id) {
				return false
			}
			x.answer(http.StatusUnauthorized, spec.MsgInvalidCredentials)
			return true
		}
	case conn == matrix.ConnFresh:
		b.before = func(x *exchange) bool {
			id := x.conn()
			if id == nil {
				return false
			}
			first := !seen.has(id)
			seen.add(id)
			if first && mine(x) {
				if right, wrong := wrongHere(x); wrong {
					x.setHeader(header, right)
				}
			}
			return false
		}
	default:
		b.before = func(x *exchange) bool {
			id := x.conn()
			if id == nil || !mine(x) || !served.has(id) {
				return false
			}
			if right, wrong := wrongHere(x); wrong {
				x.setHeader(header, right)
			}
			return false
		}
	}
	return b, true
}

// framingBreach refuses or misreads a body framed the cell's way, for the
// cell's operation and account: a body without a length (chunked over
// HTTP/1.1, DATA frames alone over HTTP/2) is refused with 411, as a
// server that insists on Content-Length does; a body with one is read one
// byte short, as a server that miscounts does (the JSON is then cut).
func framingBreach(c matrix.Cell, op string) (breach, bool) {
	var proto int
	var withLength bool
	switch c.Condition {
	case matrix.FrameLength:
		proto, withLength = 1, true
	case matrix.FrameChunked:
		proto = 1
	case matrix.FrameH2Length:
		proto, withLength = 2, true
	case matrix.FrameH2NoLength:
		proto = 2
	default:
		return breach{}, false
	}
	return breach{before: func(x *exchange) bool {
		r := x.r
		if x.note.role != c.Account || x.operation() != op || r.ProtoMajor != proto || r.Body == nil || r.Body == http.NoBody {
			return false
		}
		if (r.ContentLength >= 0) != withLength {
			return false
		}
		if !withLength {
			x.answer(http.StatusLengthRequired, "Length Required")
			return true
		}
		body, err := io.ReadAll(r.Body)
		if err != nil || len(body) == 0 {
			return false
		}
		short := body[:len(body)-1]
		nr := r.Clone(r.Context())
		nr.Body = io.NopCloser(bytes.NewReader(short))
		nr.ContentLength = int64(len(short))
		nr.Header.Del("Content-Length")
		x.r = nr
		return false
	}}, true
}

// contactGap is how long the broken contact store of contact-concurrent
// holds a write in flight: wide enough for calls sent at once to meet in
// it, too short to notice one at a time.
const contactGap = 100 * time.Millisecond

// concurrentContactBreach breaks §4.1 for the account only under
// concurrency:
//
//   - served: a write that meets another of the account's in flight fails
//     with 500 (a lock tried, not waited for);
//   - a contactId of its own: the identifier generator is read, then
//     written back one higher a moment later, so calls in flight together
//     read the same value and get the same contactId.
func concurrentContactBreach(c matrix.Cell) (breach, bool) {
	mine := func(ctx context.Context) bool {
		n := noteFrom(ctx)
		return n.role == c.Account && n.op == spec.PathContactAdd
	}
	switch c.Condition {
	case matrix.ConcurrentServed:
		var inFlight atomic.Int32
		return breach{contacts: checkContacts(func(ctx context.Context, _ *simulator.Contact) error {
			if !mine(ctx) {
				return nil
			}
			n := inFlight.Add(1)
			defer inFlight.Add(-1)
			time.Sleep(contactGap)
			if n > 1 || inFlight.Load() > 1 {
				return simulator.Errorf(simulator.EINTERNAL, "%s", spec.MsgInternal)
			}
			return nil
		})}, true
	case matrix.ConcurrentDistinct:
		var last atomic.Int64
		return breach{contacts: checkContacts(func(ctx context.Context, ct *simulator.Contact) error {
			if !mine(ctx) {
				return nil
			}
			n := last.Load()
			time.Sleep(contactGap)
			last.Store(n + 1)
			ct.ID = fmt.Sprintf("c-%s-%06d", c.Account, n+1)
			return nil
		})}, true
	}
	return breach{}, false
}
