package partnerapi

import (
	"net/http"
	"strings"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/httpjson"
	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// partnerAPI is the partner listener's router: the three operations of
// spec §4 under BasePath, and /healthz and the OpenAPI document outside it,
// each found by one lookup of the path as sent.
type partnerAPI struct {
	s *API
	// paths holds each path's whole handler, by escaped path: a
	// percent-encoded "/" (campaign%2Flist) or any other escape is none of
	// them.
	paths map[string]http.Handler
}

// Handler returns the partner API, with the layers every partner request
// passes: request id, journal and client report (record), the HTTP guard,
// Wrap, and the recoverer.
func (s *API) Handler() http.Handler {
	s.init()
	p := &partnerAPI{s: s, paths: map[string]http.Handler{"/healthz": http.HandlerFunc(s.handleHealth)}}
	for path, op := range operations {
		p.paths[spec.BasePath+"/"+path] = s.operation(path, func(w http.ResponseWriter, r *http.Request) { op.handle(s, w, r) })
	}
	if s.OpenAPI != nil {
		doc := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.serveDocument(w, r) })
		p.paths[OpenAPIYAMLPath], p.paths[OpenAPIJSONPath] = doc, doc
	}
	h := s.recoverer(p)
	if s.Wrap != nil {
		// A panic in the layer itself is a 500 too.
		h = s.recoverer(s.Wrap(h))
	}
	return httpjson.RequestID(s.record(s.guard(h, s.maxBodyBytes())))
}

// operation is what the partner API does for one of the spec's operations:
// its handler, and the check of its body alone (bodyError), for the
// profiles that put the body before another check.
type operation struct {
	handle func(s *API, w http.ResponseWriter, r *http.Request)
	// body returns the error handle would answer for the body's fields f,
	// or nil.
	body func(s *API, r *http.Request, f fields) error
}

// operations is the partner API's table of the spec's operations
// (spec.Operations), by path: routing and bodyError read it, and init
// refuses a table that misses one, so a new operation is an entry here
// plus its handler (docs/architecture.md).
var operations = map[string]operation{
	spec.PathContactAdd: {(*API).handleContactAdd, func(s *API, r *http.Request, f fields) error {
		now, err := s.requestTime(r)
		if err != nil {
			return nil // the clock's failure is no fault of the body
		}
		_, err = s.play(r).decodeContact(f, now)
		return err
	}},
	spec.PathCampaignList: {(*API).handleCampaignList, func(s *API, r *http.Request, f fields) error {
		_, _, err := s.play(r).decodeCampaignList(f)
		return err
	}},
	spec.PathCampaignStats: {(*API).handleCampaignStats, func(s *API, r *http.Request, f fields) error {
		_, err := s.play(r).statsID(f)
		return err
	}},
}

func init() {
	ops := spec.Operations()
	for _, op := range ops {
		if _, ok := operations[op.Path]; !ok {
			panic("partnerapi: no handler for spec operation " + op.Path)
		}
	}
	if len(operations) != len(ops) {
		panic("partnerapi: the operations table names an operation the spec does not")
	}
}

func (p *partnerAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h, ok := p.paths[r.URL.EscapedPath()]; ok {
		h.ServeHTTP(w, r)
		return
	}
	// The document is also found by its decoded path (/openapi%2Eyaml),
	// as it always was.
	if p.s.serveDocument(w, r) {
		return
	}
	// http.unknownPath (a path under the base path), decided before
	// authentication: the server's own profile's.
	if path := r.URL.EscapedPath(); strings.HasPrefix(path, spec.BasePath+"/") {
		p.s.routingHeaders(w, r) // rateLimit.headerClasses
		p.s.Error(w, r, refuse(p.s.serverPlay().unknownPath, profile.Request{Method: r.Method, Path: httpjson.QuotePath(path)}))
		return
	}
	if isControlPath(r.URL.EscapedPath()) {
		p.s.Error(w, r, p.s.controlCallOnPartnerPort(r.URL.EscapedPath()))
		return
	}
	// Outside the base path: no operation of any profile's.
	p.s.Error(w, r, simulator.Errorf(simulator.ENOTFOUND, "No operation at %s: the operations are POST %s/{%s}",
		httpjson.QuotePath(r.URL.EscapedPath()), spec.BasePath, strings.Join(spec.Paths(), ",")))
}

// operation returns one operation's whole handler: spec §1 rule 4 (POST),
// then §5 authentication (whose 401s countUnauthenticated may count, as
// the profile says), then §8's rate decision and the control API's
// fault together (limitRate), then the body (requireJSON) and h. The chain
// is built once per operation, so a request's route is looked up once.
func (s *API) operation(op string, h http.HandlerFunc) http.Handler {
	chain := s.countUnauthenticated(s.authenticate(s.answers(op, s.limitRate(s.requireJSON(h)))))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			// http.otherMethod, decided before authentication: the
			// server's own profile's.
			o := s.serverPlay().otherMethod
			if o.Allow != "" {
				w.Header().Set("Allow", o.Allow)
			}
			s.routingHeaders(w, r) // rateLimit.headerClasses
			s.Error(w, r, refuse(o.Outcome, profile.Request{Method: r.Method, Operation: op, Path: httpjson.QuotePath(r.URL.EscapedPath())}))
			return
		}
		recordFrom(r).Entry.Operation = op
		chain.ServeHTTP(w, r)
	})
}

// handleHealth answers 200 when the backends are usable and 503 with the
// reason when not.
func (s *API) handleHealth(w http.ResponseWriter, r *http.Request) {
	if s.Health != nil {
		if err := s.Health(r.Context()); err != nil {
			httpjson.Write(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "error": err.Error()})
			return
		}
	}
	httpjson.Write(w, http.StatusOK, map[string]string{"status": "ok"})
}
