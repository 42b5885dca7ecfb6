package probe

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// Observation is what a client observes of one answer, in the terms the
// comparison holds two sides to: nothing that runs on a side's own clock
// or data (a header's value, a count, an Id's digits) is kept.
type Observation struct {
	// Status is the HTTP status; 0 when no answer came (Error says why).
	Status int `json:"status"`
	// Error is the transport's error when no answer came (a connection
	// closed on a body the side will not read).
	Error string `json:"error,omitempty"`
	// MediaType is the Content-Type's media type, lower case, without its
	// parameters.
	MediaType string `json:"mediaType,omitempty"`
	// Shape is every path of the body with its JSON type, recursively
	// ("campaigns[].reason:null", "error.code:integer"), sorted; an
	// array's elements are one path ("[]") with each type met. "not JSON"
	// or "empty" for a body that is no JSON value.
	Shape []string `json:"shape"`
	// Message is the value of an error answer's message field: the first
	// string whose key names one (error, message, msg, detail, title), else one
	// holding a message of the spec, else the first string. Values the
	// request took from the side's own data (its campaign Ids) are written
	// as their placeholder ({campaignId}), so that the same template on
	// both sides reads the same.
	Message string `json:"message,omitempty"`
	// RateHeaders are the names of the rate-limit headers present
	// (X-RateLimit-*, RateLimit*, Retry-After), canonical, sorted.
	RateHeaders []string `json:"rateHeaders,omitempty"`
	// Allow and ContentEncoding are those headers' values, which a client
	// reads (§1's other methods, compressed answers).
	Allow           string `json:"allow,omitempty"`
	ContentEncoding string `json:"contentEncoding,omitempty"`
	// IDs are the identifier formats of the body by path: a string id's
	// length and alphabet ("ct_ + 24 hex", "uuid", "12 digits"), a
	// top-level numeric id's digits.
	IDs map[string]string `json:"ids,omitempty"`
	// campaignIDs are the Ids of a listed page's campaigns, in order: the
	// order of pages is read from them (Result.Order), the Ids themselves
	// are a side's data.
	campaignIDs   []int
	campaignNames []string
	totalPages    int
}

// observe reads one answer. subst maps a value the request took from the
// side's data to its placeholder (see Observation.Message); redact hides
// the side's secrets in what is kept.
func observe(resp *http.Response, body []byte, subst map[string]string, redact func(string) string) Observation {
	o := Observation{Status: resp.StatusCode}
	if mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type")); err == nil {
		o.MediaType = strings.ToLower(mt)
	} else if ct := resp.Header.Get("Content-Type"); ct != "" {
		o.MediaType = strings.ToLower(strings.TrimSpace(ct))
	}
	for name := range resp.Header {
		c := http.CanonicalHeaderKey(name)
		lc := strings.ToLower(c)
		if strings.HasPrefix(lc, "x-ratelimit-") || strings.HasPrefix(lc, "ratelimit") || lc == "retry-after" {
			o.RateHeaders = append(o.RateHeaders, c)
		}
	}
	slices.Sort(o.RateHeaders)
	o.Allow = resp.Header.Get("Allow")
	o.ContentEncoding = strings.ToLower(resp.Header.Get("Content-Encoding"))
	if o.ContentEncoding == "gzip" {
		// The request asked for gzip itself, so net/http left the body
		// compressed: the shape is the JSON inside.
		if zr, err := gzip.NewReader(bytes.NewReader(body)); err == nil {
			if b, err := io.ReadAll(io.LimitReader(zr, 8<<20)); err == nil {
				body = b
			}
		}
	}
	leaves, ok := walk(body)
	switch {
	case len(bytes.TrimSpace(body)) == 0:
		o.Shape = []string{"empty"}
		return o
	case !ok:
		o.Shape = []string{"not JSON"}
		return o
	}
	for _, l := range leaves {
		o.Shape = append(o.Shape, l.path+":"+l.typ)
	}
	slices.Sort(o.Shape)
	o.Shape = slices.Compact(o.Shape)
	if o.Status >= 400 {
		o.Message = message(leaves)
		for v, ph := range subst {
			if v != "" {
				o.Message = regexp.MustCompile(`\b`+regexp.QuoteMeta(v)+`\b`).ReplaceAllLiteralString(o.Message, ph)
			}
		}
		if redact != nil {
			o.Message = redact(o.Message)
		}
	}
	for _, l := range leaves {
		if f := idFormat(l, subst); f != "" {
			if o.IDs == nil {
				o.IDs = map[string]string{}
			}
			o.IDs[l.path] = f
		}
	}
	o.campaignIDs, o.campaignNames, o.totalPages = listed(body)
	return o
}

// leaf is one scalar of a body: its path, JSON type and value.
type leaf struct {
	path, typ string
	key       string // the last object key on its path
	depth     int    // objects and arrays above it
	raw       json.RawMessage
}

// walk lists a JSON body's scalars in the body's order (an empty object
// or array is a leaf of its own); ok is false for a body that is not one
// JSON value.
func walk(body []byte) ([]leaf, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v json.RawMessage
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false // trailing data
	}
	var out []leaf
	var rec func(path, key string, depth int, v json.RawMessage)
	rec = func(path, key string, depth int, v json.RawMessage) {
		switch t := jsonType(v); t {
		case "object":
			keys, vals := orderedObject(v)
			if len(keys) == 0 {
				out = append(out, leaf{path: orRoot(path), typ: "object", key: key, depth: depth, raw: v})
			}
			for _, k := range keys {
				rec(join(path, k), k, depth+1, vals[k])
			}
		case "array":
			var items []json.RawMessage
			_ = json.Unmarshal(v, &items)
			if len(items) == 0 {
				out = append(out, leaf{path: orRoot(path), typ: "array", key: key, depth: depth, raw: v})
			}
			for _, it := range items {
				rec(path+"[]", key, depth+1, it)
			}
		default:
			out = append(out, leaf{path: orRoot(path), typ: t, key: key, depth: depth, raw: v})
		}
	}
	rec("", "", 0, v)
	return out, true
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func orRoot(path string) string {
	if path == "" {
		return "$"
	}
	return path
}

// jsonType is the JSON type of one value: object, array, string, integer
// (a number without fraction or exponent), number, boolean or null.
func jsonType(v json.RawMessage) string {
	s := bytes.TrimSpace(v)
	if len(s) == 0 {
		return "empty"
	}
	switch s[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	if bytes.ContainsAny(s, ".eE") {
		return "number"
	}
	return "integer"
}

// orderedObject decodes an object's members, keys in the body's order.
func orderedObject(v json.RawMessage) ([]string, map[string]json.RawMessage) {
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil {
		return nil, nil
	}
	vals := map[string]json.RawMessage{}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return keys, vals
		}
		k, _ := t.(string)
		var m json.RawMessage
		if err := dec.Decode(&m); err != nil {
			return keys, vals
		}
		if _, dup := vals[k]; !dup {
			keys = append(keys, k)
		}
		vals[k] = m
	}
	return keys, vals
}

// specMessages are the messages §4 and §7 give.
var specMessages = []string{spec.MsgInvalidCredentials, spec.MsgUnauthorizedAccount, spec.MsgRateLimit,
	spec.MsgInternal, spec.MsgEmailOrPhoneRequired, spec.MsgCampaignIDRequired}

// message is an error body's message (Observation.Message).
func message(leaves []leaf) string {
	var strs []leaf
	for _, l := range leaves {
		if l.typ == "string" {
			strs = append(strs, l)
		}
	}
	str := func(l leaf) string {
		var s string
		_ = json.Unmarshal(l.raw, &s)
		return s
	}
	for _, l := range strs {
		lk := strings.ToLower(l.key)
		for _, w := range []string{"error", "message", "msg", "detail", "title"} {
			if strings.Contains(lk, w) {
				return str(l)
			}
		}
	}
	for _, l := range strs {
		if slices.Contains(specMessages, str(l)) {
			return str(l)
		}
	}
	if len(strs) > 0 {
		return str(strs[0])
	}
	return ""
}

var (
	uuidRE    = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	prefixRE  = regexp.MustCompile(`^([A-Za-z]+[_:-])(.+)$`)
	lettersRE = regexp.MustCompile(`^([A-Za-z]+)([0-9]+)$`)
)

// isIDKey says whether a key names an identifier: id, or a name ending in
// Id, ID or _id (contactId, requestId).
func isIDKey(k string) bool {
	return strings.EqualFold(k, "id") || strings.HasSuffix(k, "Id") || strings.HasSuffix(k, "ID") || strings.HasSuffix(strings.ToLower(k), "_id")
}

// idFormat is an identifier's format (Observation.IDs), "" for a leaf that
// is none. A numeric id inside a list (a campaign's Id) is the side's data,
// not a format; one the request took from the side's data (subst) is
// written as the placeholder it echoes.
func idFormat(l leaf, subst map[string]string) string {
	if !isIDKey(l.key) {
		return ""
	}
	var str string
	if json.Unmarshal(l.raw, &str) != nil {
		str = string(bytes.TrimSpace(l.raw))
	}
	if ph, ok := subst[str]; ok && (l.typ == "string" || l.typ == "integer") {
		return "echoes " + ph + " as " + l.typ
	}
	switch l.typ {
	case "integer":
		if l.depth > 1 {
			return ""
		}
		return fmt.Sprintf("%d digits", len(strings.TrimPrefix(string(bytes.TrimSpace(l.raw)), "-")))
	case "string":
	default:
		return ""
	}
	var s string
	_ = json.Unmarshal(l.raw, &s)
	if uuidRE.MatchString(s) {
		return "uuid" + letterCase(s)
	}
	if m := prefixRE.FindStringSubmatch(s); m != nil {
		return m[1] + " + " + alphabet(m[2])
	}
	if m := lettersRE.FindStringSubmatch(s); m != nil {
		return m[1] + " + " + alphabet(m[2])
	}
	return alphabet(s)
}

// alphabet is a string's length and alphabet class: digits, hex (with its
// case), alphanumeric, or other characters.
func alphabet(s string) string {
	n := len([]rune(s))
	isHex, digits, alnum := true, true, true
	for _, r := range s {
		d := r >= '0' && r <= '9'
		h := d || r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F'
		a := d || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		digits, isHex, alnum = digits && d, isHex && h, alnum && a
	}
	switch {
	case n == 0:
		return "empty"
	case digits:
		return fmt.Sprintf("%d digits", n)
	case isHex:
		return fmt.Sprintf("%d hex%s", n, letterCase(s))
	case alnum:
		return fmt.Sprintf("%d alphanumeric%s", n, letterCase(s))
	}
	return fmt.Sprintf("%d characters", n)
}

// letterCase says which case a string's letters are in, when one.
func letterCase(s string) string {
	lower, upper := strings.ToLower(s) == s, strings.ToUpper(s) == s
	switch {
	case lower && upper:
		return ""
	case lower:
		return " (lower case)"
	case upper:
		return " (upper case)"
	}
	return " (mixed case)"
}

// listed reads a Campaign List answer's Ids (§2.2), their campaigns'
// names (one per Id) and totalPages.
func listed(body []byte) ([]int, []string, int) {
	var page struct {
		TotalPages int `json:"totalPages"`
		Campaigns  []struct {
			ID   *int   `json:"Id"`
			Name string `json:"campaignName"`
		} `json:"campaigns"`
	}
	if json.Unmarshal(body, &page) != nil {
		return nil, nil, 0
	}
	var ids []int
	var names []string
	for _, c := range page.Campaigns {
		if c.ID != nil {
			ids, names = append(ids, *c.ID), append(names, c.Name)
		}
	}
	return ids, names, page.TotalPages
}

// The orders a client can read pages in (Result.Orders).
const (
	orderIDAsc    = "Id ascending"
	orderIDDesc   = "Id descending"
	orderNameAsc  = "campaignName ascending"
	orderNameDesc = "campaignName descending"
	// orderNone: consistent with none of the others.
	orderNone = "neither Id nor campaignName ascending or descending"
)

// orders is the set of orders the campaigns of a walk, in the order a
// client read them, are consistent with (nil for fewer than two): pages
// that happen to be in Id order on a deployment sorting by name are
// consistent with both, and the data decides which of the orders a
// side's few pages show. The sides differ only where no order is
// consistent with both (ordersDisjoint).
func orders(ids []int, names []string) []string {
	if len(ids) < 2 {
		return nil
	}
	var out []string
	for _, o := range []struct {
		name string
		ok   bool
	}{
		{orderIDAsc, slices.IsSortedFunc(ids, func(a, b int) int { return a - b })},
		{orderIDDesc, slices.IsSortedFunc(ids, func(a, b int) int { return b - a })},
		{orderNameAsc, len(names) == len(ids) && slices.IsSorted(names)},
		{orderNameDesc, len(names) == len(ids) && slices.IsSortedFunc(names, func(a, b string) int { return strings.Compare(b, a) })},
	} {
		if o.ok {
			out = append(out, o.name)
		}
	}
	if len(out) == 0 {
		return []string{orderNone}
	}
	return out
}

// ordersDisjoint reports whether two sides' orders (orders) hold no order
// in common, each side having read at least two campaigns.
func ordersDisjoint(a, b []string) bool {
	if a == nil || b == nil {
		return false
	}
	for _, o := range a {
		if slices.Contains(b, o) {
			return false
		}
	}
	return true
}
