package suite

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// readHAR is the HAR 1.2 shape with every field the spec requires, as a
// viewer reads it; pointers tell a missing field from a zero one.
type readHAR struct {
	Log *struct {
		Version *string `json:"version"`
		Creator *struct {
			Name    *string `json:"name"`
			Version *string `json:"version"`
		} `json:"creator"`
		Entries []struct {
			StartedDateTime *string  `json:"startedDateTime"`
			Time            *float64 `json:"time"`
			Request         *struct {
				Method      *string         `json:"method"`
				URL         *string         `json:"url"`
				HTTPVersion *string         `json:"httpVersion"`
				Cookies     []readNameValue `json:"cookies"`
				Headers     []readNameValue `json:"headers"`
				QueryString []readNameValue `json:"queryString"`
				PostData    *struct {
					MimeType *string `json:"mimeType"`
					Text     *string `json:"text"`
				} `json:"postData"`
				HeadersSize *int `json:"headersSize"`
				BodySize    *int `json:"bodySize"`
			} `json:"request"`
			Response *struct {
				Status      *int            `json:"status"`
				StatusText  *string         `json:"statusText"`
				HTTPVersion *string         `json:"httpVersion"`
				Cookies     []readNameValue `json:"cookies"`
				Headers     []readNameValue `json:"headers"`
				Content     *struct {
					Size     *int    `json:"size"`
					MimeType *string `json:"mimeType"`
					Text     string  `json:"text"`
				} `json:"content"`
				RedirectURL *string `json:"redirectURL"`
				HeadersSize *int    `json:"headersSize"`
				BodySize    *int    `json:"bodySize"`
			} `json:"response"`
			Cache   *struct{} `json:"cache"`
			Timings *struct {
				Send    *float64 `json:"send"`
				Wait    *float64 `json:"wait"`
				Receive *float64 `json:"receive"`
			} `json:"timings"`
			Scenario string `json:"_scenario"`
			Error    string `json:"_error"`
		} `json:"entries"`
	} `json:"log"`
}

type readNameValue struct {
	Name  *string `json:"name"`
	Value *string `json:"value"`
}

func TestHARFile(t *testing.T) {
	r := sampleResult(t)
	var buf bytes.Buffer
	if err := r.WriteHAR(&buf); err != nil {
		t.Fatal(err)
	}
	raw := buf.String()
	var doc readHAR
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("the HAR file is not JSON: %v", err)
	}
	l := doc.Log
	if l == nil || l.Version == nil || *l.Version != "1.2" {
		t.Fatal("log.version is not 1.2")
	}
	if l.Creator == nil || l.Creator.Name == nil || *l.Creator.Name != HARCreator || l.Creator.Version == nil || *l.Creator.Version != r.SuiteVersion {
		t.Fatalf("log.creator=%+v", l.Creator)
	}
	if got, want := len(l.Entries), 2; got != want {
		t.Fatalf("%d entries, want %d", got, want)
	}
	for i, e := range l.Entries {
		if e.StartedDateTime == nil || e.Time == nil || e.Request == nil || e.Response == nil || e.Cache == nil || e.Timings == nil {
			t.Fatalf("entry %d lacks a required field", i)
		}
		if _, err := time.Parse(time.RFC3339, *e.StartedDateTime); err != nil || !strings.Contains(*e.StartedDateTime, ".") {
			t.Errorf("entry %d: startedDateTime %q is not RFC 3339 with ms", i, *e.StartedDateTime)
		}
		q := e.Request
		if q.Method == nil || q.URL == nil || q.HTTPVersion == nil || q.Cookies == nil || q.Headers == nil || q.QueryString == nil || q.HeadersSize == nil || q.BodySize == nil {
			t.Errorf("entry %d: request lacks a required field: %+v", i, q)
		}
		s := e.Response
		if s.Status == nil || s.StatusText == nil || s.HTTPVersion == nil || s.Cookies == nil || s.Headers == nil || s.Content == nil ||
			s.Content.Size == nil || s.Content.MimeType == nil || s.RedirectURL == nil || s.HeadersSize == nil || s.BodySize == nil {
			t.Errorf("entry %d: response lacks a required field: %+v", i, s)
		}
		if e.Timings.Send == nil || e.Timings.Wait == nil || e.Timings.Receive == nil || *e.Timings.Wait != *e.Time {
			t.Errorf("entry %d: timings %+v do not add up to time %v", i, e.Timings, *e.Time)
		}
		for _, h := range append(append([]readNameValue{}, q.Headers...), s.Headers...) {
			if h.Name == nil || h.Value == nil {
				t.Errorf("entry %d: a header without name or value", i)
			}
		}
	}

	answered, unanswered := l.Entries[0], l.Entries[1]
	t.Run("an answered request has its request and response", func(t *testing.T) {
		if got, want := *answered.StartedDateTime, "2025-03-14T09:27:33.589Z"; got != want {
			t.Errorf("startedDateTime=%q, want %q", got, want)
		}
		if got, want := *answered.Time, 183.0; got != want {
			t.Errorf("time=%v, want %v", got, want)
		}
		if answered.Scenario != "Campaigns carry the fields of §2.2" {
			t.Errorf("_scenario=%q", answered.Scenario)
		}
		q := answered.Request
		if *q.Method != "POST" || *q.HTTPVersion != "HTTP/1.1" || *q.BodySize != len(`{"limit":50,"page":1}`) || *q.HeadersSize != -1 {
			t.Errorf("request %s %s size %d headers %d", *q.Method, *q.HTTPVersion, *q.BodySize, *q.HeadersSize)
		}
		if len(q.QueryString) != 1 || *q.QueryString[0].Name != "trace" || *q.QueryString[0].Value != "1" {
			t.Errorf("queryString=%+v", q.QueryString)
		}
		if q.PostData == nil || *q.PostData.MimeType != "application/json" || *q.PostData.Text != `{"limit":50,"page":1}` {
			t.Errorf("postData=%+v", q.PostData)
		}
		s := answered.Response
		if *s.Status != 200 || *s.StatusText != "OK" || *s.HTTPVersion != "HTTP/2.0" || *s.RedirectURL != "" || *s.BodySize != len(`{"pageNo":1,"campaigns":[]}`) {
			t.Errorf("response %d %q %s", *s.Status, *s.StatusText, *s.HTTPVersion)
		}
		if *s.Content.MimeType != "application/json; charset=utf-8" || s.Content.Text != `{"pageNo":1,"campaigns":[]}` || *s.Content.Size != *s.BodySize {
			t.Errorf("content=%+v", s.Content)
		}
		if answered.Error != "" {
			t.Errorf("_error=%q on an answered request", answered.Error)
		}
	})
	t.Run("a request without an answer has status 0 and the error", func(t *testing.T) {
		if *unanswered.Response.Status != 0 || unanswered.Error != "dial tcp 192.0.2.1:443: i/o timeout" {
			t.Errorf("status %d, _error %q", *unanswered.Response.Status, unanswered.Error)
		}
		if unanswered.Request.PostData == nil || *unanswered.Request.PostData.Text != `{"email":"a@example.test"}` {
			t.Errorf("the request of an unanswered entry lost its body")
		}
	})
	t.Run("no secret appears, not even one the target echoed", func(t *testing.T) {
		for _, secret := range []string{testAPIKey, testAPISecret, testAccountID} {
			if strings.Contains(raw, secret) {
				t.Errorf("the HAR file holds %q", secret)
			}
		}
		if !strings.Contains(raw, "****(27 chars)") {
			t.Errorf("the HAR file does not show the masked secret")
		}
	})
}

func TestHARFileOfARunWithoutExchanges(t *testing.T) {
	var buf bytes.Buffer
	if err := notRunResult().WriteHAR(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"entries": []`) {
		t.Fatalf("a run without exchanges must list no entries, not null:\n%s", buf.String())
	}
}
