package server

import (
	"fmt"
	"net/http"

	"github.com/partner-v3/conformance-kit/simulator"
)

// MaxPageSize is spec §4.2 and §8: limit is at most 50.
const MaxPageSize = 50

type campaignListResponse struct {
	PageNo          int                        `json:"pageNo"`
	PageSize        int                        `json:"pageSize"`
	TotalPages      int                        `json:"totalPages"`
	TotalRecords    int                        `json:"totalRecords"`
	FilteredRecords int                        `json:"filteredRecords"`
	Campaigns       []simulator.CampaignRecord `json:"campaigns"`
}

// handleCampaignList is Campaign List (spec §4.2). ASSUMPTIONS (not shown
// in the spec): limit and page missing, not integers or out of range answer
// 400 naming the field; a page past the last answers 200 with no
// campaigns; there are no filters, so filteredRecords equals totalRecords;
// campaigns come in Id order, deleted ones (active 0) included.
func (s *Server) handleCampaignList(w http.ResponseWriter, r *http.Request) {
	f, err := readFields(r)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	limit, page, err := decodeCampaignList(f)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	account := simulator.AccountFromContext(r.Context())
	filter := simulator.CampaignFilter{AccountID: account.AccountID, Offset: (page - 1) * limit, Limit: limit}
	cs, total, err := s.Campaigns.FindCampaigns(r.Context(), filter)
	if err != nil {
		s.Error(w, r, fmt.Errorf("find campaigns: %w", err))
		return
	}
	resp := &campaignListResponse{
		PageNo:          page,
		PageSize:        limit,
		TotalPages:      totalPages(total, limit),
		TotalRecords:    total,
		FilteredRecords: total,
		Campaigns:       make([]simulator.CampaignRecord, 0, len(cs)),
	}
	for _, c := range cs {
		resp.Campaigns = append(resp.Campaigns, c.CampaignRecord)
	}
	writeJSON(w, http.StatusOK, resp)
}

// totalPages is ceil(total/limit): the last page may be partial.
func totalPages(total, limit int) int {
	return (total + limit - 1) / limit
}

func decodeCampaignList(f fields) (limit, page int, err error) {
	if err := f.only("limit", "page"); err != nil {
		return 0, 0, err
	}
	l, ok, err := f.integer("limit")
	switch {
	case err != nil:
		return 0, 0, err
	case !ok:
		return 0, 0, simulator.Errorf(simulator.EINVALID, "limit is required")
	case l < 1 || l > MaxPageSize:
		return 0, 0, simulator.Errorf(simulator.EINVALID, "limit must be between 1 and %d", MaxPageSize)
	}
	p, ok, err := f.integer("page")
	switch {
	case err != nil:
		return 0, 0, err
	case !ok:
		return 0, 0, simulator.Errorf(simulator.EINVALID, "page is required")
	case p < 1:
		return 0, 0, simulator.Errorf(simulator.EINVALID, "page must be 1 or greater")
	case p > 1<<31:
		p = 1 << 31 // keeps page*limit in range; such a page is empty anyway
	}
	return int(l), int(p), nil
}

// handleCampaignStats is Campaign Stats (spec §4.3). ASSUMPTION (not shown):
// an Id the account does not own answers 404 "Campaign not found", the same
// whether another account owns it or nobody does, so nothing leaks across
// accounts. Both objects always carry every key of §2.3; the channel the
// campaign does not use has zero counts.
func (s *Server) handleCampaignStats(w http.ResponseWriter, r *http.Request) {
	f, err := readFields(r)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	// Spec §4.3 first: a body without campaignId gets the spec's message,
	// whatever else it holds.
	if !f.present("campaignId") {
		s.Error(w, r, &simulator.Error{Code: simulator.EINVALID, Message: simulator.MsgCampaignIDRequired})
		return
	}
	if err := f.only("campaignId"); err != nil {
		s.Error(w, r, err)
		return
	}
	id, _, err := f.integer("campaignId")
	if err != nil {
		s.Error(w, r, err)
		return
	}
	account := simulator.AccountFromContext(r.Context())
	c, err := s.Campaigns.FindCampaignByID(r.Context(), account.AccountID, id)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, c.Stats)
}
