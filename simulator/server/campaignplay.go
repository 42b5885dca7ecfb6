package server

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/profile"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// decodeCampaignList is Campaign List's body under the profile's
// campaignList choices (§4.2: "Response when limit is above 50, page is
// below 1, or a field is missing: not shown"). A choice equal to the
// default's answers as today (decodeCampaignList, whose messages name the
// value at hand).
func (pl *play) decodeCampaignList(f fields) (limit, page int, err error) {
	if pl.listPlain {
		return decodeCampaignList(f)
	}
	for k := range f {
		if k == "limit" || k == "page" {
			continue
		}
		o := pl.list.ExtraField.Value
		if pl.listDefault["extraField"] {
			return 0, 0, f.only("limit", "page")
		}
		if !o.Accepted() {
			return 0, 0, refuse(o, k)
		}
		// Accepted: the extra fields are ignored.
		f = fields{"limit": f["limit"], "page": f["page"]}
		for _, n := range []string{"limit", "page"} {
			if f[n] == nil {
				delete(f, n)
			}
		}
		break
	}
	l, err := pl.listNumber(f, "limit", func(v int64) (string, int64) {
		switch {
		case v > spec.MaxPageSize:
			return "limitAboveMax", spec.MaxPageSize
		case v < 1:
			return "limitBelowOne", 1
		}
		return "", v
	}, "limitMissing", 10)
	if err != nil {
		return 0, 0, err
	}
	p, err := pl.listNumber(f, "page", func(v int64) (string, int64) {
		if v < spec.MinPage {
			return "pageBelowOne", spec.MinPage
		}
		return "", v
	}, "pageMissing", spec.MinPage)
	if err != nil {
		return 0, 0, err
	}
	if p > maxPage {
		return 0, 0, invalidField("page", "page must be at most %d", maxPage)
	}
	return int(l), int(p), nil
}

// listNumber reads limit or page under the profile: missing, sent as a
// numeric string (wrongType) or out of range (the case check names) are
// refused with the profile's outcome, or accepted with the value its
// PageSize (limit) or PageNo (page) says, else fallback's. ASSUMPTION: an
// accepted missing limit is 10 when the profile does not say, a page 1.
func (pl *play) listNumber(f fields, name string, check func(int64) (string, int64), missing string, missingValue int64) (int64, error) {
	used := func(o profile.Outcome, fallback int64) int64 {
		v := int64(o.PageSize)
		if name == "page" {
			v = int64(o.PageNo)
		}
		if v <= 0 {
			return fallback
		}
		return v
	}
	// play answers key's case when the profile's choice is not the
	// default's (ok), else leaves it to today's words.
	play := func(key string, fallback int64) (v int64, ok bool, err error) {
		if pl.listDefault[key] {
			return 0, false, nil
		}
		o := pl.listOutcomes[key]
		if !o.Accepted() {
			return 0, true, refuse(o, name)
		}
		return used(o, fallback), true, nil
	}
	if !f.present(name) {
		if v, ok, err := play(missing, missingValue); ok {
			return v, err
		}
		return 0, invalidField(name, "%s is required", name)
	}
	v, err := pl.listInteger(f, name)
	if err != nil {
		return 0, err
	}
	key, clamped := check(v)
	if key == "" {
		return v, nil
	}
	if w, ok, err := play(key, clamped); ok {
		return w, err
	}
	// The default's answer, today's words.
	if name == "limit" {
		if key == "limitAboveMax" {
			return 0, withFinding(simulator.FindingPageSizeOverMax, "",
				simulator.Errorf(simulator.EINVALID, "limit must be between 1 and %d", spec.MaxPageSize))
		}
		return 0, invalidField("limit", "limit must be between 1 and %d", spec.MaxPageSize)
	}
	return 0, withFinding(simulator.FindingPageBelowOne, "", simulator.Errorf(simulator.EINVALID, "page must be %d or greater", spec.MinPage))
}

// listInteger reads limit or page as an integer: a numeric string
// (campaignList.wrongType) is refused with the profile's outcome, or read
// as its integer when the profile accepts it.
func (pl *play) listInteger(f fields, name string) (int64, error) {
	if raw := string(f[name]); len(raw) > 2 && raw[0] == '"' && !pl.listDefault["wrongType"] {
		if n, err := strconv.ParseInt(raw[1:len(raw)-1], 10, 64); err == nil {
			if o := pl.list.WrongType.Value; !o.Accepted() {
				return 0, refuse(o, name)
			}
			return n, nil
		}
	}
	v, _, err := f.integer(name)
	return v, err
}

// listPage is one page under the profile's pastLast, filtered and order:
// the campaigns, the page answered, totalRecords and filteredRecords.
// "active" leaves deleted campaigns (active 0) out of the pages and of
// filteredRecords, totalRecords still counts them; "id-desc" serves the
// newest Id first; "other" orders by campaignName, then Id (any stable
// order the spec allows: §4.2 shows no sorting).
func (s *Server) listPage(ctx context.Context, pl *play, accountID string, page, limit int) (cs []*simulator.Campaign, answered, total, filtered int, err error) {
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
		return page, refuse(o.Outcome, "page")
	case o.Echo:
		return page, nil
	}
	return last, nil
}

// statsID reads Campaign Stats' campaignId under the profile's
// campaignStats choices (numericString, extraField); today's answers where
// they are the default's.
func (pl *play) statsID(f fields) (int64, error) {
	// Spec §4.3 first: a body without campaignId gets the spec's message,
	// whatever else it holds.
	if !f.present("campaignId") {
		return 0, withFinding(simulator.FindingInvalidField, "campaignId",
			&simulator.Error{Code: simulator.EINVALID, Message: spec.MsgCampaignIDRequired})
	}
	if len(f) > 1 {
		if pl.statsPlain["extraField"] {
			if err := f.only("campaignId"); err != nil {
				return 0, err
			}
		} else if o := pl.stats.ExtraField.Value; !o.Accepted() {
			for k := range f {
				if k != "campaignId" {
					return 0, refuse(o, k)
				}
			}
		}
	}
	if raw := string(f["campaignId"]); !pl.statsPlain["numericString"] && len(raw) > 2 && raw[0] == '"' {
		if n, err := strconv.ParseInt(raw[1:len(raw)-1], 10, 64); err == nil {
			if o := pl.stats.NumericString.Value; !o.Accepted() {
				return 0, refuse(o, "campaignId")
			}
			return n, nil
		}
	}
	id, _, err := f.integer("campaignId")
	return id, err
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
