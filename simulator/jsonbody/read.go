package jsonbody

import (
	"errors"
	"io"
	"net/http"
	"os"
	"slices"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/httpjson"
)

// ReadAll appends r's body to b until its end, as io.ReadAll does, first
// growing b to the size the request declares (Content-Length, when the
// body cap would allow it): one read, no growth, for nearly every body.
func ReadAll(b []byte, r *http.Request) ([]byte, error) {
	if n := r.ContentLength; n > 0 && n < 1<<20 && int64(cap(b)) <= n {
		b = slices.Grow(b, int(n)+1) // +1: room to read the end
	}
	for {
		n, err := r.Body.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // let append pick the growth
		}
	}
}

// ReadError turns a failed body read into a client error (413 over the
// cap, 408 not in time, 400 cut short). Its message never carries err's
// text: a net.OpError names the server's own socket addresses.
func ReadError(err error) error {
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return simulator.Errorf(simulator.ETOOLARGE, "Request body exceeds %d bytes", tooLarge.Limit)
	case errors.Is(err, os.ErrDeadlineExceeded) || httpjson.IsTimeout(err):
		// ASSUMPTION (spec §8 shows no timeout): 408, and the connection is
		// not reused (the body's remainder may still be on its way).
		return simulator.Errorf(httpjson.ETimeout, "Request body was not received in time: the whole request must arrive within the server's read timeout")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return simulator.Errorf(simulator.EINVALID, "Request body ended before its declared Content-Length")
	default:
		return simulator.Errorf(simulator.EINVALID, "Request body could not be read")
	}
}
