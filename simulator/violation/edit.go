package violation

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// Generic edits of an answer, driven by the catalogue: a field at a path,
// under a context (a predicate), goes missing, null, another type, another
// name or another format; a status, a label or a message changes.

// pred says whether an edit applies: to the exchange, and, for a field
// edit, to obj, the object that holds the field (a campaign of the list,
// emailStat, the whole body).
type pred func(x *exchange, obj map[string]any) bool

func holds(x *exchange, obj map[string]any, when []pred) bool {
	for _, p := range when {
		if !p(x, obj) {
			return false
		}
	}
	return true
}

// mut changes the field key of obj, which is there, and reports whether it
// changed anything.
type mut func(obj map[string]any, key string) bool

// at edits the field at path wherever the answer has it and every
// predicate holds. A path is dot-separated keys; "name[]" walks every
// element of an array, and a last key "*" stands for every key.
func at(path string, m mut, when ...pred) func(*exchange) {
	segs := strings.Split(path, ".")
	return func(x *exchange) {
		if walk(x.json(), segs, func(obj map[string]any, key string) bool {
			return holds(x, obj, when) && m(obj, key)
		}) {
			x.changed()
		}
	}
}

func walk(v any, segs []string, fn func(obj map[string]any, key string) bool) bool {
	obj, ok := v.(map[string]any)
	if !ok {
		return false
	}
	seg, changed := segs[0], false
	if len(segs) == 1 {
		if seg == "*" {
			keys := make([]string, 0, len(obj))
			for k := range obj {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				changed = fn(obj, k) || changed
			}
			return changed
		}
		if _, ok := obj[seg]; !ok {
			return false
		}
		return fn(obj, seg)
	}
	name, each := strings.CutSuffix(seg, "[]")
	if !each {
		return walk(obj[name], segs[1:], fn)
	}
	arr, _ := obj[name].([]any)
	for _, el := range arr {
		changed = walk(el, segs[1:], fn) || changed
	}
	return changed
}

// Mutators.

func drop(obj map[string]any, key string) bool { delete(obj, key); return true }

func null(obj map[string]any, key string) bool {
	if obj[key] == nil {
		return false
	}
	obj[key] = nil
	return true
}

func set(v any) mut {
	return func(obj map[string]any, key string) bool { obj[key] = v; return true }
}

func rename(to string) mut {
	return func(obj map[string]any, key string) bool {
		obj[to] = obj[key]
		delete(obj, key)
		return true
	}
}

// asString writes a number as a string: 3 becomes "3".
func asString(obj map[string]any, key string) bool {
	n, ok := obj[key].(json.Number)
	if ok {
		obj[key] = n.String()
	}
	return ok
}

// asFloat writes an integer with a fraction: 3 becomes 3.0.
func asFloat(obj map[string]any, key string) bool {
	n, ok := obj[key].(json.Number)
	if ok && !strings.ContainsAny(n.String(), ".eE") {
		obj[key] = json.Number(n.String() + ".0")
		return true
	}
	return false
}

// str rewrites a string value.
func str(f func(string) any) mut {
	return func(obj map[string]any, key string) bool {
		s, ok := obj[key].(string)
		if ok {
			obj[key] = f(s)
		}
		return ok
	}
}

// num rewrites an integer value.
func num(f func(int64) any) mut {
	return func(obj map[string]any, key string) bool {
		n, ok := obj[key].(json.Number)
		if !ok {
			return false
		}
		i, err := n.Int64()
		if err != nil {
			return false
		}
		obj[key] = f(i)
		return true
	}
}

// lower spells the key in lower case.
func lower(obj map[string]any, key string) bool {
	l := strings.ToLower(key)
	if l == key {
		return false
	}
	return rename(l)(obj, key)
}

// whole replaces the answer's body with what f makes of it.
func whole(f func(doc any) any, when ...pred) func(*exchange) {
	return func(x *exchange) {
		if doc := x.json(); doc != nil && holds(x, nil, when) {
			x.setDoc(f(doc))
		}
	}
}

// Edits of errors, statuses and labels.

// status changes the answer's status.
func status(to int, when ...pred) func(*exchange) {
	return func(x *exchange) {
		if holds(x, nil, when) {
			x.status = to
		}
	}
}

// message rewords the error message from.
func message(from, to string, when ...pred) func(*exchange) {
	return at("error", func(obj map[string]any, key string) bool {
		if obj[key] != from {
			return false
		}
		obj[key] = to
		return true
	}, append([]pred{failed}, when...)...)
}

// replace answers status with a JSON error of its own.
func replace(status int, msg string, when ...pred) func(*exchange) {
	return func(x *exchange) {
		if holds(x, nil, when) {
			x.answer(status, msg)
		}
	}
}

// label changes the answer's Content-Type and nothing else.
func label(ct string, when ...pred) func(*exchange) {
	return func(x *exchange) {
		if holds(x, nil, when) {
			x.header.Set("Content-Type", ct)
		}
	}
}

// plainText answers an error's bare message as text.
func plainText(when ...pred) func(*exchange) {
	return func(x *exchange) {
		if !holds(x, nil, when) {
			return
		}
		msg, ok := x.object()["error"].(string)
		if !ok {
			return
		}
		x.setRaw([]byte(msg))
		x.header.Set("Content-Type", textPlain)
	}
}

const textPlain = "text/plain; charset=utf-8"

// each runs every edit in turn.
func each(edits ...func(*exchange)) func(*exchange) {
	return func(x *exchange) {
		for _, e := range edits {
			e(x)
		}
	}
}

// Predicates.

// answer holds for the operation's answers with that status.
func answer(op string, code int) pred {
	return func(x *exchange, _ map[string]any) bool { return x.note.op == op && x.status == code }
}

// on holds for every answer of the operation.
func on(op string) pred {
	return func(x *exchange, _ map[string]any) bool { return x.note.op == op }
}

// code holds for answers with one of the statuses.
func code(codes ...int) pred {
	return func(x *exchange, _ map[string]any) bool { return slices.Contains(codes, x.status) }
}

// failed holds for every error answer.
func failed(x *exchange, _ map[string]any) bool { return x.status >= 400 }

// errorIs holds for an error answer with that message.
func errorIs(msg string) pred {
	return func(x *exchange, _ map[string]any) bool { return x.object()["error"] == msg }
}

var (
	contactOK = answer(spec.PathContactAdd, http.StatusOK)
	listOK    = answer(spec.PathCampaignList, http.StatusOK)
	statsOK   = answer(spec.PathCampaignStats, http.StatusOK)
)

// channel holds for a campaign of that channel: the object's own
// campaignChannel, or, in Campaign Stats, the channel of the campaign asked
// for.
func channel(c string) pred {
	return func(x *exchange, obj map[string]any) bool {
		if ch, ok := obj["campaignChannel"].(string); ok {
			return ch == c
		}
		if x.note.op == spec.PathCampaignStats {
			if f := x.statsFacts(); f.campaign != nil {
				return f.campaign.CampaignChannel == c
			}
		}
		return false
	}
}

// deleted holds for a deleted campaign (active 0).
func deleted(_ *exchange, obj map[string]any) bool { return obj["active"] == json.Number("0") }

// lastPage holds for the last page of a list of several pages.
func lastPage(x *exchange, _ map[string]any) bool {
	p := x.page()
	return p.PageNo > 1 && p.PageNo == p.TotalPages
}

// pastEnd holds for a page past the last.
func pastEnd(x *exchange, _ map[string]any) bool {
	p := x.page()
	return p.PageNo > p.TotalPages
}

// highestID holds for Campaign Stats of the account's campaign with the
// highest Id.
func highestID(x *exchange, _ map[string]any) bool {
	f := x.statsFacts()
	return f.campaign != nil && f.campaign.ID == f.highest
}

// phoneOnly holds for an Add Contact request with phoneNo but no email.
func phoneOnly(x *exchange, _ map[string]any) bool {
	return given(x.req, "phoneNo") && !given(x.req, "email")
}

// emptyBody holds for a request body of {}.
func emptyBody(x *exchange, _ map[string]any) bool { return x.req != nil && len(x.req) == 0 }

// lacks holds for a JSON object request without the field.
func lacks(field string) pred {
	return func(x *exchange, _ map[string]any) bool { return x.req != nil && !present(x.req, field) }
}

// noted holds when the layer noted the request so.
func noted(f func(*note) bool) pred {
	return func(x *exchange, _ map[string]any) bool { return f(x.note) }
}

// present reports whether a request field is there and not null.
func present(f map[string]json.RawMessage, name string) bool {
	raw, ok := f[name]
	return ok && string(raw) != "null"
}

// given reports whether a request field is there, not null and not "" (the
// server's reading of spec §4.1's "missing").
func given(f map[string]json.RawMessage, name string) bool {
	return present(f, name) && string(f[name]) != `""`
}

// integer reads a request field that is a JSON integer.
func integer(f map[string]json.RawMessage, name string) (int64, bool) {
	if !present(f, name) {
		return 0, false
	}
	n, err := strconv.ParseInt(string(f[name]), 10, 64)
	return n, err == nil
}

// pageFacts is the paging of a Campaign List answer as the server wrote it.
type pageFacts struct {
	PageNo     int `json:"pageNo"`
	TotalPages int `json:"totalPages"`
}

func (x *exchange) page() pageFacts {
	var p pageFacts
	_ = json.Unmarshal(x.orig, &p)
	return p
}

// statsFacts is what Campaign Stats' switches ask about the campaign asked
// for, from the faithful store.
type statsFacts struct {
	campaign *simulator.Campaign // nil when the account has no such campaign
	highest  int64               // the account's highest campaign Id
}

func (x *exchange) statsFacts() *statsFacts {
	if x.stats != nil {
		return x.stats
	}
	x.stats = &statsFacts{}
	ctx, account := x.r.Context(), x.r.Header.Get(spec.HeaderAccountID)
	if id, ok := integer(x.req, "campaignId"); ok {
		x.stats.campaign, _ = x.l.campaigns.FindCampaignByID(ctx, account, id)
	}
	if last, _ := lastCampaign(ctx, x.l.campaigns, account); last != nil {
		x.stats.highest = last.ID
	}
	return x.stats
}
