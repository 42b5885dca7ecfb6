package partnerapi

import (
	"bytes"
	"context"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/inmem"
	"github.com/partner-v3/conformance-kit/simulator/internal/apitest"
	"github.com/partner-v3/conformance-kit/simulator/jsonbody"
	"github.com/partner-v3/conformance-kit/simulator/mock"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// The fuzz targets: every decoder, alone and behind the handler that uses
// it. `make test` runs their seeds and testdata/fuzz; `make fuzz` fuzzes
// each in turn. Properties: no panic, never a 5xx, every refusal a 4xx
// JSON {"error": "<non-empty>"}, and what is accepted is what was sent.

// FuzzDecodeContact: no body makes decoding panic, every refusal is a 400,
// whatever is accepted satisfies spec §2.1's one hard rule and round-trips
// through its own JSON unchanged.
func FuzzDecodeContact(f *testing.F) {
	for _, seed := range []string{
		`{"email":"a@example.com"}`,
		`{"phoneNo":"+14155550100","tag":["a","b"],"emailOptStatus":1}`,
		`{"email":"a@example.com","dateOfBirth":"2000-02-29","gender":"other","country":"US"}`,
		`{}`, `[]`, `null`, `{"email":null}`, `{"email":1e400}`, `{"tag":[null]}`,
		`{"emailOptStatus":1.0}`, `{"email":"a@example.com"}{"x":1}`, "{\"email\":\"\xff@x.io\"}",
		`{"email":"a@example.com","firstName":"\ud83d\ude00","lastName":"\ud800"}`,
		`{"email":"a@example.com","email":"b@example.com"}`, "\xef\xbb\xbf{\"email\":\"a@example.com\"}",
		`{"email":"a@example.com","smsOptStatus":99999999999999999999}`,
	} {
		f.Add([]byte(seed))
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, body []byte) {
		fs, err := jsonbody.Parse(body)
		if err != nil {
			mustBeRefusal(t, err, simulator.EINVALID)
			return
		}
		c, err := ownPlay.decodeContact(fs, now)
		if err != nil {
			mustBeRefusal(t, err, simulator.EINVALID)
			return
		}
		if c.Email == "" && c.PhoneNo == "" {
			t.Fatalf("accepted a contact with neither email nor phoneNo: %q", body)
		}
		// What encoding/json reads from the same body agrees field by field.
		var std map[string]any
		if err := json.Unmarshal(body, &std); err != nil {
			t.Fatalf("accepted %q, which encoding/json refuses: %v", body, err)
		}
		if v, ok := std["email"].(string); ok && v != c.Email {
			t.Fatalf("email %q stored as %q", v, c.Email)
		}
		again, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		var strip map[string]any
		_ = json.Unmarshal(again, &strip)
		for _, k := range []string{"contactId", "accountId", "createdAt", "updatedAt"} {
			delete(strip, k)
		}
		again, _ = json.Marshal(strip)
		fs2, err := jsonbody.Parse(again)
		if err != nil {
			t.Fatalf("own JSON %s refused: %v", again, err)
		}
		c2, err := ownPlay.decodeContact(fs2, now)
		if err != nil {
			t.Fatalf("own JSON %s refused: %v", again, err)
		}
		if !reflect.DeepEqual(c, c2) {
			t.Fatalf("round trip changed the contact:\n%+v\n%+v", c, c2)
		}
	})
}

// FuzzDecodeCampaignList: every refusal is a 400; what is accepted is in
// spec §4.2's ranges and is what encoding/json reads.
func FuzzDecodeCampaignList(f *testing.F) {
	for _, seed := range []string{
		`{"limit":1,"page":1}`, `{"limit":50,"page":99999999999999999999}`, `{"limit":51,"page":1}`,
		`{"limit":"1","page":1}`, `{"limit":1.0,"page":1}`, `{"limit":-0,"page":1}`, `{"page":1}`,
		`{"limit":1,"page":1,"limit":2}`, `{"limit":1,"page":1} x`, `{"limit":5e1,"page":10e-1}`, `{"limit":1,"page":9007199254740992}`, `[]`, ``, `{"limit":[[[]]],"page":1}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		fs, err := jsonbody.Parse(body)
		if err != nil {
			mustBeRefusal(t, err, simulator.EINVALID)
			return
		}
		limit, page, err := ownPlay.decodeCampaignList(fs)
		if err != nil {
			mustBeRefusal(t, err, simulator.EINVALID)
			return
		}
		if limit < 1 || limit > spec.MaxPageSize || page < spec.MinPage {
			t.Fatalf("accepted limit %d page %d from %q", limit, page, body)
		}
		var std struct{ Limit, Page json.Number }
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		if err := dec.Decode(&std); err != nil {
			t.Fatalf("accepted %q, which encoding/json refuses: %v", body, err)
		}
		// Read exactly (1.0 and 10e-1 are 1): what was accepted is bounded,
		// so its exponent is too.
		for _, n := range []struct {
			name string
			sent json.Number
			read int
		}{{"limit", std.Limit, limit}, {"page", std.Page, page}} {
			sent, ok := new(big.Rat).SetString(n.sent.String())
			if !ok || !sent.IsInt() || sent.Cmp(new(big.Rat).SetInt64(int64(n.read))) != 0 {
				t.Fatalf("%s %s read as %d", n.name, n.sent, n.read)
			}
		}
	})
}

// FuzzPartnerRequest drives the three operations through the whole partner
// handler in-process: whatever the body and Content-Type, the answer is a
// JSON 200 or a JSON 4xx error with a message, never a 5xx.
func FuzzPartnerRequest(f *testing.F) {
	for i, seed := range []string{
		`{"email":"a@example.com"}`, `{"limit":10,"page":2}`, `{"campaignId":1}`, `{"campaignId":"1"}`,
		`{"campaignId":99999999999999999999}`, `{}`, `null`, "{\"email\":\"\xff\"}",
	} {
		f.Add(uint8(i), "application/json", []byte(seed))
	}
	f.Add(uint8(1), "text/plain", []byte(`{"limit":1,"page":1}`))
	f.Add(uint8(1), "application/json; charset=utf-16", []byte(`{"limit":1,"page":1}`))
	s := newFuzzServer()
	h := s.Handler()
	f.Fuzz(func(t *testing.T, op uint8, contentType string, body []byte) {
		path := spec.BasePath + "/" + spec.Paths()[int(op)%len(spec.Paths())]
		req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
		req.Header.Set("Content-Type", contentType)
		req.Header.Set(spec.HeaderAPIKey, "key")
		req.Header.Set(spec.HeaderAPISecret, "secret")
		req.Header.Set(spec.HeaderAccountID, "acc")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		apitest.MustBeJSONAnswer(t, w, body)
	})
}

func mustBeRefusal(t *testing.T, err error, code string) {
	t.Helper()
	if got := simulator.ErrorCode(err); got != code {
		t.Fatalf("error with code %s, want %s: %v", got, code, err)
	}
	if simulator.ErrorMessage(err) == "" {
		t.Fatal("refusal without a message")
	}
}

// newFuzzServer is an API whose stores do not grow as fuzzing runs:
// contacts are echoed back, not kept; the rate counter allows all.
func newFuzzServer() *API {
	campaign := &simulator.Campaign{}
	campaign.ID = 1
	return &API{Stores: Stores{
		Accounts: inmem.NewAccountStore([]*simulator.Account{{APIKey: "key", APISecret: "secret", AccountID: "acc"}}),
		Contacts: &mock.ContactStore{
			UpsertContactFn: func(_ context.Context, c *simulator.Contact) (*simulator.Contact, bool, error) { return c, true, nil },
			AddContactFn: func(_ context.Context, c *simulator.Contact, _ simulator.DuplicateRule) (*simulator.Contact, bool, error) {
				return c, true, nil
			},
		},
		Campaigns: &mock.CampaignStore{
			FindCampaignsFn: func(context.Context, simulator.CampaignFilter) ([]*simulator.Campaign, int, error) {
				return []*simulator.Campaign{campaign}, 1, nil
			},
			FindCampaignByIDFn: func(_ context.Context, _ string, id int64) (*simulator.Campaign, error) {
				if id == 1 {
					return campaign, nil
				}
				return nil, &simulator.Error{Code: simulator.ENOTFOUND, Message: simulator.MsgCampaignNotFound}
			},
		},
		Counter: allowAll{},
		Control: inmem.NewControlStore(),
	}}
}

// allowAll is a RateCounter that allows every request and counts none.
type allowAll struct{ simulator.RateCounter }

func (allowAll) Take(context.Context, string, time.Time) (simulator.RateDecision, error) {
	return simulator.RateDecision{Allowed: true, Count: 1}, nil
}

func (allowAll) Reset(context.Context, string) error { return nil }
func (allowAll) ResetAll(context.Context) error      { return nil }
