package violation

// The switches of rule every-answer (steps/matrix every.go): each breaks
// what the spec says of every response on ONE answer of its operation and
// account, an answer the rule's own scenario draws and judges none of (the
// preflight's first read, the second answer, the first refusal): only the
// suite's whole-run observer can catch it. Each is a defect real services
// have: an edge proxy's page or its own 429, a framework's default message,
// one code path that writes a field its own way.

import (
	"encoding/json"
	"net/http"
	"sync"

	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/matrix"
)

// nth counts, per simulator (per layer: every simulator wraps its own), the
// answers a switch picks, so that it breaks only the k-th.
type nth struct {
	mu   sync.Mutex
	seen map[*layer]int
}

// is counts x and reports whether it is the k-th picked.
func (n *nth) is(x *exchange, k int) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.seen == nil {
		n.seen = map[*layer]int{}
	}
	n.seen[x.l]++
	return n.seen[x.l] == k
}

// everyAnswerBreach builds the switch of one cell of rule every-answer.
func everyAnswerBreach(c matrix.Cell) (breach, bool) {
	op := operationPath(c.Operation)
	mine := func(x *exchange) bool { return x.note.role == c.Account && x.operation() == op }
	n := &nth{}
	switch c.Condition {
	case matrix.AnswerJSON:
		// §1 rule 3: the second answer is a proxy's HTML page, whatever
		// its status.
		return breach{after: func(x *exchange) {
			if mine(x) && n.is(x, 2) {
				x.header.Set("Content-Type", "text/html; charset=utf-8")
				x.setRaw([]byte("<html><body><h1>Service busy</h1></body></html>\n"))
			}
		}}, true
	case matrix.Answer429:
		// §7: the second request is refused by an edge limiter of its own,
		// uncounted, with its own body; the suite's pacer sends it again.
		return breach{before: func(x *exchange) bool {
			if !mine(x) || !n.is(x, 2) {
				return false
			}
			x.answer(http.StatusTooManyRequests, "Too many requests")
			x.header.Set("Retry-After", "1")
			return true
		}}, true
	case matrix.Answer401, matrix.Answer403:
		// §5, §7: the first refusal carries a framework's default message.
		status, msg := http.StatusUnauthorized, "Unauthorized"
		if c.Condition == matrix.Answer403 {
			status, msg = http.StatusForbidden, "Forbidden"
		}
		return breach{after: func(x *exchange) {
			if mine(x) && x.status == status && n.is(x, 1) {
				x.answer(status, msg)
			}
		}}, true
	case matrix.AnswerOK:
		// §4.1, §2.2, §2.3: the first success writes one field its own way.
		// An operation with no entry in okBreaks has no switch: the cells'
		// init refuses it.
		breakOK, ok := okBreaks[op]
		if !ok {
			return breach{}, false
		}
		return breach{after: func(x *exchange) {
			if !mine(x) || x.status != http.StatusOK || !n.is(x, 1) {
				return
			}
			obj := x.object()
			if obj == nil {
				return
			}
			breakOK(obj)
			x.changed()
		}}, true
	}
	return breach{}, false
}

// okBreaks writes one field of each operation's 200 answer its own way,
// by operation path: the breach of every-answer's AnswerOK cells.
var okBreaks = map[string]func(obj map[string]any){
	spec.PathContactAdd: func(obj map[string]any) {
		obj["contactId"] = json.Number("7") // §4.1: a string
	},
	spec.PathCampaignList: func(obj map[string]any) {
		if cs, _ := obj["campaigns"].([]any); len(cs) > 0 {
			if first, ok := cs[0].(map[string]any); ok {
				fieldBreaks["offset"](first, "offset") // §2.2: +HH:MM
			}
		}
	},
	spec.PathCampaignStats: func(obj map[string]any) {
		if st, ok := obj[spec.EmailStat].(map[string]any); ok {
			asString(st, "Sent") // §2.3: an integer
		}
	},
}
