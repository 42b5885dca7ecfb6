package violation

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// maxPeek is how much of a request body the layer reads to decide; a larger
// body passes through untouched (the server refuses it anyway).
const maxPeek = 1 << 20

// layer is the handler decorator: it lets each switch see a request before
// the server does, and edit the answer before the client gets it.
type layer struct {
	next      http.Handler
	basePath  string
	accounts  simulator.AccountStore
	campaigns simulator.CampaignStore
	before    []func(*exchange) bool
	after     []func(*exchange)
	// roles asks for each request's account role in its note (the
	// matrix's cell switches are scoped by account).
	roles bool
}

// note is what the layer tells the decorated stores and counter about the
// request they serve, through its context.
type note struct {
	op string // the operation, "" for none
	// role is the configured account the request is about, by its place
	// in the accounts file ("primary", "second"), and other the other
	// one's id: for the cell switches (cells.go).
	role, other string
	// remote is the client's address: one per connection (rate-holds'
	// switch counts per connection).
	remote string

	phoneAdded  bool // contact-no-requirement: phoneNo was put in for the server
	dobISO      bool // contact-dob-format: dateOfBirth came as YYYY-MM-DD
	limit51     bool // list-limit-51-served: limit 51 was asked for
	pageAsked   *int // list-page-*-served: the page asked for, served as page 1
	intID       bool // stats-id-string-only: campaignId came as an integer
	charsetless bool // json-request-charset-refused: Content-Type had no charset
}

type noteKey struct{}

// noteFrom returns the layer's note of a request, or an empty one.
func noteFrom(ctx context.Context) *note {
	if n, ok := ctx.Value(noteKey{}).(*note); ok {
		return n
	}
	return &note{}
}

// exchange is one request and its answer as the switches see them.
type exchange struct {
	l    *layer
	r    *http.Request
	note *note

	// req holds the fields of a JSON object request body; nil for any
	// other body.
	req map[string]json.RawMessage

	status int
	header http.Header
	body   []byte
	orig   []byte // the body as the server wrote it

	doc     any // body decoded, when decoded is true
	decoded bool
	dirty   bool // doc changed: body is out of date

	stats *statsFacts
}

func (l *layer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := &note{remote: r.RemoteAddr}
	x := &exchange{l: l, note: n, r: r.WithContext(context.WithValue(r.Context(), noteKey{}, n)),
		header: w.Header().Clone()}
	answered := x.route()
	if l.roles {
		x.noteRoles()
	}
	if !answered {
		x.peek()
		for _, b := range l.before {
			if b(x) {
				answered = true
				break
			}
		}
	}
	if !answered {
		n.op = x.operation()
		buf := &bufferedWriter{header: x.header}
		l.next.ServeHTTP(buf, x.r)
		x.status, x.body = buf.status, buf.body.Bytes()
		if x.status == 0 {
			x.status = http.StatusOK
		}
	}
	x.orig = x.body
	for _, a := range l.after {
		a(x)
	}
	body := x.bytes()
	x.header.Del("Content-Length") // the body may have changed
	for k, vs := range x.header {
		w.Header()[k] = vs
	}
	for k := range w.Header() {
		if _, ok := x.header[k]; !ok {
			delete(w.Header(), k)
		}
	}
	w.WriteHeader(x.status)
	_, _ = w.Write(body)
}

// route serves the operations under the layer's base path instead of the
// spec's (version-path-unversioned), and answers the spec's own paths 404.
func (x *exchange) route() bool {
	base := x.l.basePath
	if base == spec.BasePath {
		return false
	}
	p := x.r.URL.Path
	switch {
	case p == spec.BasePath || strings.HasPrefix(p, spec.BasePath+"/"):
		x.answer(http.StatusNotFound, "Not found")
		return true
	case strings.HasPrefix(p, base+"/"):
		r := x.r.Clone(x.r.Context())
		r.URL.Path = spec.BasePath + strings.TrimPrefix(p, base)
		r.URL.RawPath = ""
		x.r = r
	}
	return false
}

// peek reads a POST body so that switches can look at its fields, and
// hands it on unchanged.
func (x *exchange) peek() {
	r := x.r
	if r.Method != http.MethodPost || r.Body == nil || r.Body == http.NoBody {
		return
	}
	head, err := io.ReadAll(io.LimitReader(r.Body, maxPeek+1))
	rest := r.Body
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), rest), rest}
	if err != nil || len(head) > maxPeek {
		return
	}
	var f map[string]json.RawMessage
	if json.Unmarshal(head, &f) == nil && f != nil {
		x.req = f
	}
}

// setRequest replaces the request body with the fields of x.req.
func (x *exchange) setRequest() {
	b, _ := json.Marshal(x.req)
	r := x.r.Clone(x.r.Context())
	r.Body = io.NopCloser(bytes.NewReader(b))
	r.ContentLength = int64(len(b))
	r.Header.Del("Content-Length")
	x.r = r
}

// setHeader replaces one request header.
func (x *exchange) setHeader(name, value string) {
	r := x.r.Clone(x.r.Context())
	r.Header.Set(name, value)
	x.r = r
}

// operation returns the operation the request's path names, or "".
func (x *exchange) operation() string {
	op, ok := strings.CutPrefix(x.r.URL.Path, spec.BasePath+"/")
	if !ok {
		return ""
	}
	for _, o := range spec.Paths() {
		if o == op {
			return op
		}
	}
	return ""
}

// answer replaces the answer with a JSON error.
func (x *exchange) answer(status int, message string) {
	x.status = status
	x.header.Set("Content-Type", spec.ContentType)
	x.setDoc(map[string]any{"error": message})
}

// json returns the answer's body decoded (numbers as json.Number), or nil
// when it is not one JSON value.
func (x *exchange) json() any {
	if !x.decoded {
		x.decoded = true
		x.doc = decode(x.body)
	}
	return x.doc
}

// decode reads b as one JSON value, numbers as json.Number, or returns nil
// when it is not exactly one.
func decode(b []byte) any {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil
	}
	return v
}

// object returns the answer's body when it is a JSON object.
func (x *exchange) object() map[string]any {
	m, _ := x.json().(map[string]any)
	return m
}

// setDoc replaces the answer's body with v, encoded at the end.
func (x *exchange) setDoc(v any) {
	x.doc, x.decoded, x.dirty = v, true, true
}

// changed marks the decoded body as edited in place.
func (x *exchange) changed() { x.dirty = true }

// bytes returns the answer's body, encoding the edited document.
func (x *exchange) bytes() []byte {
	if x.dirty {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(x.doc)
		x.body, x.dirty = buf.Bytes(), false
	}
	return x.body
}

// setRaw replaces the answer's body with bytes that need not be JSON.
func (x *exchange) setRaw(b []byte) {
	x.body, x.doc, x.decoded, x.dirty = b, nil, false, false
}

// bufferedWriter holds the server's answer so the switches can edit it.
type bufferedWriter struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedWriter) Header() http.Header { return b.header }

func (b *bufferedWriter) WriteHeader(code int) {
	if b.status == 0 {
		b.status = code
	}
}

func (b *bufferedWriter) Write(p []byte) (int, error) {
	b.WriteHeader(http.StatusOK)
	return b.body.Write(p)
}
