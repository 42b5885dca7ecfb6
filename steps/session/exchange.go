package session

import (
	"net/http"
	"sync/atomic"
	"time"

	"github.com/partner-v3/conformance-kit/steps/answer"
	"github.com/partner-v3/conformance-kit/steps/internal/mask"
	"github.com/partner-v3/conformance-kit/steps/result"
)

// Exchange is one request the suite sent and what came back, kept to check
// and to show on failure. Package answer judges it (x.answer()).
type Exchange struct {
	Method         string
	URL            string
	Header         http.Header // request headers as sent (secrets still in)
	Body           []byte
	Sent           time.Time
	Received       time.Time
	Err            error // transport failure: no answer
	Status         int
	ResponseHeader http.Header
	ResponseBody   []byte
	TLS            bool
	// Budget is the transport's finding of §8 for this request: a 429
	// after a full quiet window.
	Budget string
	// judged is set when a scenario's check failed on the answer: the
	// whole-run observer does not report it again (answer.WithSender).
	judged atomic.Bool
}

// markJudged records that a scenario's check failed on x; x may be nil.
func (x *Exchange) markJudged() {
	if x != nil {
		x.judged.Store(true)
	}
}

// answer is the exchange as package answer's checks read it.
func (x *Exchange) answer() *answer.Answer {
	return &answer.Answer{Method: x.Method, URL: x.URL, Header: x.Header, Body: x.Body, Sent: x.Sent, Received: x.Received,
		Err: x.Err, Status: x.Status, ResponseHeader: x.ResponseHeader, ResponseBody: x.ResponseBody}
}

// JSON decodes the response body: exactly one JSON value, numbers kept as
// json.Number so integers stay exact.
func (x *Exchange) JSON() (any, error) { return answer.DecodeJSON(x.ResponseBody) }

// Object decodes the response body as a JSON object.
func (x *Exchange) Object() (map[string]any, error) { return x.answer().Object() }

// report is the exchange as reports show it, the run's secrets hidden
// wherever they appear (URL, headers, bodies, error); nil for no exchange.
func (x *Exchange) report(sec *mask.Secrets) *result.Exchange {
	if x == nil {
		return nil
	}
	return x.answer().Report(sec)
}

// The checks of package answer, on an exchange.

// OpOf names the spec operation x was sent to; "" for none.
func OpOf(x *Exchange) string { return answer.OperationOf(x.URL) }

// LabelProblem is answer.LabelProblem of x.
func LabelProblem(x *Exchange) string { return answer.LabelProblem(x.answer()) }

// ShapeProblems is answer.ShapeProblems of x.
func ShapeProblems(x *Exchange) ([]string, string) { return answer.ShapeProblems(x.answer()) }

// MessageProblem is answer.MessageProblem of x.
func MessageProblem(x *Exchange, msg string) string { return answer.MessageProblem(x.answer(), msg) }

// ExactBodyProblem is answer.ExactBodyProblem of x.
func ExactBodyProblem(x *Exchange, want any) string { return answer.ExactBodyProblem(x.answer(), want) }

// IsJSON reports whether the answer's body is one JSON value.
func IsJSON(x *Exchange) bool {
	_, err := x.JSON()
	return err == nil
}
