package partnerapi

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/httpjson"
)

// record journals, hands to Reports (the client report) and Observer (the
// metrics) and logs every partner request as it is answered: before its
// header goes out, so that a client that reads the journal, its report or
// the metrics right after the answer finds the request there; or, for a
// request cut off without an answer, when its handler ends.
func (s *API) record(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The latency is real time, on the monotonic clock; the entry's time
		// is Now's (a test's fake clock stands still).
		began := time.Now()
		start := began
		if s.Now != nil {
			start = s.Now()
		}
		// One allocation holds the record, the status recorder and the
		// context (issue 21): the steps after fill st in place.
		st := &requestState{record: simulator.RequestRecord{Entry: simulator.JournalEntry{
			Time:      start.UTC(),
			RequestID: w.Header().Get(httpjson.RequestIDHeader),
			Method:    r.Method,
			Path:      r.URL.Path,
		}}, s: s, began: began}
		st.rw = statusRecorder{ResponseWriter: w, st: st}
		st.ctx = stateContext{Context: r.Context(), st: st}
		r = r.WithContext(&st.ctx) // the request's one copy
		st.r = r
		defer func() {
			if v := recover(); v != nil {
				if !st.committed {
					st.commit(0) // the connection was cut on purpose
				}
				st.finishExchange()
				st.release()
				panic(v)
			}
			if !st.committed {
				st.commit(st.rw.status)
			}
			st.finishExchange()
			st.release()
		}()
		next.ServeHTTP(&st.rw, r)
	})
}

// commit journals the request answered status, hands its record to
// Reports and Observer and logs it: once, before the answer's header goes
// out (statusRecorder), or when the handler ends without one.
func (st *requestState) commit(status int) {
	s, e, record := st.s, &st.record.Entry, &st.record
	st.committed = true
	e.APIKey = st.maskedKey()
	e.LatencyMS = float64(time.Since(st.began).Microseconds()) / 1000
	e.Status = status
	// What the client was told to wait, limiter's or fault's.
	if ra := st.rw.Header()["Retry-After"]; len(ra) == 1 {
		if sec, err := strconv.Atoi(ra[0]); err == nil && sec > 0 {
			record.RetryAfter = time.Duration(sec) * time.Second
		} else if at, err := http.ParseTime(ra[0]); err == nil && !record.Now.IsZero() {
			// A profile that dates its Retry-After (issue 20):
			// from the simulator time the limiter decided at.
			record.RetryAfter = max(at.Sub(record.Now), 0)
		}
	}
	// The refusal path only: the hot path has authenticated. A 403
	// noted the account its key and secret proved.
	var attributed *simulator.Account
	if e.AccountID == "" && e.AttributedTo == "" {
		if attributed = s.attribute(st.r); attributed != nil {
			e.AttributedTo = attributed.AccountID
		}
	}
	if s.Reports != nil {
		s.Reports.ObserveRequest(record)
	}
	if s.Observer != nil {
		s.Observer.ObserveRequest(record)
	}
	if s.exchanges != nil { // first: a reader who sees the entry finds it
		st.takeExchange(s.exchanges, attributed)
	}
	s.journal.Add(*e)
	level := levelFor(e.Status)
	if e.FaultID != "" {
		level = slog.LevelInfo // the failure was asked for
	}
	// Attributes are built only for a logger that will write them.
	if l := s.logger(); l.Enabled(context.Background(), level) {
		l.LogAttrs(context.Background(), level, "request", slogAttrs(e)...)
	}
}

// firstValue is Header.Get's answer for a key already canonical.
func firstValue(vv []string) string {
	if len(vv) == 0 {
		return ""
	}
	return vv[0]
}

// maskedKeys holds the masked key of each account key that authenticated,
// so that an account's journal entries share one string instead of
// making one per request (issue 31). Only authenticated keys are kept
// (a client sending made-up keys adds nothing), at most maxMaskedKeys of
// them; past that a key is masked per request, as every key was before.
var maskedKeys struct {
	sync.RWMutex
	m map[string]string
}

const maxMaskedKeys = 1 << 12

// maskedKey is the request's x-api-key masked (maskKey): the authenticated
// account's, made once, or any other made now.
func (st *requestState) maskedKey() string {
	k := firstValue(st.r.Header[keyAPIKey])
	if a := st.account; a == nil || k != a.APIKey || len(k) <= 8 {
		return maskKey(k) // no allocation for the short ones
	}
	maskedKeys.RLock()
	m, ok := maskedKeys.m[k]
	maskedKeys.RUnlock()
	if ok {
		return m
	}
	m = maskKey(k)
	maskedKeys.Lock()
	if maskedKeys.m == nil {
		maskedKeys.m = map[string]string{}
	}
	if len(maskedKeys.m) < maxMaskedKeys {
		maskedKeys.m[k] = m
	}
	maskedKeys.Unlock()
	return m
}

// maskKey keeps enough of an API key to tell keys apart in a journal.
func maskKey(k string) string {
	if k == "" {
		return ""
	}
	if len(k) <= 8 {
		return "****"
	}
	return k[:4] + "****" + k[len(k)-2:]
}
