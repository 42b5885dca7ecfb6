package partnerapi

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"strconv"
	"strings"

	"github.com/partner-v3/conformance-kit/simulator/httpjson"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// answers plays the profile's choices of how an authenticated request's
// answer is written: http.responseContentType (the exact Content-Type),
// http.successFields (fields added to a 200 of the operation),
// http.recordFields (fields added inside its campaigns and statistics) and
// http.gzip (the answer compressed for a client that accepts gzip). An
// answer none of them changes (default.json's) passes straight through. Answers made before
// authentication (401, 403, unknown path, other method, a declared body
// over the limit) get the Content-Type of the server's profile (Error) but
// are never compressed. http.http2 is not played here: it is the TLS
// listener's ALPN, a server-level choice no account's profile changes.
func (s *API) answers(op string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pl := s.play(r)
		fields, records := pl.successFields[op], pl.recordFields[op]
		zip := pl.gzip && acceptsGzip(r)
		if fields == nil && records == nil && !zip && !pl.rewrite {
			next.ServeHTTP(w, r)
			return
		}
		bw := &bufferedWriter{ResponseWriter: w}
		next.ServeHTTP(bw, r)
		status, body := bw.status, bw.body.Bytes()
		if status == 0 {
			status = http.StatusOK
		}
		if records != nil && status == http.StatusOK {
			body = addRecordFields(body, records, status, w.Header().Get(httpjson.RequestIDHeader), requestBody(r))
		}
		if fields != nil && status == http.StatusOK && bytes.HasSuffix(body, []byte("}\n")) && len(body) > 3 {
			out := append([]byte(nil), body[:len(body)-2]...)
			out = appendAddedFields(out, fields, status, w.Header().Get(httpjson.RequestIDHeader), requestBody(r))
			body = append(out, "}\n"...)
		}
		h := w.Header()
		// An error's Content-Type is its own (errors.bodies, a 429's
		// rateLimit.refusalContentType), set by Error.
		if pl.rewrite && status < 400 && h.Get("Content-Type") == spec.ContentType {
			h["Content-Type"] = pl.contentType
		}
		if zip {
			var z bytes.Buffer
			zw := gzip.NewWriter(&z)
			_, _ = zw.Write(body)
			_ = zw.Close()
			body = z.Bytes()
			h.Set("Content-Encoding", "gzip")
			h.Add("Vary", "Accept-Encoding")
		}
		h.Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(status)
		_, _ = w.Write(body)
	})
}

func acceptsGzip(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept-Encoding") {
		for _, e := range strings.Split(v, ",") {
			name, q, _ := strings.Cut(strings.TrimSpace(e), ";")
			if strings.EqualFold(strings.TrimSpace(name), "gzip") && strings.ReplaceAll(q, " ", "") != "q=0" {
				return true
			}
		}
	}
	return false
}

// bufferedWriter keeps an answer's status and body for answers to rewrite.
type bufferedWriter struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (b *bufferedWriter) WriteHeader(code int) {
	if b.status == 0 {
		b.status = code
	}
}

func (b *bufferedWriter) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}
