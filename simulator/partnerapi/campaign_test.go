package partnerapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/gavv/httpexpect/v2"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/sim"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

var campaignKeys = []any{"Id", "campaignName", "campaignType", "campaignChannel", "status", "statusColor", "active",
	"scheduledOn", "scheduledTimeZone", "offset", "autoResend", "broadcastOn", "broadcast", "createdAt", "updatedAt", "reason"}

var tsRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`)

// TestCampaignList_Pages walks every page at several page sizes (spec
// §4.2): the envelope is consistent, pages never overlap, and together they
// hold every campaign once, in Id order.
func TestCampaignList_Pages(t *testing.T) {
	h := MustOpenServer(t, sim.Config{CampaignsPerAccount: 73})
	for _, limit := range []int{1, 7, 10, spec.MaxPageSize} {
		seen := map[int64]bool{}
		var last int64
		want := (73 + limit - 1) / limit
		for page := 1; page <= want; page++ {
			obj := h.as(h.alpha).POST("/campaign/list").WithJSON(map[string]int{"limit": limit, "page": page}).
				Expect().Status(http.StatusOK).HasContentType("application/json").JSON().Object()
			obj.Keys().ContainsOnly("pageNo", "pageSize", "totalPages", "totalRecords", "filteredRecords", "campaigns")
			obj.Value("pageNo").IsEqual(page)
			obj.Value("pageSize").IsEqual(limit)
			obj.Value("totalPages").IsEqual(want)
			obj.Value("totalRecords").IsEqual(73)
			obj.Value("filteredRecords").IsEqual(73)
			cs := obj.Value("campaigns").Array()
			if page < want {
				cs.Length().IsEqual(limit)
			} else {
				cs.Length().IsEqual(73 - (want-1)*limit)
			}
			for _, v := range cs.Iter() {
				c := v.Object()
				c.Keys().ContainsOnly(campaignKeys...)
				id := int64(c.Value("Id").Number().IsInt().Raw())
				if seen[id] {
					t.Fatalf("limit %d: campaign %d on two pages", limit, id)
				}
				if id <= last {
					t.Fatalf("limit %d: campaign %d after %d: not in Id order", limit, id, last)
				}
				seen[id], last = true, id
				for _, k := range []string{"scheduledOn", "broadcastOn", "createdAt", "updatedAt"} {
					c.Value(k).String().Match(tsRE.String())
				}
				c.Value("offset").String().Match(`^[+-]\d{2}:\d{2}$`)
				c.Value("statusColor").String().Match(`^#[0-9A-Fa-f]{6}$`)
				c.Value("campaignChannel").String().InList("email", "sms")
				c.Value("campaignType").Number().InList(0, 1)
				c.Value("active").Number().InList(0, 1)
			}
		}
		if len(seen) != 73 {
			t.Fatalf("limit %d: %d distinct campaigns over all pages, want 73", limit, len(seen))
		}
	}
}

func TestCampaignList_PastTheEnd(t *testing.T) {
	h := MustOpenServer(t, sim.Config{CampaignsPerAccount: 73})
	for _, page := range []int{9, 1000, 1 << 40, 1<<53 - 1} {
		resp := h.as(h.alpha).POST("/campaign/list").WithJSON(map[string]int{"limit": 50, "page": page}).
			Expect().Status(http.StatusOK)
		// pageNo is the page asked for, never another (read as bytes: no
		// float64 on the way).
		if want := fmt.Sprintf(`{"pageNo":%d,`, page); !strings.HasPrefix(resp.Body().Raw(), want) {
			t.Fatalf("page %d answered %.60s", page, resp.Body().Raw())
		}
		obj := resp.JSON().Object()
		obj.Value("campaigns").Array().IsEmpty()
		obj.Value("totalPages").IsEqual(2)
	}
	expectError(h.as(h.alpha).POST("/campaign/list").WithBytes([]byte(`{"limit":1,"page":9007199254740992}`)).
		WithHeader("Content-Type", "application/json").Expect(), http.StatusBadRequest, "page must be at most 9007199254740991")
}

// TestIntegers_AsTheOpenAPIDocumentSays: every integer field takes a JSON
// number whose value is an integer (JSON Schema 2020-12, which the OpenAPI
// document's `type: integer` follows): 2.0 is 2, 5e0 is 5.
func TestIntegers_AsTheOpenAPIDocumentSays(t *testing.T) {
	h := MustOpenServer(t, sim.Config{CampaignsPerAccount: 73})
	post := func(path, body string) *httpexpect.Response {
		return h.as(h.alpha).POST(path).WithBytes([]byte(body)).WithHeader("Content-Type", "application/json").Expect()
	}
	obj := post("/campaign/list", `{"limit":5e0,"page":2.0}`).Status(http.StatusOK).JSON().Object()
	obj.Value("pageNo").IsEqual(2)
	obj.Value("pageSize").IsEqual(5)
	obj.Value("campaigns").Array().Length().IsEqual(5)
	id := obj.Value("campaigns").Array().Value(0).Object().Value("Id").Number().Raw()
	post("/campaign/stats", fmt.Sprintf(`{"campaignId":%d.0}`, int64(id))).Status(http.StatusOK).
		JSON().Object().Keys().ContainsOnly("emailStat", "smsStat")
	post("/contact/add", `{"email":"ints@example.com","emailOptStatus":1.0,"smsOptStatus":0e0}`).Status(http.StatusOK)
	c := h.admin().GET("/contacts").WithQuery("accountId", h.alpha.AccountID).Expect().
		Status(http.StatusOK).JSON().Object().Value("contacts").Array().Value(0).Object()
	c.Value("emailOptStatus").IsEqual(1)
	c.Value("smsOptStatus").IsEqual(0)
}

func TestCampaignList_EmptyAccount(t *testing.T) {
	h := MustOpenServer(t, sim.Config{CampaignsPerAccount: -1})
	obj := h.as(h.alpha).POST("/campaign/list").WithJSON(map[string]int{"limit": 10, "page": 1}).
		Expect().Status(http.StatusOK).JSON().Object()
	obj.Value("campaigns").Array().IsEmpty()
	obj.Value("totalPages").IsEqual(0)
	obj.Value("totalRecords").IsEqual(0)
}

// TestCampaignList_Refused covers the documented answers where spec §4.2
// says "not shown": a 400 that names the field.
func TestCampaignList_Refused(t *testing.T) {
	h := MustOpenServer(t, sim.Config{})
	tests := []struct{ name, body, want string }{
		{"limit above 50", `{"limit":51,"page":1}`, "limit must be between 1 and 50"},
		{"limit 0", `{"limit":0,"page":1}`, "limit must be between 1 and 50"},
		{"negative limit", `{"limit":-5,"page":1}`, "limit must be between 1 and 50"},
		{"page 0", `{"limit":10,"page":0}`, "page must be 1 or greater"},
		{"limit missing", `{"page":1}`, "limit is required"},
		{"page missing", `{"limit":10}`, "page is required"},
		{"limit null", `{"limit":null,"page":1}`, "limit is required"},
		{"limit as string", `{"limit":"10","page":1}`, "limit must be an integer"},
		{"page as fraction", `{"limit":10,"page":1.5}`, "page must be an integer"},
		{"unknown filter", `{"limit":10,"page":1,"status":"Sent"}`, `Unknown field "status"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := h.as(h.alpha).POST("/campaign/list").WithBytes([]byte(tt.body)).
				WithHeader("Content-Type", "application/json").Expect()
			resp.Status(http.StatusBadRequest).JSON().Object().Value("error").String().HasPrefix(tt.want)
		})
	}
	h.as(h.alpha).POST("/campaign/list").WithJSON(map[string]int{"limit": spec.MaxPageSize, "page": 1}).
		Expect().Status(http.StatusOK).JSON().Object().Value("campaigns").Array().Length().IsEqual(50)
}

// TestCampaignStats covers spec §4.3 and §2.3, and the documented answer for
// an Id the account does not own (not shown): 404, the same for another
// account's campaign as for one that does not exist.
func TestCampaignStats(t *testing.T) {
	h := MustOpenServer(t, sim.Config{})
	list := h.as(h.alpha).POST("/campaign/list").WithJSON(map[string]int{"limit": spec.MaxPageSize, "page": 1}).
		Expect().Status(http.StatusOK).JSON().Object().Value("campaigns").Array()
	for _, v := range list.Iter() {
		c := v.Object()
		obj := h.as(h.alpha).POST("/campaign/stats").WithJSON(map[string]any{"campaignId": c.Value("Id").Raw()}).
			Expect().Status(http.StatusOK).HasContentType("application/json").JSON().Object()
		obj.Keys().ContainsOnly("emailStat", "smsStat")
		e := obj.Value("emailStat").Object()
		e.Keys().ContainsOnly("Sent", "Opened", "Delivered", "Hardbounce", "Softbounce", "Failed", "Clicked", "Unsubscribe", "Complained")
		m := obj.Value("smsStat").Object()
		m.Keys().ContainsOnly("Sent", "Delivered", "Failed")
		for _, n := range append(e.Values().Iter(), m.Values().Iter()...) {
			n.Number().IsInt().Ge(0)
		}
		e.Value("Opened").Number().Le(e.Value("Delivered").Number().Raw())
		e.Value("Delivered").Number().Le(e.Value("Sent").Number().Raw())
		e.Value("Clicked").Number().Le(e.Value("Opened").Number().Raw())
		m.Value("Delivered").Number().Le(m.Value("Sent").Number().Raw())
		quiet := m
		if c.Value("campaignChannel").String().Raw() == spec.ChannelSMS {
			quiet = e
		}
		for _, n := range quiet.Values().Iter() {
			n.Number().IsEqual(0)
		}
	}

	otherID := h.as(h.bravo).POST("/campaign/list").WithJSON(map[string]int{"limit": 1, "page": 1}).
		Expect().JSON().Object().Value("campaigns").Array().Value(0).Object().Value("Id").Raw()
	tests := []struct {
		name, body string
		status     int
		message    string
	}{
		{"campaignId missing", `{}`, 400, spec.MsgCampaignIDRequired},
		{"campaignId null", `{"campaignId":null}`, 400, spec.MsgCampaignIDRequired},
		{"campaignId misspelt", `{"campaign":1}`, 400, spec.MsgCampaignIDRequired},
		{"campaignId as string", `{"campaignId":"12"}`, 400, "campaignId must be an integer"},
		{"campaignId fraction", `{"campaignId":1.5}`, 400, "campaignId must be an integer"},
		{"unknown campaign", `{"campaignId":999999999}`, 404, simulator.MsgCampaignNotFound},
		{"negative campaign", `{"campaignId":-1}`, 404, simulator.MsgCampaignNotFound},
		{"another account's campaign", mustJSON(map[string]any{"campaignId": otherID}), 404, simulator.MsgCampaignNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := h.as(h.alpha).POST("/campaign/stats").WithBytes([]byte(tt.body)).
				WithHeader("Content-Type", "application/json").Expect()
			expectError(resp, tt.status, tt.message)
		})
	}
}

// TestCampaigns_SameSeedSameBytes: two simulators started alike answer
// byte for byte alike.
func TestCampaigns_SameSeedSameBytes(t *testing.T) {
	var bodies [][]byte
	for i := 0; i < 2; i++ {
		h := MustOpenServer(t, sim.Config{Seed: 99})
		for _, req := range []struct{ path, body string }{
			{"/campaign/list", fmt.Sprintf(`{"limit":%d,"page":2}`, spec.MaxPageSize)},
			{"/campaign/stats", `{"campaignId":` + mustJSON(h.as(h.alpha).POST("/campaign/list").
				WithJSON(map[string]int{"limit": 1, "page": 3}).Expect().JSON().Object().
				Value("campaigns").Array().Value(0).Object().Value("Id").Raw()) + `}`},
		} {
			bodies = append(bodies, []byte(h.as(h.alpha).POST(req.path).WithBytes([]byte(req.body)).
				WithHeader("Content-Type", "application/json").Expect().Status(http.StatusOK).Body().Raw()))
		}
	}
	if !bytes.Equal(bodies[0], bodies[2]) || !bytes.Equal(bodies[1], bodies[3]) {
		t.Fatalf("same seed, different answers:\n%s\n%s", bodies[0], bodies[2])
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
