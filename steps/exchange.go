package steps

import (
	"net/http"
	"sync/atomic"
	"time"

	"github.com/partner-v3/conformance-kit/steps/answer"
	"github.com/partner-v3/conformance-kit/steps/internal/mask"
	"github.com/partner-v3/conformance-kit/steps/result"
)

// exchange is one request the suite sent and what came back, kept to check
// and to show on failure. Package answer judges it (x.answer()).
type exchange struct {
	method  string
	url     string
	header  http.Header // request headers as sent (secrets still in)
	body    []byte
	sent    time.Time
	recv    time.Time
	err     error // transport failure: no answer
	status  int
	rheader http.Header
	rbody   []byte
	tls     bool
	// budget is the transport's finding of §8 for this request: a 429
	// after a full quiet window.
	budget string
	// judged is set when a scenario's check failed on the answer: the
	// whole-run observer does not report it again (answer.WithSender).
	judged atomic.Bool
}

// markJudged records that a scenario's check failed on x; x may be nil.
func (x *exchange) markJudged() {
	if x != nil {
		x.judged.Store(true)
	}
}

// answer is the exchange as package answer's checks read it.
func (x *exchange) answer() *answer.Answer {
	return &answer.Answer{Method: x.method, URL: x.url, Header: x.header, Body: x.body, Sent: x.sent, Received: x.recv,
		Err: x.err, Status: x.status, ResponseHeader: x.rheader, ResponseBody: x.rbody}
}

// json decodes the response body: exactly one JSON value, numbers kept as
// json.Number so integers stay exact.
func (x *exchange) json() (any, error) { return answer.DecodeJSON(x.rbody) }

// object decodes the response body as a JSON object.
func (x *exchange) object() (map[string]any, error) { return x.answer().Object() }

// report is the exchange as reports show it, the run's secrets hidden
// wherever they appear (URL, headers, bodies, error); nil for no exchange.
func (x *exchange) report(sec *mask.Secrets) *result.Exchange {
	if x == nil {
		return nil
	}
	return x.answer().Report(sec)
}

// The checks of package answer, on an exchange.

// opOf names the spec operation x was sent to; "" for none.
func opOf(x *exchange) string { return answer.OperationOf(x.url) }

// labelProblem is answer.LabelProblem of x.
func labelProblem(x *exchange) string { return answer.LabelProblem(x.answer()) }

// shapeProblems is answer.ShapeProblems of x.
func shapeProblems(x *exchange) ([]string, string) { return answer.ShapeProblems(x.answer()) }

// messageProblem is answer.MessageProblem of x.
func messageProblem(x *exchange, msg string) string { return answer.MessageProblem(x.answer(), msg) }

// exactBodyProblem is answer.ExactBodyProblem of x.
func exactBodyProblem(x *exchange, want any) string { return answer.ExactBodyProblem(x.answer(), want) }
