package partnerapi

import (
	"bytes"
	"net/http"
	"strings"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/controlapi"
)

// The exchanges kept in full (issue 30): beside its journal entry, each
// partner request's headers and body and its answer's go into a slot of
// the controlapi.Exchanges ring, copied as the request path already holds
// them (the body it read, the answer as it is written) up to
// controlapi.ExchangeBodyBytes each, into the slot's own reused buffers.
// Credentials are hidden as the journal hides them: the x-api-key masked
// (maskKey, the journal entry's own masked key), the x-api-secret never
// kept; and, wherever else they appear (another header, a body, an answer
// that echoes a field), the key and secret the request presented and those
// of the account it authenticated as or was attributed to. Headers are
// written hidden; bodies are copied as they are and searched when read
// (controlapi.Print), so that the request path does not search 8 KiB of
// answer for each credential: a secret a client wrote into a body sits in
// the ring's memory as sent, and no read of the ring shows it.

// secretShown stands for the x-api-secret's value, and for a secret found
// elsewhere in the exchange.
const secretShown = "******** (never kept)"

// minCredential is the shortest credential searched for outside the
// credential headers: a value of a few letters would hide every word that
// holds them, and is no account's key or secret (spec §5's examples are
// some twenty characters).
const minCredential = 8

// credentials are the strings an exchange must not show and what stands
// for each: a fixed array in the request's state, so that gathering them
// allocates nothing.
type credentials struct {
	value, shown [controlapi.MaxPrints]string
	n            int
}

func (c *credentials) add(value, shown string) {
	if len(value) < minCredential || c.n == len(c.value) {
		return
	}
	for i := range c.n {
		if c.value[i] == value {
			return
		}
	}
	c.value[c.n], c.shown[c.n] = value, shown
	c.n++
}

// first answers the credential that occurs first in s (at its earliest
// start, the longest there) and where, or -1.
func (c *credentials) first(s []byte) (at, which int) {
	at, which = -1, -1
	for i := range c.n {
		if j := bytes.Index(s, []byte(c.value[i])); j >= 0 && (at < 0 || j < at || j == at && len(c.value[i]) > len(c.value[which])) {
			at, which = j, i
		}
	}
	return at, which
}

// appendKept appends to dst at most limit bytes of src, as they are: the
// credentials in them are hidden when the exchange is read (Print). Only a
// credential the cut would split is looked for, in the few bytes about the
// cut, and the kept part ends before it: a part of it would match no print.
func (c *credentials) appendKept(dst, src []byte, limit int) []byte {
	if len(src) <= limit {
		return append(dst, src...)
	}
	kept := limit
	for lo := max(0, limit-64); lo < limit; {
		at, which := c.first(src[lo:min(len(src), limit+64)])
		if at < 0 || lo+at >= limit {
			break
		}
		if lo+at+len(c.value[which]) > limit {
			kept = lo + at // it straddles the cut
			break
		}
		lo += at + len(c.value[which])
	}
	return append(dst, src[:kept]...)
}

// hiddenString is s with every credential replaced: s itself, with no
// allocation, when it holds none.
func (c *credentials) hiddenString(s string) string {
	if len(s) < minCredential {
		return s // no credential fits: most header values
	}
	for i := range c.n {
		if strings.Contains(s, c.value[i]) {
			return string(c.appendHidden(nil, []byte(s)))
		}
	}
	return s
}

// appendHidden appends src to dst with every credential replaced by what
// stands for it: for a header value, on the rare path where one holds a
// credential.
func (c *credentials) appendHidden(dst, src []byte) []byte {
	for len(src) > 0 {
		at, which := c.first(src)
		if at < 0 {
			break
		}
		dst = append(dst, src[:at]...)
		dst = append(dst, c.shown[which]...)
		src = src[at+len(c.value[which]):]
	}
	return append(dst, src...)
}

// gatherCredentials notes what the exchange must hide: the key and secret
// the request presented, and the credentials of the account it
// authenticated as, or of attributed (may be nil).
func (st *requestState) gatherCredentials(attributed *simulator.Account) {
	c := &st.creds
	c.n = 0
	for _, v := range st.r.Header[keyAPISecret] {
		c.add(v, secretShown)
	}
	for i, v := range st.r.Header[keyAPIKey] {
		if i == 0 {
			c.add(v, st.record.Entry.APIKey) // maskKey's, made already
		} else if len(v) >= minCredential {
			c.add(v, maskKey(v))
		}
	}
	for _, a := range [2]*simulator.Account{st.account, attributed} {
		if a != nil {
			c.add(a.APISecret, secretShown)
			if a.APIKey != firstValue(st.r.Header[keyAPIKey]) && len(a.APIKey) >= minCredential {
				c.add(a.APIKey, maskKey(a.APIKey))
			}
		}
	}
}

// takeExchange starts the request's exchange in the ring as it is
// committed (before the answer's header goes out): the request's line and
// headers, its body if the handler read it, and the answer's headers.
func (st *requestState) takeExchange(x *controlapi.Exchanges, attributed *simulator.Account) {
	e := &st.record.Entry
	st.gatherCredentials(attributed)
	ex, ref := x.Take(e.RequestID, e.Method, e.Path)
	st.exchange = ref
	ex.Status = e.Status
	for i := range st.creds.n {
		ex.Prints[i] = controlapi.PrintOf(st.creds.value[i], st.creds.shown[i])
	}
	ex.NPrints = st.creds.n
	r := st.r
	if r.Host != "" {
		ex.RequestHead = controlapi.AppendHeaderLine(ex.RequestHead, "Host", st.creds.hiddenString(r.Host))
	}
	for name, values := range r.Header {
		for i, v := range values {
			switch {
			case name == keyAPISecret:
				v = secretShown
			case name == keyAPIKey && i == 0:
				v = e.APIKey
			case name == keyAPIKey:
				v = maskKey(v)
			default:
				v = st.creds.hiddenString(v)
			}
			ex.RequestHead = controlapi.AppendHeaderLine(ex.RequestHead, name, v)
		}
	}
	ex.RequestLength = r.ContentLength
	if st.body != nil {
		st.keepRequestBody(ex)
	}
	for name, values := range st.rw.Header() {
		for _, v := range values {
			ex.AnswerHead = controlapi.AppendHeaderLine(ex.AnswerHead, name, st.creds.hiddenString(v))
		}
	}
	ex.Unlock()
}

// keepRequestBody copies the body the request path read into ex.
func (st *requestState) keepRequestBody(ex *controlapi.Exchange) {
	body := *st.body
	ex.RequestRead = int64(len(body))
	ex.RequestBody = st.creds.appendKept(ex.RequestBody[:0], body, controlapi.ExchangeBodyBytes)
	if st.bodyCut {
		ex.RequestBodyState = controlapi.BodyCut
	} else {
		ex.RequestBodyState = controlapi.BodyComplete
	}
}

// keepAnswer copies what the answer writes into its exchange, up to the
// cap; the rest is only counted.
func (st *requestState) keepAnswer(b []byte) {
	ex := st.exchange.Open()
	if ex == nil {
		return
	}
	ex.AnswerBytes += int64(len(b))
	if room := controlapi.ExchangeBodyBytes - len(ex.AnswerBody); room > 0 && !st.answerFull {
		ex.AnswerBody = st.creds.appendKept(ex.AnswerBody, b, room)
		// Past the cap (cut short, perhaps, before a credential) nothing
		// more is kept: a later write would leave a gap.
		st.answerFull = len(b) >= room
	}
	ex.Unlock()
}

// finishExchange completes the exchange once the handler is done. A
// request answered before its body was read (a 401, a 429: refused on its
// line or headers) keeps none: the body is not read for the exchange's
// sake, as reading it would hold the answer (written when the handler
// returns) until the client sent it, and cost the refusal path a read.
func (st *requestState) finishExchange() {
	if st.exchange == (controlapi.ExchangeRef{}) || st.body != nil {
		return
	}
	if r := st.r; r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return // no body: nothing missing
	}
	if ex := st.exchange.Open(); ex != nil {
		ex.RequestBodyState = controlapi.BodyUnread
		ex.Unlock()
	}
}
