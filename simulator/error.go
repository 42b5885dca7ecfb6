package simulator

import (
	"errors"
	"fmt"

	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// Application error codes. The server maps each to an HTTP status
// (spec §4 and §7 tables); anything that is not an *Error is EINTERNAL.
const (
	EINVALID      = "invalid"      // 400
	EUNAUTHORIZED = "unauthorized" // 401
	EFORBIDDEN    = "forbidden"    // 403
	ENOTFOUND     = "not_found"    // 404
	ENOTALLOWED   = "not_allowed"  // 405
	ETOOLARGE     = "too_large"    // 413
	EUNSUPPORTED  = "unsupported"  // 415
	ERATELIMIT    = "rate_limit"   // 429
	EINTERNAL     = "internal"     // 500
)

// Error is the one application error type. Message is what the client reads;
// for the spec's own errors it is one of the Msg* constants, word for word.
type Error struct {
	Code    string
	Message string
}

// Error implements the error interface.
func (e *Error) Error() string {
	return fmt.Sprintf("simulator error: code=%s message=%s", e.Code, e.Message)
}

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code string, format string, args ...interface{}) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of err when it is (or wraps) an *Error, "" for
// nil, and EINTERNAL for any other error.
func ErrorCode(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the client-facing message of err: the *Error's own
// message, or the spec's §7 "Internal server error" for anything else, so
// internal details never reach a client.
func ErrorMessage(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Message
	}
	return spec.MsgInternal
}
