package partnerapi

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// encodedCampaign is a campaign whose name needs escaping the way
// encoding/json escapes (HTML characters, a quote, a control character and
// non-ASCII), pre-encoded or not.
func encodedCampaign(t *testing.T, id int64, encode bool) *simulator.Campaign {
	t.Helper()
	ts := simulator.Timestamp{Time: time.Date(2026, 2, 3, 4, 5, 6, 7e6, time.UTC)}
	reason := "paused <by> \"partner\" & co\u2028"
	c := &simulator.Campaign{AccountID: "acc", CampaignRecord: simulator.CampaignRecord{
		ID: id, CampaignName: "Spring <sale> & \"more\"\t für alle", CampaignChannel: spec.ChannelSMS,
		Status: "Sent", StatusColor: "#1A2B3C", Active: 1, ScheduledOn: ts, ScheduledTimeZone: "IST",
		Offset: "+05:30", BroadcastOn: ts, Broadcast: 1, CreatedAt: ts, UpdatedAt: ts, Reason: &reason,
	}, Stats: simulator.CampaignStats{SMSStat: simulator.SMSStat{Sent: 9, Delivered: 7, Failed: 1}}}
	if encode {
		if err := c.Encode(); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// TestAppendCampaignList_SameBytesAsEncodingJSON holds the page built from
// pre-encoded pieces to the bytes json.Encoder writes for the spec §4.2
// answer: clients (and the violation layer, which edits answers byte by
// byte) see no difference.
func TestAppendCampaignList_SameBytesAsEncodingJSON(t *testing.T) {
	type listResponse struct {
		PageNo          int                        `json:"pageNo"`
		PageSize        int                        `json:"pageSize"`
		TotalPages      int                        `json:"totalPages"`
		TotalRecords    int                        `json:"totalRecords"`
		FilteredRecords int                        `json:"filteredRecords"`
		Campaigns       []simulator.CampaignRecord `json:"campaigns"`
	}
	tests := []struct {
		name               string
		page, limit, total int
		campaigns          []*simulator.Campaign
	}{
		{"an empty page answers an empty array", 3, 50, 0, nil},
		{"one pre-encoded campaign", 1, 1, 1, []*simulator.Campaign{encodedCampaign(t, 1, true)}},
		{"a campaign never encoded is encoded on the spot", 2, 2, 3, []*simulator.Campaign{encodedCampaign(t, 2, false), encodedCampaign(t, 3, true)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := appendCampaignPage(nil, tt.page, tt.limit, tt.total, tt.total, tt.campaigns)
			if err != nil {
				t.Fatal(err)
			}
			want := listResponse{PageNo: tt.page, PageSize: tt.limit, TotalPages: totalPages(tt.total, tt.limit),
				TotalRecords: tt.total, FilteredRecords: tt.total, Campaigns: []simulator.CampaignRecord{}}
			for _, c := range tt.campaigns {
				want.Campaigns = append(want.Campaigns, c.CampaignRecord)
			}
			var buf bytes.Buffer
			if err := json.NewEncoder(&buf).Encode(want); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, buf.Bytes()) {
				t.Errorf("page =\n%s\nwant\n%s", got, buf.Bytes())
			}
		})
	}
}

// TestAppendStatsJSON_SameBytesAsEncodingJSON does the same for the spec
// §4.3 answer.
func TestAppendStatsJSON_SameBytesAsEncodingJSON(t *testing.T) {
	for _, encode := range []bool{true, false} {
		c := encodedCampaign(t, 1, encode)
		got, err := c.AppendStatsJSON(nil)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(c.Stats)
		if !bytes.Equal(got, want) {
			t.Errorf("encoded=%v: stats = %s, want %s", encode, got, want)
		}
	}
}

// TestWriteContactAdded_SameBytesAsEncodingJSON holds the hand-written
// spec §4.1 answer to json.Encoder's, for identifiers that need escaping
// too.
func TestWriteContactAdded_SameBytesAsEncodingJSON(t *testing.T) {
	for _, id := range []string{ownPlay.newContactID(), "ct_plain-ID_09", `ct_"quoted"<&>`, "ct_ü\u2028", ""} {
		w := httptest.NewRecorder()
		writeContactAdded(w, id)
		var enc bytes.Buffer
		if err := json.NewEncoder(&enc).Encode(&contactAddResponse{Status: "success", ContactID: id}); err != nil {
			t.Fatal(err)
		}
		if got, want := w.Body.Bytes(), enc.Bytes(); !bytes.Equal(got, want) {
			t.Errorf("id %q: body = %s, want %s", id, got, want)
		}
		if got, want := w.Header().Get("Content-Type"), "application/json"; got != want {
			t.Errorf("Content-Type = %q, want %q", got, want)
		}
		if got, want := w.Header().Get("Content-Length"), strconv.Itoa(enc.Len()); got != want {
			t.Errorf("Content-Length = %q, want %q", got, want)
		}
	}
}
