package steps

// Connections, framing and concurrency (issue 27). Authentication (§5) is a
// property of each request and each account, never of a connection, so a
// wrong header is refused on a connection that already carried an
// authenticated request of the account (kept alive over HTTP/1.1, or
// HTTP/2), and a right request after a refused one on the same connection
// is served (rule auth-connection). A valid request (§4) is the same
// request however HTTP frames its body (rule framing). And the identifier
// of a created contact (§4.1) is the contact's own however many are created
// at once (rule contact-concurrent).
//
// Each request names its route (steps/internal/wire) and records, through
// net/http/httptrace, the connection that carried it: the client side's
// address (one per connection), whether it was reused and whether it spoke
// HTTP/2. A cell is judged only on the connection it is about; when the
// target closed the connection in between (Connection: close, an idle
// timeout) or does not offer HTTP/2 (the spec does not ask for it), the
// cell is a warning, never a failure. An in-process run has no connections:
// its cells of auth-connection and framing are unverified.

import (
	"context"
	"fmt"
	"net/http"
	"sync"

	"github.com/cucumber/godog"

	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/answer"
	"github.com/partner-v3/conformance-kit/steps/internal/wire"
	"github.com/partner-v3/conformance-kit/steps/matrix"
	"github.com/partner-v3/conformance-kit/steps/result"
	"github.com/partner-v3/conformance-kit/steps/session"
)

func (s *scenario) registerConnections(sc *godog.ScenarioContext) {
	sc.Step(`^each account sends, on a kept-alive HTTP/1\.1 connection and on an HTTP/2 connection that carried its authenticated requests, each operation with each header wrong, then a right request; and each header wrong on a fresh connection$`, s.sendsOnConnections)
	sc.Step(`^every wrong header should be refused as §5 says and every right request served, whatever connection carried it$`, s.everyConnectionAnswer)
	sc.Step(`^each account sends a valid request of every operation framed with Content-Length, chunked, and as HTTP/2 DATA frames with and without a length$`, s.sendsEveryFraming)
	sc.Step(`^every framing should be served alike$`, s.everyFramingServed)
	sc.Step(`^each account calls Add Contact with distinct contacts, all at once$`, s.addsConcurrently)
	sc.Step(`^every one should be 200 with a contactId of its own$`, s.everyConcurrentCreated)
}

// inProcessNoConnections is why a cell that lives in connections is not
// checked in an in-process run.
const inProcessNoConnections = "an in-process run has no connections (the target is an http.Handler): run against the target's address to check it"

// refusalOf is the answer §5 gives a request whose header is wrong.
func refusalOf(header string) (int, string) {
	if header == spec.HeaderAccountID {
		return http.StatusForbidden, spec.MsgUnauthorizedAccount
	}
	return http.StatusUnauthorized, spec.MsgInvalidCredentials
}

// isRefusal reports whether status is one of §5's.
func isRefusal(status int) bool {
	return status == http.StatusUnauthorized || status == http.StatusForbidden
}

// connRun is one account's requests on one reused route (rule
// auth-connection).
type connRun struct {
	s     *scenario
	c     *session.CellCheck
	role  string
	acct  control.Credentials
	route wire.Route
	conn  string // matrix.ConnReusedHTTP1 or matrix.ConnHTTP2
	// served and refused are the connections that carried a served or a
	// refused request of the account.
	served, refused map[string]bool
	// stopped says why the route's remaining cells cannot be checked.
	stopped string
}

// right sends a right request of op; read-only runs create no contact, so
// an Add Contact is then replaced by a Campaign List (a right request all
// the same, which is what the connection needs).
func (r *connRun) right(ctx context.Context, op string) (*session.Exchange, session.ConnSeen, error) {
	if r.s.SkipsWrite(op) {
		op = spec.OpCampaignList
	}
	body, err := r.s.ValidBodyFor(ctx, r.role, op)
	if err != nil {
		return nil, session.ConnSeen{}, err
	}
	x, cs := r.s.SendVia(ctx, r.route, false, session.CredentialHeaders(r.acct), op, body)
	if x.Budget != "" {
		return x, cs, r.s.FailIn([]string{"8"}, x, "%s", x.Budget)
	}
	r.note(x, cs)
	return x, cs, nil
}

// note remembers what the connection carried.
func (r *connRun) note(x *session.Exchange, cs session.ConnSeen) {
	switch {
	case cs.Local == "" || x.Err != nil:
	case x.Status == http.StatusOK:
		r.served[cs.Local] = true
	case isRefusal(x.Status):
		r.refused[cs.Local] = true
	}
}

// wrong sends op with header wrong on the route, on a connection that
// carried a served request of the account: when the target closed the one
// that did, a right request opens another and the wrong one is sent again,
// once. ok is false when the cell could not be sent as it must be.
func (r *connRun) wrong(ctx context.Context, op, header string) (x *session.Exchange, ok bool, err error) {
	body, err := r.s.ValidBodyFor(ctx, r.role, op)
	if err != nil {
		return nil, false, err
	}
	h := session.CredentialHeaders(r.acct)
	v, _, _ := session.CredentialVariant(matrix.CondOtherValue, h.Get(header), "")
	h.Set(header, v)
	for try := 0; try < 2; try++ {
		if try > 0 {
			px, pcs, err := r.right(ctx, op)
			if err != nil {
				return nil, false, err
			}
			if why := session.NoConnection(r.route, px, pcs); why != "" {
				r.stopped = why
				return nil, false, nil
			}
			if px.Err != nil || px.Status != http.StatusOK {
				r.stopped = "the account's own request was not served on it (see the served-after cells)"
				return nil, false, nil
			}
		}
		x, cs := r.s.SendVia(ctx, r.route, false, h, op, body)
		if x.Budget != "" {
			return x, false, r.s.FailIn([]string{"8"}, x, "%s", x.Budget)
		}
		on := r.served[cs.Local]
		r.note(x, cs)
		if on && cs.Reused {
			return x, true, nil
		}
	}
	r.stopped = "the target closed the connection after the account's request was served (Connection: close, or an idle timeout), so no connection carried a wrong header after a served one; the spec does not ask for kept-alive connections"
	return nil, false, nil
}

// sequence sends the account's requests on the route: for each operation
// a right request (after the first, it follows the refusals of the
// operations before on the same connection: the cell "served after a
// refusal" of that operation), then each header wrong; last a right
// request of the first operation, after every refusal.
func (r *connRun) sequence(ctx context.Context) error {
	cell := func(op, cond string) matrix.Cell { return session.CellOf(r.c.Rule.ID, op, r.role, cond) }
	after := func(op string, x *session.Exchange, cs session.ConnSeen) {
		cl := cell(op, matrix.ServedAfterRefusal(r.conn))
		switch {
		case r.s.SkipsWrite(op):
			r.c.Unreachable(cl, "read-only run: no contact is created")
		case !r.refused[cs.Local]:
			r.c.Missing(cl, "the connection that carried it had carried no refusal of the account (the target closed the one that had, or refused nothing)")
		default:
			r.s.CellXs = append(r.s.CellXs, session.CellExchange{Cell: cl, X: x})
		}
	}
	ops := spec.Names()
	for i, op := range ops {
		if r.stopped != "" {
			return nil // the caller sets the cells not reached aside
		}
		x, cs, err := r.right(ctx, op)
		if err != nil {
			return err
		}
		if why := session.NoConnection(r.route, x, cs); why != "" {
			r.stopped = why
			return nil
		}
		if r.route == wire.HTTP2 && cs.Got && !cs.H2 {
			r.stopped = "the target does not offer HTTP/2 (the spec does not ask for it): the request went over HTTP/1.1"
			return nil
		}
		if i > 0 {
			after(op, x, cs)
		}
		for _, h := range spec.Headers() {
			x, ok, err := r.wrong(ctx, op, h)
			if err != nil {
				return err
			}
			if !ok {
				return nil
			}
			r.s.Last = x
			r.s.CellXs = append(r.s.CellXs, session.CellExchange{Cell: cell(op, matrix.WrongOn(h, r.conn)), X: x})
		}
	}
	x, cs, err := r.right(ctx, ops[0])
	if err != nil {
		return err
	}
	after(ops[0], x, cs)
	return nil
}

// sendsOnConnections sends every cell of rule auth-connection.
func (s *scenario) sendsOnConnections(ctx context.Context) error {
	c := s.Cells("auth-connection")
	s.CellXs = s.CellXs[:0]
	s.Pending = c
	byRole := map[string][]matrix.Cell{}
	for _, cell := range c.Rule.Cells() {
		byRole[cell.Account] = append(byRole[cell.Account], cell)
	}
	for _, role := range matrix.BothAccounts {
		acct, ok := s.Account(role)
		if !ok || s.Target.InProcess {
			why := inProcessNoConnections
			if !ok {
				why = "no second account is configured"
			}
			for _, cell := range byRole[role] {
				c.Unreachable(cell, why)
			}
			continue
		}
		for _, rc := range []struct {
			route wire.Route
			conn  string
		}{{wire.HTTP1, matrix.ConnReusedHTTP1}, {wire.HTTP2, matrix.ConnHTTP2}} {
			r := &connRun{s: s, c: c, role: role, acct: acct, route: rc.route, conn: rc.conn, served: map[string]bool{}, refused: map[string]bool{}}
			if err := r.sequence(ctx); err != nil {
				return err
			}
			if r.stopped != "" {
				// The cells of the route the sequence did not reach.
				for _, cell := range byRole[role] {
					if _, conn, _ := connConditionOf(cell.Condition); conn == rc.conn && !s.CellSent(cell) && !c.IsMissing(cell) {
						c.Missing(cell, r.stopped)
					}
				}
			}
		}
		for _, op := range spec.Names() {
			for _, h := range spec.Headers() {
				cl := session.CellOf(c.Rule.ID, op, role, matrix.WrongOn(h, matrix.ConnFresh))
				body, err := s.ValidBodyFor(ctx, role, op)
				if err != nil {
					return err
				}
				hd := session.CredentialHeaders(acct)
				v, _, _ := session.CredentialVariant(matrix.CondOtherValue, hd.Get(h), "")
				hd.Set(h, v)
				x, cs := s.SendVia(ctx, wire.Fresh, false, hd, op, body)
				if x.Budget != "" {
					return s.FailIn([]string{"8"}, x, "%s", x.Budget)
				}
				if why := session.NoConnection(wire.Fresh, x, cs); why != "" {
					c.Missing(cl, why)
					continue
				}
				if cs.Reused {
					c.Missing(cl, "the transport reused a connection for it")
					continue
				}
				s.Last = x
				s.CellXs = append(s.CellXs, session.CellExchange{Cell: cl, X: x})
			}
		}
	}
	return nil
}

// connConditionOf reads an auth-connection condition: the header sent
// wrong ("" for a right request) and the connection.
func connConditionOf(cond string) (header, conn string, ok bool) {
	for _, cn := range append([]string{matrix.ConnFresh}, matrix.ReusedConns...) {
		if cond == matrix.ServedAfterRefusal(cn) {
			return "", cn, true
		}
		for _, h := range spec.Headers() {
			if cond == matrix.WrongOn(h, cn) {
				return h, cn, true
			}
		}
	}
	return "", "", false
}

// everyConnectionAnswer judges the cells of auth-connection: a wrong
// header is refused as §5 says, a right request is served (200 and the
// body of §4.x).
func (s *scenario) everyConnectionAnswer() error {
	return s.EachCell(func(c *session.CellCheck, ce session.CellExchange) {
		x := ce.X
		header, conn, _ := connConditionOf(ce.Cell.Condition)
		if header == "" {
			c.Served(ce, fmt.Sprintf("the account's own credentials, on %s that had carried a refusal (spec §5 judges each request)", conn))
			return
		}
		status, msg := refusalOf(header)
		switch {
		case x.Status != status:
			c.Fail(ce.Cell, x, "status %d, want %d %q: %s was wrong on %s (spec §5 judges each request, not the connection)", x.Status, status, msg, header, conn)
		case !session.IsJSON(x):
			c.Fail(ce.Cell, x, "status %d, but the body is not JSON: every response body is JSON (spec §1 rule 3)", x.Status)
		case session.LabelProblem(x) != "":
			c.Fail(ce.Cell, x, "status %d: %s", x.Status, session.LabelProblem(x))
		case !answer.Mentions(x.ResponseBody, msg):
			c.Fail(ce.Cell, x, "status %d, but the body does not carry the message %q", x.Status, msg)
		}
	})
}

// framingRoute is how a framing of rule framing travels.
func framingRoute(f string) (route wire.Route, chunked bool) {
	switch f {
	case matrix.FrameChunked:
		return wire.HTTP1, true
	case matrix.FrameH2Length:
		return wire.HTTP2, false
	case matrix.FrameH2NoLength:
		return wire.HTTP2, true
	}
	return wire.HTTP1, false
}

// sendsEveryFraming sends every cell of rule framing: a valid request of
// the cell's operation, its body framed the cell's way.
func (s *scenario) sendsEveryFraming(ctx context.Context) error {
	c := s.Cells("framing")
	s.CellXs = s.CellXs[:0]
	s.Pending = c
	noH2 := ""
	for _, cell := range c.Rule.Cells() {
		acct, ok := s.Account(cell.Account)
		route, chunked := framingRoute(cell.Condition)
		switch {
		case !ok:
			c.Unreachable(cell, "no second account is configured")
			continue
		case s.Target.InProcess:
			c.Unreachable(cell, inProcessNoConnections)
			continue
		case s.SkipsWrite(cell.Operation):
			c.Unreachable(cell, "read-only run: no contact is created")
			continue
		case route == wire.HTTP2 && noH2 != "":
			c.Missing(cell, noH2)
			continue
		}
		body, err := s.ValidBodyFor(ctx, cell.Account, cell.Operation)
		if err != nil {
			return err
		}
		if cell.Operation == spec.OpCampaignList {
			// Not the defaults a server may fill in for a body it did not
			// read (limit 10, page 1): pageSize tells.
			body = fmt.Appendf(nil, `{"limit": %d, "page": 1}`, framingLimit)
		}
		x, cs := s.SendVia(ctx, route, chunked, session.CredentialHeaders(acct), cell.Operation, body)
		if x.Budget != "" {
			return s.FailIn([]string{"8"}, x, "%s", x.Budget)
		}
		if route == wire.HTTP2 && cs.Got && !cs.H2 {
			noH2 = "the target does not offer HTTP/2 (the spec does not ask for it): the request went over HTTP/1.1"
			c.Missing(cell, noH2)
			continue
		}
		if why := session.NoConnection(route, x, cs); why != "" {
			c.Missing(cell, why)
			continue
		}
		s.Last = x
		s.CellXs = append(s.CellXs, session.CellExchange{Cell: cell, X: x})
	}
	return nil
}

// framingLimit is the limit of the Campaign List requests of rule framing.
const framingLimit = 2

// everyFramingServed: every framing of a valid request is served: 200 and
// the body of §4.x; a Campaign List page is the one asked for (§4.2:
// pageNo the page number returned, pageSize the page size used), so a
// body read as empty and answered with defaults is told apart.
func (s *scenario) everyFramingServed() error {
	return s.EachCell(func(c *session.CellCheck, ce session.CellExchange) {
		x := ce.X
		if !c.Served(ce, fmt.Sprintf("a valid request (spec §4) whose body HTTP framed another way (%s) was not served", ce.Cell.Condition)) {
			return
		}
		if ce.Cell.Operation != spec.OpCampaignList {
			return
		}
		m, err := x.Object()
		if err != nil {
			return // session.ShapeProblems said so
		}
		no, _ := answer.IntOf(m["pageNo"])
		size, _ := answer.IntOf(m["pageSize"])
		if no != 1 || size != framingLimit {
			c.Fail(ce.Cell, x, "pageNo %d and pageSize %d, want 1 and %d as the request asked (spec §4.2): the body framed this way was not read as sent", no, size, framingLimit)
		}
	})
}

// addsConcurrently sends, for each account, matrix.ConcurrentContacts Add
// Contact calls of distinct contacts at once: over connections of their
// own and HTTP/2 streams (every other one each) where there are
// connections. Each exchange is recorded for both cells of the account.
func (s *scenario) addsConcurrently(ctx context.Context) error {
	c := s.Cells("contact-concurrent")
	s.CellXs = s.CellXs[:0]
	s.Pending = c
	for _, role := range matrix.BothAccounts {
		acct, ok := s.Account(role)
		cells := []matrix.Cell{session.CellOf(c.Rule.ID, spec.OpAddContact, role, matrix.ConcurrentServed), session.CellOf(c.Rule.ID, spec.OpAddContact, role, matrix.ConcurrentDistinct)}
		if !ok || s.Target.ReadOnly {
			why := "no second account is configured"
			if ok {
				why = "read-only run: no contact is created"
			}
			for _, cl := range cells {
				c.Unreachable(cl, why)
			}
			continue
		}
		xs := make([]*session.Exchange, matrix.ConcurrentContacts)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range xs {
			body := fmt.Appendf(nil, `{"email": %q, "firstName": "Concurrent %d"}`, s.NewEmail(), i+1)
			route := wire.Fresh
			if i%2 == 1 {
				route = wire.HTTP2
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				xs[i], _ = s.SendVia(ctx, route, false, session.CredentialHeaders(acct), spec.OpAddContact, body)
			}()
		}
		close(start)
		wg.Wait()
		for _, x := range xs {
			if x.Budget != "" {
				return s.FailIn([]string{"8"}, x, "%s", x.Budget)
			}
			s.Last = x
			for _, cl := range cells {
				s.CellXs = append(s.CellXs, session.CellExchange{Cell: cl, X: x})
			}
		}
	}
	return nil
}

// everyConcurrentCreated judges rule contact-concurrent: every call 200
// with status success (cell "served"), no two contactIds of the account
// equal (cell "a contactId of its own").
func (s *scenario) everyConcurrentCreated() error {
	ids := map[string]bool{}
	return s.EachCell(func(c *session.CellCheck, ce session.CellExchange) {
		x := ce.X
		if ce.Cell.Condition == matrix.ConcurrentServed {
			switch {
			case x.Status != http.StatusOK:
				c.Fail(ce.Cell, x, "status %d, want 200: a valid contact (spec §4.1 \"Success: HTTP 200\"), sent while %d others of the account were in flight", x.Status, matrix.ConcurrentContacts-1)
			default:
				if secs, p := session.ShapeProblems(x); p != "" {
					c.Fail(ce.Cell, x, "%s (spec %s)", p, result.SectionList(secs))
				}
			}
			return
		}
		if x.Status != http.StatusOK {
			return // the served cell says so
		}
		m, err := x.Object()
		if err != nil {
			return
		}
		id, ok := m["contactId"].(string)
		if !ok || id == "" {
			return // the served cell's shape check says so
		}
		key := ce.Cell.Account + "\x00" + id
		if ids[key] {
			c.Fail(ce.Cell, x, "contactId %q was answered for another of the contacts created at the same time: each created contact gets its own identifier (spec §4.1 \"identifier of the created contact\")", id)
		}
		ids[key] = true
	})
}
