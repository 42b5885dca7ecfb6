package server

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"weak"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/profile"
)

// play is one profile's choices of the sections Errors, Auth, Contact,
// List, Stats and HTTP (issue 20), resolved once per profile: Unknown
// choices take the default profile's (Choice.Or), and every choice equal to
// the default's is flagged so that today's code answers it. Today's code
// derives its messages for the field and value at hand, which the default
// profile's literal messages describe for the probe only (a choice is data
// read at one place, STYLE §3).
type play struct {
	// errorBodies by status, nil when every status answers {"error": m}.
	errorBodies map[int]profile.ErrorBody

	missingAccount   profile.Outcome
	credentialsFirst bool

	// contactID is nil for today's format (ct_ + 24 hex).
	contactID *profile.IDFormat
	idCounter atomic.Int64

	// dupRule is contact.duplicateEmail and duplicatePhone for the store;
	// dupPlain when both are today's merge (UpsertContact).
	dupRule                  simulator.DuplicateRule
	dupPlain                 bool
	dupEmailOut, dupPhoneOut profile.Outcome

	// validation holds the classes whose outcome differs from the default.
	validation map[string]profile.Outcome

	list        profile.List // resolved values
	listDefault map[string]bool
	// listOutcomes are list's outcome choices by their JSON names, the
	// keys of listDefault (pastLast aside, which is no Outcome).
	listOutcomes map[string]profile.Outcome
	listPlain    bool // every choice of List is the default's

	stats      profile.Stats
	statsPlain map[string]bool

	unknownPath, requestContentType profile.Outcome
	unknownPathDefault, ctDefault   bool
	otherMethod                     profile.MethodOutcome
	otherMethodDefault              bool
	bodyLimit                       profile.BodyLimit
	bodyLimitDefault                bool

	// contentType is nil for application/json; refusalContentType, a
	// 429's (rateLimit.refusalContentType), likewise.
	contentType        []string
	refusalContentType []string
	successFields      map[string][]profile.Field
	gzip               bool
	// http2 is whether TLS offers h2: the server's profile's only (an
	// account's profile cannot change the listener's ALPN).
	http2 bool
}

// pick resolves a choice against the default's and reports whether the
// value played is the default's.
func pick[T any](c, def profile.Choice[T]) (T, bool) {
	v := c.Or(def)
	return v, reflect.DeepEqual(v, def.Value)
}

func newPlay(p *profile.Profile) *play {
	d := defaultProfile
	pl := &play{}
	bodies, _ := pick(p.Errors.Bodies, d.Errors.Bodies)
	pl.errorBodies = map[int]profile.ErrorBody{}
	plain := true
	for k, b := range bodies {
		n, err := strconv.Atoi(k)
		if err != nil {
			continue // Check refuses it
		}
		pl.errorBodies[n] = b
		if b.MessageField != "error" || len(b.Fields) > 0 {
			plain = false
		}
	}
	if plain {
		pl.errorBodies = nil
	}
	pl.missingAccount, _ = pick(p.Auth.MissingAccount, d.Auth.MissingAccount)
	pl.credentialsFirst, _ = pick(p.Auth.CredentialsFirst, d.Auth.CredentialsFirst)
	if id, def := pick(p.Contact.ID, d.Contact.ID); !def {
		pl.contactID = &id
	}
	de, _ := pick(p.Contact.DuplicateEmail, d.Contact.DuplicateEmail)
	dp, _ := pick(p.Contact.DuplicatePhone, d.Contact.DuplicatePhone)
	pl.dupRule.Email, pl.dupEmailOut = duplicateOf(de)
	pl.dupRule.Phone, pl.dupPhoneOut = duplicateOf(dp)
	pl.dupPlain = pl.dupRule == simulator.DuplicateRule{}
	val := p.Contact.Validation.Or(d.Contact.Validation)
	for class, o := range val {
		if !reflect.DeepEqual(o, d.Contact.Validation.Value[class]) {
			if pl.validation == nil {
				pl.validation = map[string]profile.Outcome{}
			}
			pl.validation[class] = o
		}
	}
	pl.listDefault = map[string]bool{}
	pl.listOutcomes = map[string]profile.Outcome{}
	pl.listPlain = true
	for name, c := range map[string]struct {
		dst      *profile.Choice[profile.Outcome]
		src, def profile.Choice[profile.Outcome]
	}{
		"limitAboveMax": {&pl.list.LimitAboveMax, p.List.LimitAboveMax, d.List.LimitAboveMax},
		"limitBelowOne": {&pl.list.LimitBelowOne, p.List.LimitBelowOne, d.List.LimitBelowOne},
		"pageBelowOne":  {&pl.list.PageBelowOne, p.List.PageBelowOne, d.List.PageBelowOne},
		"limitMissing":  {&pl.list.LimitMissing, p.List.LimitMissing, d.List.LimitMissing},
		"pageMissing":   {&pl.list.PageMissing, p.List.PageMissing, d.List.PageMissing},
		"wrongType":     {&pl.list.WrongType, p.List.WrongType, d.List.WrongType},
		"extraField":    {&pl.list.ExtraField, p.List.ExtraField, d.List.ExtraField},
	} {
		v, def := pick(c.src, c.def)
		*c.dst = profile.Choice[profile.Outcome]{Value: v}
		pl.listDefault[name] = def
		pl.listOutcomes[name] = v
		pl.listPlain = pl.listPlain && def
	}
	var def bool
	pl.list.PastLast.Value, def = pick(p.List.PastLast, d.List.PastLast)
	pl.listDefault["pastLast"] = def
	pl.listPlain = pl.listPlain && def
	pl.list.Filtered.Value, def = pick(p.List.Filtered, d.List.Filtered)
	pl.listPlain = pl.listPlain && def
	pl.list.Order.Value, def = pick(p.List.Order, d.List.Order)
	pl.listPlain = pl.listPlain && def

	pl.statsPlain = map[string]bool{}
	pl.stats.Unknown.Value, pl.statsPlain["unknown"] = pick(p.Stats.Unknown, d.Stats.Unknown)
	pl.stats.NumericString.Value, pl.statsPlain["numericString"] = pick(p.Stats.NumericString, d.Stats.NumericString)
	pl.stats.ExtraField.Value, pl.statsPlain["extraField"] = pick(p.Stats.ExtraField, d.Stats.ExtraField)

	pl.unknownPath, pl.unknownPathDefault = pick(p.HTTP.UnknownPath, d.HTTP.UnknownPath)
	pl.otherMethod, pl.otherMethodDefault = pick(p.HTTP.OtherMethod, d.HTTP.OtherMethod)
	pl.requestContentType, pl.ctDefault = pick(p.HTTP.RequestContentType, d.HTTP.RequestContentType)
	pl.bodyLimit, pl.bodyLimitDefault = pick(p.HTTP.BodyLimit, d.HTTP.BodyLimit)
	if ct, def := pick(p.HTTP.ResponseContentType, d.HTTP.ResponseContentType); !def {
		pl.contentType = []string{ct}
	}
	if ct, def := pick(p.Rate.RefusalContentType, d.Rate.RefusalContentType); !def {
		pl.refusalContentType = []string{ct}
	}
	if sf, def := pick(p.HTTP.SuccessFields, d.HTTP.SuccessFields); !def && len(sf) > 0 {
		pl.successFields = sf
	}
	pl.gzip, _ = pick(p.HTTP.Gzip, d.HTTP.Gzip)
	pl.http2, _ = pick(p.HTTP.HTTP2, d.HTTP.HTTP2)
	return pl
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

// errorBody is the shape of status's error body (errors.bodies): the
// status's own, else 400's, else 401's, else {"error"}.
func (pl *play) errorBody(status int) profile.ErrorBody {
	for _, s := range []int{status, http.StatusBadRequest, http.StatusUnauthorized} {
		if b, ok := pl.errorBodies[s]; ok {
			return b
		}
	}
	return profile.ErrorBody{MessageField: "error"}
}

var (
	defaultPlay = newPlay(defaultProfile)
	// plays caches each profile's play by a weak pointer to it: a profile
	// is never edited once served, and an entry goes when its profile is
	// collected (a throwaway account's), so the cache never grows with
	// accounts created and deleted.
	plays sync.Map // weak.Pointer[profile.Profile] → *play
)

// play returns the choices r plays (profileFor), resolved.
func (s *Server) play(r *http.Request) *play { return playOf(s.profileFor(r)) }

// serverPlay is the server's own profile's choices: those decided before
// authentication (unknown path, other method, body limit; spec §5 comes
// after them) never depend on an account.
func (s *Server) serverPlay() *play {
	if s.Profile == nil {
		return defaultPlay
	}
	return playOf(s.Profile)
}

func playOf(p *profile.Profile) *play {
	if p == defaultProfile || p == nil {
		return defaultPlay
	}
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

// outcomeError is a refusal a profile chose: its own status and message.
type outcomeError struct {
	status  int
	message string
}

func (e *outcomeError) Error() string { return e.message }

// refuse is the error of a refused outcome; {field} in its message names
// field.
func refuse(o profile.Outcome, field string) error {
	return &outcomeError{status: o.Status, message: replaceField(o.Message, field)}
}

func replaceField(msg, field string) string {
	return string(bytes.ReplaceAll([]byte(msg), []byte("{field}"), []byte(field)))
}

// errorStatus returns err's status and message: a profile's refusal's own,
// else the code's.
func errorStatus(err error) (int, string) {
	var oe *outcomeError
	if errors.As(err, &oe) {
		return oe.status, oe.message
	}
	return ErrorStatusCode(simulator.ErrorCode(err)), simulator.ErrorMessage(err)
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
func writeProfileError(w http.ResponseWriter, status int, message string, b profile.ErrorBody, contentType []string) {
	buf := getBuffer()
	defer putBuffer(buf)
	dst := (*buf)[:0]
	if nested(b) {
		dst = appendNestedError(dst, message, b, status, w.Header().Get(requestIDHeader))
	} else {
		dst = append(dst, '{')
		name, _ := json.Marshal(b.MessageField)
		msg, _ := json.Marshal(message)
		dst = append(append(append(dst, name...), ':'), msg...)
		dst = appendFields(dst, b.Fields, status, w.Header().Get(requestIDHeader))
		dst = append(dst, '}')
	}
	dst = append(dst, '\n')
	*buf = dst
	writeBodyAs(w, status, dst, contentType)
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
// (contact.contactId), today's when nil.
func (pl *play) newContactID() string {
	f := pl.contactID
	if f == nil {
		return newContactID()
	}
	switch f.Kind {
	case profile.IDUUID:
		return newUUID()
	case profile.IDNumeric:
		// 12 random digits, the first never 0.
		var b [8]byte
		_, _ = rand.Read(b[:])
		v := binary.BigEndian.Uint64(b[:]) % 900000000000
		return strconv.FormatUint(100000000000+v, 10)
	case profile.IDPrefixed:
		digits := max(f.Digits, 1)
		if f.Alphabet == profile.AlphabetDecimal {
			return fmt.Sprintf("%s%0*d", f.Prefix, digits, pl.idCounter.Add(1))
		}
		b := make([]byte, (digits+1)/2)
		_, _ = rand.Read(b)
		return f.Prefix + hex.EncodeToString(b)[:digits]
	}
	return newContactID()
}

// contentTypeOf is the Content-Type header value of the profile's answers.
func (pl *play) contentTypeOf() []string {
	if pl.contentType != nil {
		return pl.contentType
	}
	return jsonContentType
}
