package partnerapi

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// decodeCampaignList is Campaign List's body under the profile's
// campaignList choices (§4.2: "Response when limit is above 50, page is
// below 1, or a field is missing: not shown"): limit, then page, each
// missing, not an integer or out of range answered as its choice says
// (refused with its message, or served with the page size or page it
// names), after the fields §4.2 does not list (extraField).
func (pl *play) decodeCampaignList(f fields) (limit, page int, err error) {
	if f, err = pl.extraFields(f, pl.list.ExtraField.Value, "limit", "page"); err != nil {
		return 0, 0, err
	}
	l, err := pl.listNumber(f, "limit", func(v int64) (*profile.Outcome, int64, string, string) {
		switch {
		case v > spec.MaxPageSize:
			return &pl.list.LimitAboveMax.Value, spec.MaxPageSize, simulator.FindingPageSizeOverMax, ""
		case v < 1:
			return &pl.list.LimitBelowOne.Value, 1, simulator.FindingInvalidField, "limit"
		}
		return nil, v, "", ""
	}, &pl.list.LimitMissing.Value, 10)
	if err != nil {
		return 0, 0, err
	}
	p, err := pl.listNumber(f, "page", func(v int64) (*profile.Outcome, int64, string, string) {
		if v < spec.MinPage {
			return &pl.list.PageBelowOne.Value, spec.MinPage, simulator.FindingPageBelowOne, ""
		}
		return nil, v, "", ""
	}, &pl.list.PageMissing.Value, spec.MinPage)
	if err != nil {
		return 0, 0, err
	}
	if p > maxPage {
		// Never answered as another page than asked (pageNo echoes it).
		return 0, 0, invalidField("page", "page must be at most %d", maxPage)
	}
	return int(l), int(p), nil
}

// extraFields plays an operation's extraField choice o on the fields of f
// outside allowed: refused naming them all (the client report counts an
// unknown field), or ignored (f without them).
func (pl *play) extraFields(f fields, o profile.Outcome, allowed ...string) (fields, error) {
	var extra []string
	for _, fv := range f {
		if !containsName(allowed, fv.Name) {
			extra = append(extra, string(fv.Name))
		}
	}
	if len(extra) == 0 {
		return f, nil
	}
	if !o.Accepted() {
		return nil, withFinding(simulator.FindingUnknownField, "", refuse(o, fieldRequest(extra...)))
	}
	kept := make(fields, 0, len(allowed))
	for _, fv := range f {
		if containsName(allowed, fv.Name) {
			kept = append(kept, fv)
		}
	}
	return kept, nil
}

// listNumber reads limit or page under the profile: missing, sent as a
// numeric string (wrongType) or out of range (the case check names, with
// the value a clamp serves and the client report's finding) are refused
// with the choice's outcome, or accepted with the value its PageSize
// (limit) or PageNo (page) says, else the clamp's (missingValue when
// missing). ASSUMPTION: an accepted missing limit is 10 when the profile
// does not say, a page 1.
func (pl *play) listNumber(f fields, name string, check func(int64) (o *profile.Outcome, clamped int64, finding, detail string), missing *profile.Outcome, missingValue int64) (int64, error) {
	played := func(o *profile.Outcome, fallback int64, finding, detail string) (int64, error) {
		if !o.Accepted() {
			return 0, withFinding(finding, detail, refuse(*o, fieldRequest(name)))
		}
		v := int64(o.PageSize)
		if name == "page" {
			v = int64(o.PageNo)
		}
		if v <= 0 {
			return fallback, nil
		}
		return v, nil
	}
	if !f.Present(name) {
		if f.Has(name) { // null: campaignList.null's reading
			v, isMissing, err := nullOf(pl.listNull, pl.list.Null.Value, pl.list.NotInteger.Value, name, missingValue)
			if !isMissing {
				return v, err
			}
		}
		return played(missing, missingValue, simulator.FindingInvalidField, name)
	}
	v, err := pl.typedInteger(f, name, pl.list.WrongType.Value, pl.list.NotInteger.Value, missingValue)
	if err != nil {
		return 0, err
	}
	o, clamped, finding, detail := check(v)
	if o == nil {
		return v, nil
	}
	return played(o, clamped, finding, detail)
}

// listPage is one page under the profile's pastLast, filtered and order:
// the campaigns, the page answered, totalRecords and filteredRecords.
// "active" leaves deleted campaigns (active 0) out of the pages and of
// filteredRecords, totalRecords still counts them; "id-desc" serves the
// newest Id first; "other" orders by campaignName, then Id (any stable
// order the spec allows: §4.2 shows no sorting).
func (s *API) listPage(ctx context.Context, pl *play, accountID string, page, limit int) (cs []*simulator.Campaign, answered, total, filtered int, err error) {
	l := pl.list
	if l.Filtered.Value == profile.FilteredAll && l.Order.Value == profile.OrderIDAsc {
		cs, total, err = s.Campaigns.FindCampaigns(ctx, simulator.CampaignFilter{AccountID: accountID, Offset: (page - 1) * limit, Limit: limit})
		if err != nil {
			return nil, 0, 0, 0, fmt.Errorf("find campaigns: %w", err)
		}
		if last := max(totalPages(total, limit), 1); page > last {
			if p, err := pl.pastLast(page, last); err != nil || p == page {
				return nil, p, total, total, err
			}
			return s.listPage(ctx, pl, accountID, last, limit)
		}
		return cs, page, total, total, nil
	}
	all, total, err := s.Campaigns.FindCampaigns(ctx, simulator.CampaignFilter{AccountID: accountID})
	if err != nil {
		return nil, 0, 0, 0, fmt.Errorf("find campaigns: %w", err)
	}
	kept := all
	if l.Filtered.Value == profile.FilteredActive {
		kept = make([]*simulator.Campaign, 0, len(all))
		for _, c := range all {
			if c.Active != 0 {
				kept = append(kept, c)
			}
		}
	} else {
		kept = slices.Clone(all)
	}
	switch l.Order.Value {
	case profile.OrderIDDesc:
		slices.SortStableFunc(kept, func(a, b *simulator.Campaign) int { return cmp.Compare(b.ID, a.ID) })
	case profile.OrderOther:
		slices.SortStableFunc(kept, func(a, b *simulator.Campaign) int {
			return cmp.Or(cmp.Compare(a.CampaignName, b.CampaignName), cmp.Compare(a.ID, b.ID))
		})
	}
	filtered = len(kept)
	if last := max(totalPages(filtered, limit), 1); page > last {
		p, err := pl.pastLast(page, last)
		if err != nil || p == page {
			return nil, p, total, filtered, err
		}
		page = p
	}
	lo := min((page-1)*limit, filtered)
	return kept[lo:min(lo+limit, filtered)], page, total, filtered, nil
}

// pastLast is the page answered for page past last (campaignList.pastLast):
// page itself (no campaigns), last (its campaigns), or a refusal.
func (pl *play) pastLast(page, last int) (int, error) {
	o := pl.list.PastLast.Value
	switch {
	case !o.Accepted():
		return page, refuse(o.Outcome, fieldRequest("page"))
	case o.Echo:
		return page, nil
	}
	return last, nil
}

// statsID reads Campaign Stats' campaignId under the profile's
// campaignStats choices (null, extraField, numericString, notInteger).
func (pl *play) statsID(f fields) (int64, error) {
	// Spec §4.3 first: a body without campaignId gets the spec's message,
	// whatever else it holds.
	// A null campaignId is missing, a wrong type or its own answer as the
	// profile's campaignStats.null reads it (wrongtype.go).
	if !f.Present("campaignId") {
		if f.Has("campaignId") {
			if v, isMissing, err := nullOf(pl.statsNull, pl.stats.Null.Value, pl.stats.NotInteger.Value, "campaignId", 0); !isMissing {
				return v, err
			}
		}
		return 0, withFinding(simulator.FindingInvalidField, "campaignId",
			&simulator.Error{Code: simulator.EINVALID, Message: spec.MsgCampaignIDRequired})
	}
	f, err := pl.extraFields(f, pl.stats.ExtraField.Value, "campaignId")
	if err != nil {
		return 0, err
	}
	return pl.typedInteger(f, "campaignId", pl.stats.NumericString.Value, pl.stats.NotInteger.Value, 0)
}

// zeroStats is Campaign Stats' 200 for an unknown campaignId under a
// profile that answers it so (campaignStats.unknown): every §2.3 key, zero.
var zeroStats = func() []byte {
	b, err := json.Marshal(&simulator.CampaignStats{})
	if err != nil {
		panic(fmt.Sprintf("encode zero statistics: %v", err))
	}
	return append(b, '\n')
}()
