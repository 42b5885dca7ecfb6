package server

import (
	"net/http"

	"github.com/partner-v3/conformance-kit/simulator/httpjson"
)

// The pieces the partner API shares with the control API and the edge
// live in package httpjson; these names keep the partner API's files as
// they were (issue 31, step 1: the partner API moves to a package of its
// own next, which may call httpjson by name instead).

// ErrorResponse is every error body (httpjson.ErrorResponse).
type ErrorResponse = httpjson.ErrorResponse

// ErrorStatusCode returns the HTTP status for an application error code
// (httpjson.StatusCode).
func ErrorStatusCode(code string) int { return httpjson.StatusCode(code) }

// Codes of the HTTP layer (httpjson).
const (
	eTimeout        = httpjson.ETimeout
	eExpectation    = httpjson.EExpectation
	eHeaderTooLarge = httpjson.EHeaderTooLarge
)

const requestIDHeader = httpjson.RequestIDHeader

var jsonContentType = httpjson.ContentType

func writeJSON(w http.ResponseWriter, status int, v any) { httpjson.Write(w, status, v) }

func writeBody(w http.ResponseWriter, status int, body []byte) { httpjson.WriteBody(w, status, body) }

func writeBodyAs(w http.ResponseWriter, status int, body []byte, contentType []string) {
	httpjson.WriteBodyAs(w, status, body, contentType)
}

func getBuffer() *[]byte  { return httpjson.GetBuffer() }
func putBuffer(b *[]byte) { httpjson.PutBuffer(b) }

func withRequestID(next http.Handler) http.Handler { return httpjson.RequestID(next) }

// recoverer turns a panic into a 500 answered by Error
// (httpjson.Recoverer).
func (s *Server) recoverer(next http.Handler) http.Handler { return httpjson.Recoverer(next, s.Error) }

func isTimeout(err error) bool      { return httpjson.IsTimeout(err) }
func quoteField(name string) string { return httpjson.QuoteField(name) }
func shorten(s string) string       { return httpjson.Shorten(s) }
func quotePath(p string) string     { return httpjson.QuotePath(p) }
