package partnerapi

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/httpjson"
)

// The Campaign List answer (spec §4.2) is built from the campaigns'
// pre-encoded records (simulator.Campaign.Encode), not encoded per request:
// the same bytes encoding/json would write for
//
//	struct {
//		PageNo          int                        `json:"pageNo"`
//		PageSize        int                        `json:"pageSize"`
//		TotalPages      int                        `json:"totalPages"`
//		TotalRecords    int                        `json:"totalRecords"`
//		FilteredRecords int                        `json:"filteredRecords"`
//		Campaigns       []simulator.CampaignRecord `json:"campaigns"`
//	}
//
// followed by a newline, as json.Encoder ends a value (the golden files of
// simulator/sim hold those bytes).

// appendCampaignPage appends the Campaign List answer for page of limit,
// with filteredRecords apart from totalRecords (campaignList.filtered
// "active"): the pages walk over the filtered records.
func appendCampaignPage(dst []byte, page, limit, total, filtered int, cs []*simulator.Campaign) ([]byte, error) {
	dst = append(dst, `{"pageNo":`...)
	dst = strconv.AppendInt(dst, int64(page), 10)
	dst = append(dst, `,"pageSize":`...)
	dst = strconv.AppendInt(dst, int64(limit), 10)
	dst = append(dst, `,"totalPages":`...)
	dst = strconv.AppendInt(dst, int64(totalPages(filtered, limit)), 10)
	dst = append(dst, `,"totalRecords":`...)
	dst = strconv.AppendInt(dst, int64(total), 10)
	dst = append(dst, `,"filteredRecords":`...)
	dst = strconv.AppendInt(dst, int64(filtered), 10)
	dst = append(dst, `,"campaigns":[`...)
	for i, c := range cs {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = c.AppendRecordJSON(dst); err != nil {
			return dst, err
		}
	}
	return append(dst, "]}\n"...), nil
}

// handleCampaignList is Campaign List (spec §4.2), under the profile's
// campaignList choices (decodeCampaignList, listPage). default.json's:
// limit and page missing, not integers or out of range answer 400 naming
// the field; a page past the last answers 200 with no campaigns; there
// are no filters, so filteredRecords equals totalRecords; campaigns come
// in Id order, deleted ones (active 0) included.
func (s *API) handleCampaignList(w http.ResponseWriter, r *http.Request) {
	f, err := s.readFields(r)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	pl := s.play(r)
	limit, page, err := pl.decodeCampaignList(f)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	account := simulator.AccountFromContext(r.Context())
	cs, answered, total, filtered, err := s.listPage(r.Context(), pl, account.AccountID, page, limit)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	// Spec §4.2: pages end at totalPages. ASSUMPTION: with no campaign at
	// all (totalPages 0), page 1 is the natural first request, not past it.
	if page > max(totalPages(filtered, limit), 1) {
		noteFinding(r, simulator.FindingPagePastEnd, "")
	}
	buf := httpjson.GetBuffer()
	defer httpjson.PutBuffer(buf)
	if *buf, err = appendCampaignPage((*buf)[:0], answered, limit, total, filtered, cs); err != nil {
		s.Error(w, r, fmt.Errorf("encode campaign list: %w", err))
		return
	}
	httpjson.WriteBody(w, http.StatusOK, *buf)
}

// totalPages is ceil(total/limit): the last page may be partial.
func totalPages(total, limit int) int {
	return (total + limit - 1) / limit
}

// maxPage is the largest page answered: 2^53-1, the largest integer that
// JSON numbers carry exactly between implementations (RFC 8259 §6; I-JSON,
// RFC 7493 §2.2), so that pageNo always echoes the page asked for, and
// (page-1)*limit stays far inside int64. ASSUMPTION (spec §4.2, §8 give
// only the minimum): a page above it is refused with a 400 naming it.
const maxPage = 1<<53 - 1

// handleCampaignStats is Campaign Stats (spec §4.3), under the profile's
// campaignStats choices. default.json's (not shown in the spec): an Id
// the account does not own answers 404 "Campaign not found", the same
// whether another account owns it or nobody does, so nothing leaks across
// accounts. Both objects always carry every key of §2.3; the channel the
// campaign does not use has zero counts.
func (s *API) handleCampaignStats(w http.ResponseWriter, r *http.Request) {
	f, err := s.readFields(r)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	pl := s.play(r)
	id, err := pl.statsID(f)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	account := simulator.AccountFromContext(r.Context())
	c, err := s.Campaigns.FindCampaignByID(r.Context(), account.AccountID, id)
	if err != nil && simulator.ErrorCode(err) == simulator.ENOTFOUND { // ErrorCode allocates: not for a hit
		// campaignStats.unknown (§4.3: "Response for an unknown
		// campaignId: not shown").
		if o := pl.stats.Unknown.Value; !o.Accepted() {
			s.Error(w, r, withFinding(simulator.FindingUnknownCampaign, "", refuse(o, fieldRequest("campaignId"))))
			return
		}
		httpjson.WriteBody(w, http.StatusOK, zeroStats)
		return
	}
	if err != nil {
		s.Error(w, r, err)
		return
	}
	buf := httpjson.GetBuffer()
	defer httpjson.PutBuffer(buf)
	if *buf, err = c.AppendStatsJSON((*buf)[:0]); err != nil {
		s.Error(w, r, fmt.Errorf("encode campaign statistics: %w", err))
		return
	}
	// json.Encoder's newline, as every other answer ends.
	*buf = append(*buf, '\n')
	httpjson.WriteBody(w, http.StatusOK, *buf)
}
