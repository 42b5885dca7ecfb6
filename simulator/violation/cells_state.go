package violation

// The cell switches of rules contact-realdata, list-concurrent and
// independence (steps/matrix): real-world contact data refused, a pager
// that keeps state between requests, and reads or writes that change what
// another operation answers. Each breaks its cell's operation and account
// only.

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/steps/matrix"
)

// realDataBreach answers a contact of the cell's condition, of the cell's
// account, with §7's 500, as a service does whose storage or encoding
// chokes on the value. For a value §2.1 allows without doubt the second
// account's switch answers 400 instead, as a validator too narrow for real
// data does: the suite must fail that too (only a refusal of a shape the
// spec leaves open is a warning).
func realDataBreach(c matrix.Cell, mine func(*exchange) bool) (breach, bool) {
	d, ok := matrix.RealDatumOf(c.Condition)
	if !ok {
		return breach{}, false
	}
	return breach{before: func(x *exchange) bool {
		if !mine(x) || x.req == nil || matrix.RealDataCondition(x.req, time.Now()) != c.Condition {
			return false
		}
		if c.Account == matrix.Second && !d.Open {
			x.answer(http.StatusBadRequest, "Invalid contact")
		} else {
			x.answer(http.StatusInternalServerError, spec.MsgInternal)
		}
		return true
	}}, true
}

// cursorBreach pages Campaign List of the cell's account from a cursor the
// service keeps per account, not from the page asked: page 1 starts it
// again, every other page serves what follows the last one served. One
// client reading the pages in order sees no difference; two reading at
// once skip and repeat each other's pages.
func cursorBreach(c matrix.Cell) (breach, bool) {
	var mu sync.Mutex
	cursor := 0
	return breach{campaigns: filterCampaigns(func(ctx context.Context, f *simulator.CampaignFilter) {
		n := noteFrom(ctx)
		if n.role != c.Account || n.op != spec.PathCampaignList || f.Limit <= 0 {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if f.Offset > 0 {
			f.Offset = cursor
		}
		cursor = f.Offset + f.Limit
	})}, true
}

// sideEffects is what the account's Stats calls and Add Contacts left
// behind, for the answers an independence switch changes.
type sideEffects struct {
	mu       sync.Mutex
	calls    int             // operations of the cell seen
	touched  map[int64]int64 // campaign Id -> the call's time (ms), for a Stats call
	lastCall time.Time
}

// independenceBreach makes the cell's operation, for the cell's account,
// change what another operation answers: a Stats call that bumps the
// campaign's updatedAt or moves it to the front of its page, or counts
// itself in the statistics (an API read counted as an open); an Add
// Contact that touches every campaign's updatedAt, reorders the pages or
// counts the contact as sent.
func independenceBreach(c matrix.Cell) (breach, bool) {
	op := operationPath(c.Operation)
	if !slices.Contains(matrix.IndependenceConditions, c.Condition) {
		return breach{}, false
	}
	// The switch is made once per process: what calls left behind is kept
	// per simulator (its layer), so that a new simulator starts clean.
	var mu sync.Mutex
	bySim := map[*layer]*sideEffects{}
	return breach{after: func(x *exchange) {
		if x.note.role != c.Account || x.status != http.StatusOK {
			return
		}
		mu.Lock()
		fx := bySim[x.l]
		if fx == nil {
			fx = &sideEffects{touched: map[int64]int64{}}
			bySim[x.l] = fx
		}
		mu.Unlock()
		fx.mu.Lock()
		defer fx.mu.Unlock()
		if x.operation() == op {
			if c.Condition == matrix.IndepStats && op == spec.PathCampaignStats {
				fx.bumpStats(x, "emailStat", "Opened")
			}
			fx.calls++
			fx.lastCall = time.Now().UTC()
			if id, ok := integer(x.req, "campaignId"); ok {
				fx.touched[id] = fx.lastCall.UnixMilli()
			}
			return
		}
		// The answers that show what the cell's calls left behind: a
		// Campaign List page and Campaign Stats' counts. No other answer
		// carries campaign state, so none other is edited; this is no list
		// of every operation, and a new one needs no entry here.
		if x.operation() == spec.PathCampaignList && fx.calls > 0 && c.Condition != matrix.IndepStats {
			fx.editPage(x, op, c.Condition)
		}
		if x.operation() == spec.PathCampaignStats && fx.calls > 0 && c.Condition == matrix.IndepStats {
			fx.bumpStats(x, "emailStat", "Sent")
		}
	}}, true
}

// bumpStats adds the calls seen so far to one count of a Stats answer.
func (fx *sideEffects) bumpStats(x *exchange, object, key string) {
	o, _ := x.object()[object].(map[string]any)
	n, err := jsonInt(o[key])
	if o == nil || err != nil || fx.calls == 0 {
		return
	}
	o[key] = json.Number(strconv.FormatInt(n+int64(fx.calls), 10))
	x.changed()
}

// editPage changes a Campaign List page as the cell's operation left it.
func (fx *sideEffects) editPage(x *exchange, op, cond string) {
	obj := x.object()
	cs, _ := obj["campaigns"].([]any)
	if len(cs) == 0 {
		return
	}
	at := func(i int) map[string]any { m, _ := cs[i].(map[string]any); return m }
	stamp := fx.lastCall.Format(spec.TimestampLayout)
	switch {
	case cond == matrix.IndepFields && op == spec.PathCampaignStats:
		for i := range cs {
			id, err := jsonInt(at(i)["Id"])
			if ms, ok := fx.touched[id]; ok && err == nil && at(i) != nil {
				at(i)["updatedAt"] = time.UnixMilli(ms).UTC().Format(spec.TimestampLayout)
			}
		}
	case cond == matrix.IndepFields:
		for i := range cs {
			if at(i) != nil {
				at(i)["updatedAt"] = stamp
			}
		}
	case cond == matrix.IndepOrder && op == spec.PathCampaignStats:
		for i := range cs {
			id, err := jsonInt(at(i)["Id"])
			if _, ok := fx.touched[id]; ok && err == nil && i > 0 {
				moved := cs[i]
				copy(cs[1:i+1], cs[:i])
				cs[0] = moved
			}
		}
	case cond == matrix.IndepOrder:
		obj["campaigns"] = slices.Concat(cs[len(cs)-1:], cs[:len(cs)-1])
	}
	x.changed()
}
