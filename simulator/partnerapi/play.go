package partnerapi

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"weak"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/httpjson"
	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// play is one profile's choices, resolved once per profile (playOf):
// every Unknown choice takes default.json's (Choice.Or, in newPlay and
// nowhere else), and each value is held in the form the request path
// reads. The simulator's own choices are default.json's, played by this
// same value (issue 31): no handler asks whether a choice is the
// default's, and a message comes from the choice (profile.Render), never
// from a built-in branch.
type play struct {
	// errorBodies holds errors.bodies by status; errorCT each status's
	// Content-Type (the body's own, else responseContentType's).
	errorBodies map[int]profile.ErrorBody
	errorCT     map[int][]string

	missingAccount profile.Outcome
	// checkOrder is auth.checkOrder, else the order auth.credentialsFirst
	// says (profile.CheckOrderOf).
	checkOrder []string

	// malformedJSON and integralFloat are the requestBody choices.
	malformedJSON, integralFloat profile.Outcome
	// notObject and endOfInput are the requestBody choices of a body
	// that is JSON but no object and of one that ends early (bodies.go).
	notObject, endOfInput profile.Outcome

	contactID profile.IDFormat
	idCounter atomic.Int64

	// dupRule is contact.duplicateEmail and duplicatePhone for the store
	// (its zero value merges both), dupEmailOut and dupPhoneOut their
	// refusals.
	dupRule                  simulator.DuplicateRule
	dupEmailOut, dupPhoneOut profile.Outcome

	// validation is contact.validation's outcome of every class.
	validation map[string]profile.Outcome

	list  profile.List // resolved values
	stats profile.Stats
	// listNull and statsNull are how null reads in an integer field of
	// each operation (profile.NullReading; wrongtype.go).
	listNull, statsNull string

	unknownPath, requestContentType profile.Outcome
	otherMethod                     profile.MethodOutcome
	// bodyLimit is http.bodyLimit, its Refusal never nil (default.json's
	// when the profile's accepted every size); bodyLimitKnown whether the
	// profile itself says it (maxBodyBytes).
	bodyLimit      profile.BodyLimit
	bodyLimitKnown bool

	// contentType is http.responseContentType's header value; rewrite
	// whether a handler's application/json must be replaced by it.
	contentType        []string
	rewrite            bool
	refusalContentType []string
	successFields      map[string][]profile.Field
	// recordFields is http.recordFields: fields added inside the objects
	// of an operation's 200, by operation and object path (records.go).
	recordFields map[string]map[string][]profile.Field
	gzip         bool
	// http2 is whether TLS offers h2: the server's profile's only (an
	// account's profile cannot change the listener's ALPN).
	http2 bool

	// The rateLimit choices (rateHeaders, limitRate, countUnauthenticated).
	ratePolicy            simulator.RatePolicy
	countsBadRequests     bool
	countsUnauthenticated bool
	limitFirst            bool
	retryAfter            profile.RetryAfter
	rateHeaders           profile.RateHeaders
	// rateSend is rateHeaders' OnSuccess and OnRefusal resolved.
	rateSend [2]rateSend
	// classSend is rateLimit.headerClasses resolved: the headers of a
	// 401/403 naming an account, of a refusal after authentication the
	// limit did not count, and of an answer before the credentials to a
	// key naming an account (gateway.go).
	classSend [3]rateSend
	// missingContentType is http.missingContentType (gateway.go).
	missingContentType profile.NoContentType

	// latency is latency.operations, nil when unknown (playLatency).
	latency map[string]profile.OperationLatency
}

// defaultChoices is default.json, read once: the choices every Unknown one
// of a profile takes.
var defaultChoices = profile.Default()

// newPlay resolves p: each Unknown choice is default.json's.
func newPlay(p *profile.Profile) *play {
	d := defaultChoices
	pl := &play{}
	contentType := p.HTTP.ResponseContentType.Or(d.HTTP.ResponseContentType)
	pl.contentType, pl.rewrite = headerValue(contentType), contentType != spec.ContentType
	pl.errorBodies, pl.errorCT = map[int]profile.ErrorBody{}, map[int][]string{}
	bodies := p.Errors.Bodies.Or(d.Errors.Bodies)
	// Bodies all of §7's shape ({"error": message} alone) carry the
	// Content-Type of the answers (http.responseContentType); a shape of
	// the profile's own, its status's.
	spec7 := true
	for _, b := range bodies {
		spec7 = spec7 && b.MessageField == "error" && len(b.Fields) == 0
	}
	for k, b := range bodies {
		n, err := strconv.Atoi(k)
		if err != nil {
			continue // Check refuses it
		}
		pl.errorBodies[n], pl.errorCT[n] = b, pl.contentType
		if b.ContentType != "" && !spec7 {
			pl.errorCT[n] = headerValue(b.ContentType)
		}
	}
	pl.missingAccount = p.Auth.MissingAccount.Or(d.Auth.MissingAccount)
	// A profile written before auth.checkOrder plays the order its
	// credentialsFirst says; default.json holds both, agreeing (Check).
	pl.checkOrder = p.Auth.CheckOrder.Or(profile.Choice[[]string]{Value: profile.CheckOrderOf(p.Auth.CredentialsFirst.Or(d.Auth.CredentialsFirst))})
	pl.malformedJSON = p.RequestBody.MalformedJSON.Or(d.RequestBody.MalformedJSON)
	pl.notObject = p.RequestBody.NotObject.Or(d.RequestBody.NotObject)
	pl.endOfInput = p.RequestBody.EndOfInput.Or(d.RequestBody.EndOfInput)
	pl.integralFloat = p.RequestBody.IntegralFloat.Or(d.RequestBody.IntegralFloat)
	pl.contactID = p.Contact.ID.Or(d.Contact.ID)
	pl.dupRule.Email, pl.dupEmailOut = duplicateOf(p.Contact.DuplicateEmail.Or(d.Contact.DuplicateEmail))
	pl.dupRule.Phone, pl.dupPhoneOut = duplicateOf(p.Contact.DuplicatePhone.Or(d.Contact.DuplicatePhone))
	// Class by class: a class the profile's map leaves out is default.json's.
	pl.validation = maps.Clone(d.Contact.Validation.Value)
	if v := p.Contact.Validation; v.Known() {
		maps.Copy(pl.validation, v.Value)
	}
	for _, c := range []struct {
		dst      *profile.Choice[profile.Outcome]
		src, def profile.Choice[profile.Outcome]
	}{
		{&pl.list.LimitAboveMax, p.List.LimitAboveMax, d.List.LimitAboveMax},
		{&pl.list.LimitBelowOne, p.List.LimitBelowOne, d.List.LimitBelowOne},
		{&pl.list.PageBelowOne, p.List.PageBelowOne, d.List.PageBelowOne},
		{&pl.list.LimitMissing, p.List.LimitMissing, d.List.LimitMissing},
		{&pl.list.PageMissing, p.List.PageMissing, d.List.PageMissing},
		{&pl.list.WrongType, p.List.WrongType, d.List.WrongType},
		{&pl.list.ExtraField, p.List.ExtraField, d.List.ExtraField},
		{&pl.list.NotInteger, p.List.NotInteger, d.List.NotInteger},
		{&pl.list.Null, p.List.Null, d.List.Null},
		{&pl.stats.Unknown, p.Stats.Unknown, d.Stats.Unknown},
		{&pl.stats.NumericString, p.Stats.NumericString, d.Stats.NumericString},
		{&pl.stats.ExtraField, p.Stats.ExtraField, d.Stats.ExtraField},
		{&pl.stats.NotInteger, p.Stats.NotInteger, d.Stats.NotInteger},
		{&pl.stats.Null, p.Stats.Null, d.Stats.Null},
	} {
		*c.dst = profile.Choice[profile.Outcome]{Value: c.src.Or(c.def)}
	}
	pl.resolveNull()
	pl.list.PastLast.Value = p.List.PastLast.Or(d.List.PastLast)
	pl.list.Filtered.Value = p.List.Filtered.Or(d.List.Filtered)
	pl.list.Order.Value = p.List.Order.Or(d.List.Order)

	pl.unknownPath = p.HTTP.UnknownPath.Or(d.HTTP.UnknownPath)
	pl.otherMethod = p.HTTP.OtherMethod.Or(d.HTTP.OtherMethod)
	pl.requestContentType = p.HTTP.RequestContentType.Or(d.HTTP.RequestContentType)
	pl.bodyLimit, pl.bodyLimitKnown = p.HTTP.BodyLimit.Or(d.HTTP.BodyLimit), p.HTTP.BodyLimit.Known()
	if pl.bodyLimit.Refusal == nil {
		// Every size probed was accepted: above the largest, the
		// simulator's own refusal.
		pl.bodyLimit.Refusal = d.HTTP.BodyLimit.Value.Refusal
	}
	pl.refusalContentType = headerValue(p.Rate.RefusalContentType.Or(d.Rate.RefusalContentType))
	if rf := p.HTTP.RecordFields.Or(d.HTTP.RecordFields); len(rf) > 0 {
		pl.recordFields = rf
	}
	if sf := p.HTTP.SuccessFields.Or(d.HTTP.SuccessFields); len(sf) > 0 {
		pl.successFields = sf
	}
	pl.gzip = p.HTTP.Gzip.Or(d.HTTP.Gzip)
	pl.http2 = p.HTTP.HTTP2.Or(d.HTTP.HTTP2)

	pl.ratePolicy = simulator.RatePolicy{
		Window:        p.Rate.Window.Or(d.Rate.Window),
		CountsRefused: p.Rate.CountsRefused.Or(d.Rate.CountsRefused),
	}
	pl.countsBadRequests = p.Rate.CountsBadRequests.Or(d.Rate.CountsBadRequests)
	pl.countsUnauthenticated = p.Rate.CountsUnauthenticated.Or(d.Rate.CountsUnauthenticated)
	pl.limitFirst = p.Rate.LimitFirst.Or(d.Rate.LimitFirst)
	pl.retryAfter = p.Rate.RetryAfter.Or(d.Rate.RetryAfter)
	pl.rateHeaders = p.Rate.Headers.Or(d.Rate.Headers)
	pl.rateSend = [2]rateSend{rateSendOf(pl.rateHeaders.OnSuccess, pl.rateHeaders.Scheme), rateSendOf(pl.rateHeaders.OnRefusal, pl.rateHeaders.Scheme)}
	classes := p.Rate.HeaderClasses.Or(d.Rate.HeaderClasses)
	pl.classSend = [3]rateSend{rateSendOf(classes.Unauthenticated, profile.SchemeNone), rateSendOf(classes.Refused, profile.SchemeNone),
		rateSendOf(classes.Routing, profile.SchemeNone)}
	pl.missingContentType = p.HTTP.MissingContentType.Or(d.HTTP.MissingContentType)
	if ops := p.Latency.Operations; ops.Known() {
		pl.latency = ops.Value
	}
	return pl
}

// noChoices is a profile that knows no choice: the file of one without
// any section (profile.Parse marks each Unknown).
func noChoices() *profile.Profile {
	p, err := profile.Parse([]byte(`{"profileVersion":` + strconv.Itoa(profile.Version) + `}`))
	if err != nil {
		panic(fmt.Sprintf("a profile without choices: %v", err)) // held by the tests
	}
	return p
}

// headerValue is a header's value as the answers set it: application/json
// is the one slice every answer shares (httpjson.ContentType).
func headerValue(v string) []string {
	if v == spec.ContentType {
		return httpjson.ContentType
	}
	return []string{v}
}

// duplicateOf is the store's rule for a profile's duplicate answer, and
// the refusal's outcome.
func duplicateOf(d profile.Duplicate) (simulator.Duplicate, profile.Outcome) {
	switch d.Answer {
	case profile.DuplicateNewID:
		return simulator.DuplicateNew, profile.Outcome{}
	case profile.DuplicateRefused:
		if d.Refusal != nil {
			return simulator.DuplicateRefuse, *d.Refusal
		}
	}
	return simulator.DuplicateMerge, profile.Outcome{}
}

// errorBody is the shape of status's error body (errors.bodies) and its
// Content-Type: the status's own, else 400's, else 401's, else {"error"}.
func (pl *play) errorBody(status int) (profile.ErrorBody, []string) {
	for _, s := range []int{status, http.StatusBadRequest, http.StatusUnauthorized} {
		if b, ok := pl.errorBodies[s]; ok {
			return b, pl.errorCT[s]
		}
	}
	return profile.ErrorBody{MessageField: "error"}, pl.contentType
}

var (
	// ownPlay is the play of a server without a profile: a profile that
	// knows no choice, so that each is default.json's.
	ownPlay = newPlay(noChoices())
	// plays caches each profile's play by a weak pointer to it: a profile
	// is never edited once served, and an entry goes when its profile is
	// collected (a throwaway account's), so the cache never grows with
	// accounts created and deleted.
	plays sync.Map // weak.Pointer[profile.Profile] → *play
)

// play returns the choices r plays (playFor), resolved: once per
// request, kept in its state.
func (s *API) play(r *http.Request) *play {
	st := stateFrom(r)
	if st != nil && st.play != nil && st.playAccount == st.account {
		return st.play
	}
	pl := s.playFor(r)
	if st != nil {
		st.play, st.playAccount = pl, st.account
	}
	return pl
}

// playFor is the play of r's account's profile, else the server's.
func (s *API) playFor(r *http.Request) *play {
	if a := simulator.AccountFromContext(r.Context()); a != nil && a.ProfileDigest != "" {
		return playOf(s.accountProfile(r.Context(), a))
	}
	return s.serverPlay()
}

// serverPlay is the server's own profile's choices: those decided before
// authentication (unknown path, other method, body limit; spec §5 comes
// after them) never depend on an account.
func (s *API) serverPlay() *play {
	if s.Profile == nil {
		return ownPlay // no profile given: default.json, resolved once
	}
	return playOf(s.Profile)
}

// playOf is p's play, resolved once and cached.
func playOf(p *profile.Profile) *play {
	key := weak.Make(p)
	if pl, ok := plays.Load(key); ok {
		return pl.(*play)
	}
	pl, loaded := plays.LoadOrStore(key, newPlay(p))
	if !loaded {
		runtime.AddCleanup(p, func(k weak.Pointer[profile.Profile]) { plays.Delete(k) }, key)
	}
	return pl.(*play)
}

// outcomeError is a refusal a profile chose: its own status and message,
// and the code of its status (statusCode), so that the request path tells
// a client's error from the server's as it does for the code's own errors.
type outcomeError struct {
	status  int
	message string
	code    simulator.Error
	// fields are the fields at fault, for a body listing its problems
	// (profile.Problems).
	fields []string
}

func (e *outcomeError) Error() string { return e.message }
func (e *outcomeError) Unwrap() error { return &e.code }

// refuse is the error of a refused outcome, its message rendered for req
// (profile.Render: {field} names the field at fault).
func refuse(o profile.Outcome, req profile.Request) error {
	e := chosenError(o.Status, profile.Render(o.Message, req))
	e.fields = req.Fields
	return e
}

// chosenError is an answer of status and message not made by a code's
// error (a refusal a profile chose, an injected fault).
func chosenError(status int, message string) *outcomeError {
	return &outcomeError{status: status, message: message, code: simulator.Error{Code: httpjson.Code(status), Message: message}}
}

// fieldRequest is the request parts of a refusal naming fields.
func fieldRequest(fields ...string) profile.Request { return profile.Request{Fields: fields} }

// errorStatus returns err's status and message: a profile's refusal's own,
// else the code's.
func errorStatus(err error) (int, string) {
	var oe *outcomeError
	if errors.As(err, &oe) {
		return oe.status, oe.message
	}
	return httpjson.StatusCode(simulator.ErrorCode(err)), simulator.ErrorMessage(err)
}

// appendFieldValue appends the value of a field a profile adds to a body
// (profile.Field's Format).
func appendFieldValue(dst []byte, f profile.Field, status int, requestID string) []byte {
	switch f.Format {
	case profile.FormatUUID:
		return strconv.AppendQuote(dst, newUUID())
	case profile.FormatDateTime:
		return strconv.AppendQuote(dst, time.Now().UTC().Format(time.RFC3339))
	case profile.FormatStatus:
		return strconv.AppendInt(dst, int64(status), 10)
	case profile.FormatEchoRequestID:
		return strconv.AppendQuote(dst, requestID)
	case profile.FormatID:
		if f.ID != nil { // Check holds it there
			return strconv.AppendQuote(dst, newID(f.ID, &fieldIDs))
		}
	case profile.FormatEcho:
		// Where the request is not at hand (an error body): the value
		// seen, as a constant (records.go echoes it on a 200).
	}
	if len(f.Example) == 0 {
		return append(dst, "null"...)
	}
	return append(dst, f.Example...)
}

// appendFields appends `,"name":value` for each field.
func appendFields(dst []byte, fs []profile.Field, status int, requestID string) []byte {
	for _, f := range fs {
		dst = append(dst, ',')
		name, _ := json.Marshal(f.Name)
		dst = append(append(dst, name...), ':')
		dst = appendFieldValue(dst, f, status, requestID)
	}
	return dst
}

// writeProfileError writes an error body in the profile's shape for its
// status (errors.bodies; §7: "Body shape of the other error statuses: not
// shown"): the message in MessageField, then the other fields.
func writeProfileError(w http.ResponseWriter, status int, message string, b profile.ErrorBody, contentType []string, faulty []string) {
	buf := httpjson.GetBuffer()
	defer httpjson.PutBuffer(buf)
	dst := (*buf)[:0]
	if b.Problems != nil {
		dst = problemsBody(dst, message, b, faulty, status, w.Header().Get(httpjson.RequestIDHeader))
	} else if nested(b) {
		dst = appendNestedError(dst, message, b, status, w.Header().Get(httpjson.RequestIDHeader))
	} else {
		dst = append(dst, '{')
		name, _ := json.Marshal(b.MessageField)
		msg, _ := json.Marshal(message)
		dst = append(append(append(dst, name...), ':'), msg...)
		dst = appendFields(dst, b.Fields, status, w.Header().Get(httpjson.RequestIDHeader))
		dst = append(dst, '}')
	}
	dst = append(dst, '\n')
	*buf = dst
	httpjson.WriteBodyAs(w, status, dst, contentType)
}

// nested reports whether an error body nests fields in objects: its
// message field or a field named by a dotted path ("error.message").
func nested(b profile.ErrorBody) bool {
	if strings.Contains(b.MessageField, ".") {
		return true
	}
	for _, f := range b.Fields {
		if strings.Contains(f.Name, ".") {
			return true
		}
	}
	return false
}

// bodyLeaf is one value of a nested error body: its path and its value.
type bodyLeaf struct {
	path  []string
	value func(dst []byte) []byte
}

// appendNestedError appends an error body whose paths nest (profile.Check
// keeps them one tree): the message first, then the fields, each object
// where its first path puts it.
func appendNestedError(dst []byte, message string, b profile.ErrorBody, status int, requestID string) []byte {
	leaves := []bodyLeaf{{strings.Split(b.MessageField, "."), func(dst []byte) []byte {
		m, _ := json.Marshal(message)
		return append(dst, m...)
	}}}
	for _, f := range b.Fields {
		leaves = append(leaves, bodyLeaf{strings.Split(f.Name, "."), func(dst []byte) []byte {
			return appendFieldValue(dst, f, status, requestID)
		}})
	}
	return appendTree(dst, leaves)
}

// appendTree appends the object the leaves make, keys in the order they
// first appear.
func appendTree(dst []byte, leaves []bodyLeaf) []byte {
	var heads []string
	groups := map[string][]bodyLeaf{}
	for _, l := range leaves {
		if _, ok := groups[l.path[0]]; !ok {
			heads = append(heads, l.path[0])
		}
		groups[l.path[0]] = append(groups[l.path[0]], l)
	}
	dst = append(dst, '{')
	for i, h := range heads {
		if i > 0 {
			dst = append(dst, ',')
		}
		name, _ := json.Marshal(h)
		dst = append(append(dst, name...), ':')
		g := groups[h]
		if len(g) == 1 && len(g[0].path) == 1 {
			dst = g[0].value(dst)
			continue
		}
		sub := make([]bodyLeaf, 0, len(g))
		for _, l := range g {
			if len(l.path) > 1 {
				sub = append(sub, bodyLeaf{l.path[1:], l.value})
			}
		}
		dst = appendTree(dst, sub)
	}
	return append(dst, '}')
}

// partnerRequest reports whether r came through the partner API (its
// record is in the context): the control API's errors are not partner
// answers and keep their shape.
func partnerRequest(r *http.Request) bool {
	return stateFrom(r) != nil
}

// newUUID is a random (version 4) UUID, RFC 9562 §5.4.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// newContactID returns a contact identifier in the profile's format
// (contact.contactId).
func (pl *play) newContactID() string { return newID(&pl.contactID, &pl.idCounter) }

// newID returns a new identifier of format f (a contactId, or an added
// field of format id), counter numbering the decimal ones.
func newID(f *profile.IDFormat, counter *atomic.Int64) string {
	switch f.Kind {
	case profile.IDUUID:
		return newUUID()
	case profile.IDNumeric:
		if f.Digits > 0 && f.Digits != 12 {
			return randomDigits(f.Digits)
		}
		// 12 random digits, the first never 0.
		var b [8]byte
		_, _ = rand.Read(b[:])
		v := binary.BigEndian.Uint64(b[:]) % 900000000000
		return strconv.FormatUint(100000000000+v, 10)
	case profile.IDPrefixed:
		digits := max(f.Digits, 1)
		if f.Alphabet == profile.AlphabetDecimal {
			return fmt.Sprintf("%s%0*d", f.Prefix, digits, counter.Add(1))
		}
		return prefixedHex(f.Prefix, digits)
	}
	return prefixedHex("ct_", 24) // opaque: any string will do
}

// prefixedHex is prefix and digits random hex digits, in one string.
func prefixedHex(prefix string, digits int) string {
	var stack [64]byte
	b := stack[:0]
	if n := len(prefix) + digits + 1; n > len(stack) {
		b = make([]byte, 0, n)
	}
	b = append(b, prefix...)
	var r [32]byte
	for len(b) < len(prefix)+digits {
		n := min((len(prefix)+digits-len(b)+1)/2, len(r))
		_, _ = rand.Read(r[:n])
		b = hex.AppendEncode(b, r[:n])
	}
	return string(b[:len(prefix)+digits])
}

// randomDigits is n random decimal digits, the first never 0 (a numeric
// contactId of the length learned: 8 digits are not 12).
func randomDigits(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = '0' + b[i]%10
	}
	if b[0] == '0' {
		b[0] = '1' + b[0]%9
	}
	return string(b)
}
