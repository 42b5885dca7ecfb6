package learn

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// listBody is a valid Campaign List body (§4.2).
const listBody = `{"limit": 1, "page": 1}`

// auth learns what §5 leaves open.
func (l *learner) auth(ctx context.Context) error {
	x, err := l.send(ctx, l.req(requestFor("auth.missingAccount"), Vars{}))
	if err != nil {
		return err
	}
	switch x.status {
	case http.StatusUnauthorized, http.StatusForbidden:
		l.p.Auth.MissingAccount = l.outcomeChoice(x, outcome(x))
	default:
		l.p.Auth.MissingAccount = unknown[profile.Outcome](fmt.Sprintf("a request without x-account-id was answered %d, neither 401 nor 403 (§5)", x.status), l.evidence(x))
	}
	x, err = l.send(ctx, l.req(requestFor("auth.credentialsFirst"), Vars{}))
	if err != nil {
		return err
	}
	switch x.status {
	case http.StatusUnauthorized:
		l.p.Auth.CredentialsFirst = profile.Choice[bool]{Value: true, Evidence: l.evidences(x)}
	case http.StatusBadRequest:
		l.p.Auth.CredentialsFirst = profile.Choice[bool]{Value: false, Evidence: l.evidences(x)}
	default:
		l.p.Auth.CredentialsFirst = unknown[bool](fmt.Sprintf("a wrong secret with an empty Campaign Stats body was answered %d, neither 401 nor 400", x.status), l.evidence(x))
	}
	return nil
}

// campaign is what the walk reads of a campaign (§2.2).
type campaign struct {
	ID                int     `json:"Id"`
	Status            string  `json:"status"`
	StatusColor       string  `json:"statusColor"`
	Active            int     `json:"active"`
	ScheduledTimeZone string  `json:"scheduledTimeZone"`
	AutoResend        int     `json:"autoResend"`
	Reason            *string `json:"reason"`
}

type listPage struct {
	PageNo          int        `json:"pageNo"`
	PageSize        int        `json:"pageSize"`
	TotalPages      int        `json:"totalPages"`
	TotalRecords    int        `json:"totalRecords"`
	FilteredRecords int        `json:"filteredRecords"`
	Campaigns       []campaign `json:"campaigns"`
}

// maxWalkPages bounds the walk of the campaigns at limit 50.
const maxWalkPages = 10

// list learns Campaign List's open points (§4.2) and the vocabulary of
// the campaigns (§2.2, §3).
func (l *learner) list(ctx context.Context) error {
	cases := []struct {
		dst    *profile.Choice[profile.Outcome]
		choice string
	}{
		{&l.p.List.LimitAboveMax, "campaignList.limitAboveMax"},
		{&l.p.List.LimitBelowOne, "campaignList.limitBelowOne"},
		{&l.p.List.PageBelowOne, "campaignList.pageBelowOne"},
		{&l.p.List.LimitMissing, "campaignList.limitMissing"},
		{&l.p.List.PageMissing, "campaignList.pageMissing"},
		{&l.p.List.WrongType, "campaignList.wrongType"},
		{&l.p.List.ExtraField, "campaignList.extraField"},
		{&l.p.List.NotInteger, "campaignList.notInteger"},
		{&l.p.List.Null, "campaignList.null"},
	}
	for _, c := range cases {
		x, err := l.send(ctx, l.req(requestFor(c.choice), Vars{}))
		if err != nil {
			return err
		}
		o := withField(listOutcome(x), profile.ProbeExtraField)
		if c.dst == &l.p.List.WrongType || c.dst == &l.p.List.NotInteger || c.dst == &l.p.List.Null {
			o = fieldAlone(o, x.field, "page")
		}
		*c.dst = l.outcomeChoice(x, o)
	}
	// The walk, at the spec's largest page.
	var walk []*exch
	var pages []listPage
	var all []campaign
	complete := false
	for page := 1; page <= maxWalkPages; page++ {
		x, err := l.send(ctx, l.req(requestFor("campaignList.order"), Vars{Page: page}))
		if err != nil {
			return err
		}
		walk = append(walk, x)
		var lp listPage
		if x.status != http.StatusOK || json.Unmarshal(x.body, &lp) != nil {
			why := fmt.Sprintf("page %d of the campaigns at limit %d was answered %d", page, spec.MaxPageSize, x.status)
			l.listUnknown(why, l.evidence(x))
			return nil
		}
		pages = append(pages, lp)
		all = append(all, lp.Campaigns...)
		if page >= lp.TotalPages || len(lp.Campaigns) == 0 {
			complete = true
			break
		}
	}
	first := pages[0]
	ev := l.evidences(walk[0])
	// The page after the last.
	past := max(first.TotalPages, 1) + 1
	x, err := l.send(ctx, l.req(requestFor("campaignList.pastLast"), Vars{Page: past}))
	if err != nil {
		return err
	}
	o := listOutcome(x)
	echo := o.Accepted() && o.PageNo == past
	// Echo says which pageNo a 200 answered; the number itself depends on
	// the account's campaigns, which are no choice.
	o.PageNo, o.PageSize = 0, 0
	l.p.List.PastLast = profile.Choice[profile.PastLast]{Value: profile.PastLast{Outcome: o, Echo: echo}, Evidence: l.evidences(x)}
	// Filtering: deleted campaigns left out of the count, or of the pages.
	deletedListed := slices.ContainsFunc(all, func(c campaign) bool { return c.Active == 0 })
	switch {
	case first.FilteredRecords < first.TotalRecords:
		l.p.List.Filtered = profile.Choice[string]{Value: profile.FilteredActive, Evidence: ev}
	case !complete:
		l.p.List.Filtered = unknown[string](fmt.Sprintf("filteredRecords equals totalRecords (%d) and the walk stopped after %d pages", first.TotalRecords, maxWalkPages), ev...)
	case !deletedListed && first.TotalRecords > len(all):
		l.p.List.Filtered = profile.Choice[string]{Value: profile.FilteredActive, Evidence: ev}
	default:
		l.p.List.Filtered = profile.Choice[string]{Value: profile.FilteredAll, Evidence: ev}
	}
	// Order over the walk.
	ids := make([]int, len(all))
	for i, c := range all {
		ids[i] = c.ID
	}
	walkEv := l.evidences(walk...)
	switch {
	case len(ids) < 2:
		l.p.List.Order = unknown[string](fmt.Sprintf("%d campaigns listed: no order shows", len(ids)), walkEv...)
	case slices.IsSortedFunc(ids, func(a, b int) int { return a - b }) && !hasDup(ids):
		l.p.List.Order = profile.Choice[string]{Value: profile.OrderIDAsc, Evidence: walkEv}
	case slices.IsSortedFunc(ids, func(a, b int) int { return b - a }) && !hasDup(ids):
		l.p.List.Order = profile.Choice[string]{Value: profile.OrderIDDesc, Evidence: walkEv}
	default:
		l.p.List.Order = profile.Choice[string]{Value: profile.OrderOther, Evidence: walkEv}
	}
	l.vocabulary(all, walkEv)
	l.campaignIDs = ids
	return nil
}

func hasDup(ids []int) bool {
	s := slices.Clone(ids)
	slices.Sort(s)
	return len(slices.Compact(s)) != len(ids)
}

// listUnknown marks every choice the walk shows Unknown.
func (l *learner) listUnknown(why string, ev ...profile.Exchange) {
	l.p.List.PastLast = unknown[profile.PastLast](why, ev...)
	l.p.List.Filtered = unknown[string](why, ev...)
	l.p.List.Order = unknown[string](why, ev...)
	l.p.Vocabulary = profile.Vocabulary{
		Statuses: unknown[[]profile.StatusColor](why), TimeZones: unknown[[]string](why),
		Reasons: unknown[[]string](why), AutoResend: unknown[[]int](why),
	}
}

// vocabulary records the values §2.2 and §3 leave open, as listed.
func (l *learner) vocabulary(all []campaign, ev []profile.Exchange) {
	if len(all) == 0 {
		why := "no campaign listed"
		l.p.Vocabulary = profile.Vocabulary{
			Statuses: unknown[[]profile.StatusColor](why, ev...), TimeZones: unknown[[]string](why, ev...),
			Reasons: unknown[[]string](why, ev...), AutoResend: unknown[[]int](why, ev...),
		}
		return
	}
	var sc []profile.StatusColor
	var zones, reasons []string
	var resend []int
	for _, c := range all {
		sc = append(sc, profile.StatusColor{Status: c.Status, Color: c.StatusColor})
		zones = append(zones, c.ScheduledTimeZone)
		if c.Reason != nil {
			reasons = append(reasons, *c.Reason)
		}
		resend = append(resend, c.AutoResend)
	}
	slices.SortFunc(sc, func(a, b profile.StatusColor) int {
		return strings.Compare(a.Status+"\x00"+a.Color, b.Status+"\x00"+b.Color)
	})
	sc = slices.Compact(sc)
	ev = ev[:1]
	l.p.Vocabulary.Statuses = profile.Choice[[]profile.StatusColor]{Value: sc, Evidence: ev}
	l.p.Vocabulary.TimeZones = profile.Choice[[]string]{Value: distinct(zones), Evidence: ev}
	l.p.Vocabulary.Reasons = profile.Choice[[]string]{Value: distinct(reasons), Evidence: ev}
	slices.Sort(resend)
	l.p.Vocabulary.AutoResend = profile.Choice[[]int]{Value: slices.Compact(resend), Evidence: ev}
}

func distinct(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	s = slices.Compact(s)
	if s == nil {
		return []string{}
	}
	return s
}

// stats learns Campaign Stats' open points (§4.3).
func (l *learner) stats(ctx context.Context) error {
	if len(l.campaignIDs) == 0 {
		why := "the account lists no campaign: no campaignId to probe with"
		l.p.Stats = profile.Stats{Unknown: unknown[profile.Outcome](why), NumericString: unknown[profile.Outcome](why), ExtraField: unknown[profile.Outcome](why),
			NotInteger: unknown[profile.Outcome](why), Null: unknown[profile.Outcome](why)}
		return nil
	}
	v := Vars{CampaignID: l.campaignIDs[0], UnknownCampaignID: UnknownCampaignID(l.campaignIDs)}
	if _, err := l.send(ctx, l.req(requestFor("campaignStats.known"), v)); err != nil {
		return err
	}
	cases := []struct {
		dst    *profile.Choice[profile.Outcome]
		choice string
	}{
		{&l.p.Stats.Unknown, "campaignStats.unknown"},
		{&l.p.Stats.NumericString, "campaignStats.numericString"},
		{&l.p.Stats.ExtraField, "campaignStats.extraField"},
		{&l.p.Stats.NotInteger, "campaignStats.notInteger"},
		{&l.p.Stats.Null, "campaignStats.null"},
	}
	for _, c := range cases {
		x, err := l.send(ctx, l.req(requestFor(c.choice), v))
		if err != nil {
			return err
		}
		o := withField(outcome(x), profile.ProbeExtraField)
		if c.dst == &l.p.Stats.NumericString || c.dst == &l.p.Stats.NotInteger || c.dst == &l.p.Stats.Null {
			o = fieldAlone(o, x.field)
		}
		*c.dst = l.outcomeChoice(x, o)
	}
	return nil
}

// email is a new address for a probe contact.
func (l *learner) email() string {
	l.emails++
	return fmt.Sprintf("learn-%s-%d@%s", l.env.RunID, l.emails, l.env.EmailDomain)
}

func phone() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	n := (int(b[0])<<24 | int(b[1])<<16 | int(b[2])<<8 | int(b[3])) % 10000000
	return fmt.Sprintf("+1555%07d", n)
}

type contactAnswer struct {
	Status    string `json:"status"`
	ContactID any    `json:"contactId"`
}

func contactID(x *exch) (string, bool) {
	var a contactAnswer
	if x.status != http.StatusOK || json.Unmarshal(x.body, &a) != nil {
		return "", false
	}
	switch v := a.ContactID.(type) {
	case string:
		return v, v != ""
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), true
	}
	return "", false
}

// contact learns Add Contact's open points (§2.1, §4.1).
func (l *learner) contact(ctx context.Context) error {
	if l.env.ReadOnly {
		why := "a read-only run creates no contact"
		l.p.Contact = profile.Contact{ID: unknown[profile.IDFormat](why), DuplicateEmail: unknown[profile.Duplicate](why),
			DuplicatePhone: unknown[profile.Duplicate](why), Validation: unknown[map[string]profile.Outcome](why)}
		return nil
	}
	var ids []string
	var idEv []*exch
	dup := func(choice, field string, v Vars) (profile.Choice[profile.Duplicate], error) {
		r := l.req(requestFor(choice), v)
		x1, err := l.send(ctx, r)
		if err != nil {
			return profile.Choice[profile.Duplicate]{}, err
		}
		id1, ok := contactID(x1)
		if !ok {
			return unknown[profile.Duplicate](fmt.Sprintf("a new contact (%s) was answered %d without a contactId", field, x1.status), l.evidence(x1)), nil
		}
		ids, idEv = append(ids, id1), append(idEv, x1)
		x2, err := l.send(ctx, r)
		if err != nil {
			return profile.Choice[profile.Duplicate]{}, err
		}
		ev := l.evidences(x1, x2)
		id2, ok := contactID(x2)
		switch {
		case ok && id2 == id1:
			return profile.Choice[profile.Duplicate]{Value: profile.Duplicate{Answer: profile.DuplicateSameID}, Evidence: ev}, nil
		case ok:
			ids, idEv = append(ids, id2), append(idEv, x2)
			return profile.Choice[profile.Duplicate]{Value: profile.Duplicate{Answer: profile.DuplicateNewID}, Evidence: ev}, nil
		case x2.status != http.StatusOK:
			o := outcome(x2)
			return profile.Choice[profile.Duplicate]{Value: profile.Duplicate{Answer: profile.DuplicateRefused, Refusal: &o}, Evidence: ev}, nil
		}
		return unknown[profile.Duplicate]("the same contact again was answered 200 without a contactId", ev...), nil
	}
	var err error
	if l.p.Contact.DuplicateEmail, err = dup("contact.duplicateEmail", "email", Vars{Email: l.email()}); err != nil {
		return err
	}
	if l.p.Contact.DuplicatePhone, err = dup("contact.duplicatePhone", "phoneNo", Vars{Phone: phone()}); err != nil {
		return err
	}
	if len(ids) == 0 {
		l.p.Contact.ID = unknown[profile.IDFormat]("no contact was created", l.p.Contact.DuplicateEmail.Evidence...)
	} else {
		l.p.Contact.ID = profile.Choice[profile.IDFormat]{Value: idFormatOf(ids), Evidence: l.evidences(idEv[0])}
	}
	values := map[string]profile.Outcome{}
	var ev []profile.Exchange
	var odd []string
	for _, vc := range profile.ValidationCases() {
		x, err := l.send(ctx, l.req(requestFor("contact.validation."+vc.Class), Vars{Email: l.email()}))
		if err != nil {
			return err
		}
		ev = append(ev, l.evidence(x))
		o := outcome(x)
		switch {
		case o.Accepted():
		case x.status < 400 || x.status > 499 || x.status == 401 || x.status == 403 || x.status == 429 || strings.TrimSpace(o.Message) == "":
			// The spec keeps 401, 403 and 429 for §5 and §8: not a choice.
			odd = append(odd, fmt.Sprintf("%s answered %d %q", vc.Class, x.status, o.Message))
			continue
		case len(vc.Fields) > 1 || vc.Class == profile.ClassUnknownField:
			// A message naming another field the class covers is about
			// both ("Either email or phoneNo is required"): word for word.
			o = fieldAlone(o, vc.Field, slices.DeleteFunc(slices.Clone(vc.Fields), func(f string) bool { return f == vc.Field })...)
		}
		values[vc.Class] = o
	}
	if len(odd) > 0 {
		l.logf("learning the profile: validation classes left out, their answers are no choice the spec allows: %s", strings.Join(odd, "; "))
	}
	l.p.Contact.Validation = profile.Choice[map[string]profile.Outcome]{Value: values, Evidence: ev}
	return nil
}

var (
	uuidRE   = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	digitsRE = regexp.MustCompile(`^[0-9]+$`)
	hexTail  = regexp.MustCompile(`[0-9a-fA-F]+$`)
)

// classifyID reads one contactId's format.
func classifyID(id string) profile.IDFormat {
	f := profile.IDFormat{Example: id}
	switch {
	case uuidRE.MatchString(id):
		f.Kind = profile.IDUUID
		return f
	case digitsRE.MatchString(id):
		f.Kind, f.Digits = profile.IDNumeric, len(id)
		return f
	case hexTail.FindString(id) == id && len(id) >= 4 && len(id) <= 64 && !strings.ContainsAny(id, "ABCDEF"):
		// Lowercase hex digits alone (a MongoDB ObjectId's 24): prefixed
		// with nothing, to the length (issue 28: 24 hex digits are not
		// ct_ and 24 hex digits).
		f.Kind, f.Digits, f.Alphabet = profile.IDPrefixed, len(id), profile.AlphabetHex
		return f
	}
	tail := hexTail.FindString(id)
	prefix := id[:len(id)-len(tail)]
	// A prefix ending in a letter ran into the tail ("cid1234"): the tail
	// starts at its first digit.
	if prefix != "" && isLetter(prefix[len(prefix)-1]) {
		i := strings.IndexAny(tail, "0123456789")
		if i < 0 {
			i = len(tail)
		}
		prefix, tail = prefix+tail[:i], tail[i:]
	}
	printable := !strings.ContainsFunc(prefix, func(r rune) bool { return r <= ' ' || r > '~' || r == '"' || r == '\\' })
	if prefix == "" || len(tail) < 4 || len(tail) > 64 || !printable || strings.ContainsAny(prefix, "0123456789") {
		f.Kind = profile.IDOpaque
		return f
	}
	f.Kind, f.Prefix, f.Digits = profile.IDPrefixed, prefix, len(tail)
	f.Alphabet = profile.AlphabetHex
	if digitsRE.MatchString(tail) {
		f.Alphabet = profile.AlphabetDecimal
	}
	return f
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// idFormatOf reads the format of several contactIds: a prefixed id whose
// tail happened to hold only digits is hex when another one's holds a
// letter; ids of different kinds are opaque.
func idFormatOf(ids []string) profile.IDFormat {
	f := classifyID(ids[0])
	for _, id := range ids[1:] {
		g := classifyID(id)
		switch {
		case g.Kind != f.Kind || g.Prefix != f.Prefix || g.Digits != f.Digits:
			return profile.IDFormat{Kind: profile.IDOpaque, Example: ids[0]}
		case g.Alphabet == profile.AlphabetHex:
			f.Alphabet = profile.AlphabetHex
		}
	}
	return f
}

// httpProbe learns the transport-level choices.
func (l *learner) http(ctx context.Context) error {
	x, err := l.send(ctx, l.req(requestFor("http.unknownPath"), Vars{}))
	if err != nil {
		return err
	}
	l.p.HTTP.UnknownPath = l.outcomeChoice(x, outcome(x))
	x, err = l.send(ctx, l.req(requestFor("http.otherMethod"), Vars{}))
	if err != nil {
		return err
	}
	l.p.HTTP.OtherMethod = profile.Choice[profile.MethodOutcome]{Value: profile.MethodOutcome{Outcome: outcome(x), Allow: x.header.Get("Allow")}, Evidence: l.evidences(x)}
	x, err = l.send(ctx, l.req(requestFor("http.requestContentType"), Vars{}))
	if err != nil {
		return err
	}
	l.p.HTTP.RequestContentType = l.outcomeChoice(x, outcome(x))
	// The body limit: a Campaign List body padded with spaces.
	var bl profile.BodyLimit
	var blEv []*exch
	for _, size := range profile.BodySizes {
		pad := max(size-len(listBody), 0)
		body := listBody[:len(listBody)-1] + strings.Repeat(" ", pad) + "}"
		x, err := l.send(ctx, req{path: spec.PathCampaignList, body: body})
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			// A target may hang up on a body it will not read.
			l.logf("learning the profile: a body of %d bytes: %v", size, err)
			bl.Refused = size
			break
		}
		blEv = append(blEv, x)
		if x.status == http.StatusOK {
			bl.Accepted = size
			continue
		}
		o := outcome(x)
		bl.Refused, bl.Refusal = size, &o
		break
	}
	l.p.HTTP.BodyLimit = profile.Choice[profile.BodyLimit]{Value: bl, Evidence: l.evidences(blEv...)}
	if bl.Accepted == 0 {
		l.p.HTTP.BodyLimit.Unknown = fmt.Sprintf("the smallest body probed (%d bytes) was refused", profile.BodySizes[0])
		l.p.HTTP.BodyLimit.Value = profile.BodyLimit{}
	}
	x, err = l.send(ctx, l.req(requestFor("http.gzip"), Vars{}))
	if err != nil {
		return err
	}
	if x.status == http.StatusOK {
		l.p.HTTP.Gzip = profile.Choice[bool]{Value: strings.EqualFold(x.header.Get("Content-Encoding"), "gzip"), Evidence: l.evidences(x)}
	} else {
		l.p.HTTP.Gzip = unknown[bool](fmt.Sprintf("the request accepting gzip was answered %d", x.status), l.evidence(x))
	}
	l.p.HTTP.HTTP2 = l.http2(ctx)
	// The answers of the operations: their Content-Type and added fields.
	var ok *exch
	fields := map[string][]profile.Field{}
	var sfEv []*exch
	for _, o := range spec.Operations() {
		op := o.Path
		for _, x := range l.exchanges() {
			if x.op != op || x.status != http.StatusOK || x.header.Get("Content-Encoding") != "" {
				continue
			}
			if ok == nil {
				ok = x
			}
			keys, vals, isObj := object(x.body)
			if !isObj {
				break
			}
			// Only operations that add fields: {} is a deployment that
			// adds none (default.json).
			if fs := extraFields(keys, vals, o.Response, x); len(fs) > 0 {
				fields[op] = fs
			}
			sfEv = append(sfEv, x)
			break
		}
	}
	if ok == nil {
		l.p.HTTP.ResponseContentType = unknown[string]("no probe was answered 200")
		l.p.HTTP.SuccessFields = unknown[map[string][]profile.Field]("no probe was answered 200")
		l.p.HTTP.RecordFields = unknown[map[string]map[string][]profile.Field]("no probe was answered 200")
		return nil
	}
	l.p.HTTP.ResponseContentType = profile.Choice[string]{Value: ok.header.Get("Content-Type"), Evidence: l.evidences(ok)}
	l.p.HTTP.SuccessFields = profile.Choice[map[string][]profile.Field]{Value: fields, Evidence: l.evidences(sfEv...)}
	l.p.HTTP.RecordFields = l.recordFields()
	return nil
}

func (l *learner) exchanges() []*exch {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.all)
}

// extraFields are the fields of a body beyond own, with their type and
// how their value is made.
func extraFields(keys []string, vals map[string]json.RawMessage, own []string, x *exch) []profile.Field {
	var out []profile.Field
	for _, k := range keys {
		if slices.Contains(own, k) {
			continue
		}
		out = append(out, fieldOf(k, vals[k], x))
	}
	return out
}

// fieldOf reads one field's type and format.
func fieldOf(name string, v json.RawMessage, x *exch) profile.Field {
	f := profile.Field{Name: name, Type: profile.JSONType(v)}
	switch f.Type {
	case "string":
		var s string
		_ = json.Unmarshal(v, &s)
		rid := x.header.Get("X-Request-Id")
		_, dtErr := time.Parse(time.RFC3339, s)
		switch {
		case rid != "" && s == rid:
			f.Format = profile.FormatEchoRequestID
		case uuidRE.MatchString(s):
			f.Format = profile.FormatUUID
		case dtErr == nil:
			f.Format = profile.FormatDateTime
		}
	case "integer":
		if n, err := strconv.Atoi(string(v)); err == nil && n == x.status {
			f.Format = profile.FormatStatus
		}
	}
	f = refineField(f, v, x)
	if f.Format == "" {
		f.Example = append(json.RawMessage(nil), v...)
	}
	return f
}

// specMessages are the messages §4 and §7 give.
var specMessages = []string{spec.MsgInvalidCredentials, spec.MsgUnauthorizedAccount, spec.MsgRateLimit,
	spec.MsgInternal, spec.MsgEmailOrPhoneRequired, spec.MsgCampaignIDRequired}

// messageField is the string field of an error body that holds its
// message: the one holding a message of the spec, else the first whose
// name looks like one (error, message, detail, title), else the first
// string field.
func messageField(keys []string, vals map[string]json.RawMessage) string {
	var strs []string
	for _, k := range keys {
		var s string
		if json.Unmarshal(vals[k], &s) == nil {
			if slices.Contains(specMessages, s) {
				return k
			}
			strs = append(strs, k)
		}
	}
	for _, k := range strs {
		lk := strings.ToLower(k)
		for _, w := range []string{"error", "message", "detail", "title", "msg"} {
			if strings.Contains(lk, w) {
				return k
			}
		}
	}
	if len(strs) > 0 {
		return strs[0]
	}
	return ""
}

// errorBodies reads the shape of every error status met but 429 (§7:
// "Body shape of the other error statuses: not shown").
func (l *learner) errorBodies() {
	bodies := map[string]profile.ErrorBody{}
	var ev []profile.Exchange
	var odd []string
	for _, x := range l.exemplars() {
		st := strconv.Itoa(x.status)
		if _, seen := bodies[st]; seen || slices.Contains(odd, st) {
			continue
		}
		keys, vals, ok := flatObject(x.body)
		mf := ""
		var pr *profile.Problems
		if ok {
			pr, keys = problemsOf(keys, vals, x)
			mf = messageField(keys, vals)
		}
		if mf == "" && pr == nil {
			odd = append(odd, st)
			ev = append(ev, l.evidence(x))
			continue
		}
		var own []string
		for _, k := range keys {
			if k != mf {
				own = append(own, k)
			}
		}
		b := profile.ErrorBody{MessageField: mf, ContentType: x.header.Get("Content-Type"), Problems: pr}
		for _, k := range own {
			b.Fields = append(b.Fields, fieldOf(k, vals[k], x))
		}
		bodies[st] = b
		ev = append(ev, l.evidence(x))
	}
	if len(odd) > 0 {
		l.logf("learning the profile: error statuses %s answered no JSON object with a string field; left out of errors.bodies", strings.Join(odd, ", "))
	}
	if len(bodies) == 0 {
		l.p.Errors.Bodies = unknown[map[string]profile.ErrorBody]("no error status but 429 was answered with a JSON object holding a message", ev...)
		return
	}
	l.p.Errors.Bodies = profile.Choice[map[string]profile.ErrorBody]{Value: bodies, Evidence: ev}
}

// pacedN is how many requests of each operation the paced latency sample
// sends at least; servedN how many 200 answers of each it tops the
// sample up to, counting the probes' (a p99 needs a few dozen: issue 28).
const (
	pacedN  = 5
	servedN = 40
)

// pacedSample sends a few requests of each operation at an even pace,
// within the budget (§8).
func (l *learner) pacedSample(ctx context.Context) error {
	// Even, and well within the budget (15 requests), but never a whole
	// window's worth of waiting: W/L, at most 100 ms.
	gap := min(l.env.RateWindow/time.Duration(max(l.env.RateLimit, 1)), 100*time.Millisecond)
	l.paced = map[string][]time.Duration{}
	// The probes' 200s count towards servedN: a walk of the list leaves
	// few to send, a contact none.
	served := map[string]int{}
	for _, x := range l.exchanges() {
		if x.op != "" && x.status == http.StatusOK && len(x.reqBody) < profile.BodySizes[0] {
			served[x.op]++
		}
	}
	rounds := pacedN
	for _, op := range spec.Operations() {
		rounds = max(rounds, servedN-served[op.Path])
	}
	for i := range rounds {
		for _, op := range spec.Operations() {
			if i >= pacedN && served[op.Path]+i >= servedN {
				continue
			}
			body, ok, err := l.pacedBody(op, i)
			if err != nil {
				return fmt.Errorf("paced sample: %w", err)
			}
			if !ok {
				continue
			}
			x, err := l.send(ctx, req{path: op.Path, body: body})
			if err != nil {
				return err
			}
			x.paced = true
			if x.status == http.StatusOK {
				l.paced[op.Path] = append(l.paced[op.Path], x.recv.Sub(x.sent))
			}
			if err := l.env.Pacer.Sleep(ctx, gap); err != nil {
				return err
			}
		}
	}
	return nil
}

// pacedBody is the body of the i-th request of op the paced sample sends,
// built by spec's table: a new contact by address alone, the page listBody
// asks for, the statistics of the account's campaigns in turn. It is false
// when the run has none to send: a read-only run sends no operation that
// writes, and one that needs a campaign has none without the account's.
func (l *learner) pacedBody(op spec.Operation, i int) (string, bool, error) {
	sample := spec.Sample{Limit: 1}
	if op.Writes {
		if l.env.ReadOnly {
			return "", false, nil
		}
		sample.Email = l.email()
	}
	if op.NeedsCampaign {
		if len(l.campaignIDs) == 0 {
			return "", false, nil
		}
		sample.CampaignID = int64(l.campaignIDs[i%len(l.campaignIDs)])
	}
	body, err := op.Body(sample)
	if err != nil {
		return "", false, err
	}
	return string(body), true, nil
}

// latency summarises how long each operation took to answer.
func (l *learner) latency() {
	probes, served := map[string][]time.Duration{}, map[string][]time.Duration{}
	for _, x := range l.exchanges() {
		// The body-limit probe's large bodies time the upload, not the
		// operation.
		if x.op == "" || x.status == http.StatusTooManyRequests || len(x.reqBody) >= profile.BodySizes[0] {
			continue
		}
		if !x.paced {
			probes[x.op] = append(probes[x.op], x.recv.Sub(x.sent))
		}
		if x.status == http.StatusOK {
			served[x.op] = append(served[x.op], x.recv.Sub(x.sent))
		}
	}
	ops := map[string]profile.OperationLatency{}
	for _, op := range spec.Paths() {
		if len(probes[op]) == 0 && len(l.paced[op]) == 0 {
			continue
		}
		ops[op] = profile.OperationLatency{Probes: sample(probes[op]), Paced: sample(l.paced[op]), Served: servedSample(served[op])}
	}
	if len(ops) == 0 {
		l.p.Latency.Operations = unknown[map[string]profile.OperationLatency]("no operation was answered")
		return
	}
	l.p.Latency.Operations = profile.Choice[map[string]profile.OperationLatency]{Value: ops}
}

// servedSample is sample(ds) with, below 100 answers, the 99th
// percentile of the log-normal fitted to ds (the mean and deviation of
// their logarithms) instead of the largest: the simulator plays a
// log-normal, and a few dozen answers hold no 99th percentile of their
// own. Never below the median.
func servedSample(ds []time.Duration) profile.Sample {
	s := sample(ds)
	if s.N < 2 || s.N >= 100 {
		return s
	}
	var sum, sq float64
	for _, d := range ds {
		v := math.Log(max(float64(d)/float64(time.Millisecond), 0.01))
		sum += v
		sq += v * v
	}
	n := float64(len(ds))
	mean := sum / n
	sd := math.Sqrt(max(sq/n-mean*mean, 0) * n / (n - 1))
	s.P99 = max(math.Round(math.Exp(mean+2.326*sd)*100)/100, s.Median)
	return s
}

// sample is the median and 99th percentile of ds, in milliseconds.
func sample(ds []time.Duration) profile.Sample {
	if len(ds) == 0 {
		return profile.Sample{}
	}
	ms := make([]float64, len(ds))
	for i, d := range ds {
		ms[i] = math.Round(float64(d)/float64(time.Millisecond)*100) / 100
	}
	sort.Float64s(ms)
	at := func(q float64) float64 { return ms[min(len(ms)-1, int(math.Ceil(q*float64(len(ms))))-1)] }
	med := ms[len(ms)/2]
	if len(ms)%2 == 0 {
		med = math.Round((ms[len(ms)/2-1]+ms[len(ms)/2])/2*100) / 100
	}
	return profile.Sample{N: len(ms), Median: med, P99: max(at(0.99), med)}
}
