package suite

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/partner-v3/conformance-kit/steps/internal/record"
)

// HARCreator names the suite as the creator of its HAR files.
const HARCreator = "partner-v3-conformance"

// The HAR 1.2 shape (http://www.softwareishard.com/blog/har-12-spec/), as
// far as the suite fills it in.
type (
	harDoc struct {
		Log harLog `json:"log"`
	}
	harLog struct {
		Version string     `json:"version"`
		Creator harCreator `json:"creator"`
		Entries []harEntry `json:"entries"`
		Comment string     `json:"comment,omitempty"`
	}
	harCreator struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	harEntry struct {
		StartedDateTime string      `json:"startedDateTime"`
		Time            float64     `json:"time"`
		Request         harRequest  `json:"request"`
		Response        harResponse `json:"response"`
		Cache           struct{}    `json:"cache"`
		Timings         harTimings  `json:"timings"`
		// Scenario is the scenario that sent the request (a custom field).
		Scenario string `json:"_scenario,omitempty"`
		// Error is why a request got no (whole) answer (a custom field).
		Error string `json:"_error,omitempty"`
	}
	harRequest struct {
		Method      string         `json:"method"`
		URL         string         `json:"url"`
		HTTPVersion string         `json:"httpVersion"`
		Cookies     []harNameValue `json:"cookies"`
		Headers     []harNameValue `json:"headers"`
		QueryString []harNameValue `json:"queryString"`
		PostData    *harPostData   `json:"postData,omitempty"`
		HeadersSize int            `json:"headersSize"`
		BodySize    int            `json:"bodySize"`
	}
	harResponse struct {
		Status      int            `json:"status"`
		StatusText  string         `json:"statusText"`
		HTTPVersion string         `json:"httpVersion"`
		Cookies     []harNameValue `json:"cookies"`
		Headers     []harNameValue `json:"headers"`
		Content     harContent     `json:"content"`
		RedirectURL string         `json:"redirectURL"`
		HeadersSize int            `json:"headersSize"`
		BodySize    int            `json:"bodySize"`
	}
	harNameValue struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
	harPostData struct {
		MimeType string         `json:"mimeType"`
		Params   []harNameValue `json:"params"`
		Text     string         `json:"text"`
	}
	harContent struct {
		Size     int    `json:"size"`
		MimeType string `json:"mimeType"`
		Text     string `json:"text,omitempty"`
		Encoding string `json:"encoding,omitempty"`
	}
	harTimings struct {
		Send    float64 `json:"send"`
		Wait    float64 `json:"wait"`
		Receive float64 `json:"receive"`
	}
)

// harTime is HAR's startedDateTime: ISO 8601 with milliseconds and zone.
const harTime = "2006-01-02T15:04:05.000Z07:00"

// WriteHAR writes every exchange of the run as a HAR 1.2 file, which
// browsers' developer tools and HAR viewers open: request and response
// with headers and bodies (the run's secrets hidden wherever they appear,
// as the recorder kept them, in case a target echoes one), the scenario
// that sent each request in the custom field _scenario, and a request that
// got no answer as status 0 with the error in _error.
func (r *Result) WriteHAR(w io.Writer) error {
	doc := harDoc{Log: harLog{
		Version: "1.2",
		Creator: harCreator{Name: HARCreator, Version: r.SuiteVersion},
		Entries: make([]harEntry, 0, len(r.entries)),
		Comment: fmt.Sprintf("%s against %s: %s", r.Spec, r.Target, r.Verdict),
	}}
	for _, e := range r.entries {
		doc.Log.Entries = append(doc.Log.Entries, harOf(e))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("write HAR file: %w", err)
	}
	return nil
}

// harOf is one recorded exchange as a HAR entry.
func harOf(e record.Entry) harEntry {
	ms := milliseconds(e.Duration)
	h := harEntry{
		StartedDateTime: e.Started.UTC().Format(harTime),
		Time:            ms,
		Request: harRequest{
			Method:      e.Method,
			URL:         e.URL,
			HTTPVersion: orDefault(e.Proto, "HTTP/1.1"),
			Cookies:     []harNameValue{},
			Headers:     harHeaders(e.RequestHeader), // masked when recorded
			QueryString: harQuery(e.URL),
			HeadersSize: -1,
			BodySize:    len(e.RequestBody),
		},
		Timings:  harTimings{Wait: ms},
		Scenario: e.Scenario,
		Error:    e.Err,
	}
	if len(e.RequestBody) > 0 {
		h.Request.PostData = &harPostData{
			MimeType: e.RequestHeader.Get("Content-Type"),
			Params:   []harNameValue{},
			Text:     string(e.RequestBody),
		}
	}
	h.Response = harResponse{
		Status:      e.Status,
		Cookies:     []harNameValue{},
		Headers:     []harNameValue{},
		HeadersSize: -1,
		BodySize:    -1,
	}
	if e.Status == 0 {
		// No answer: nothing of a response to show but the error.
		return h
	}
	header := e.ResponseHeader // masked when recorded
	h.Response.StatusText = http.StatusText(e.Status)
	h.Response.HTTPVersion = orDefault(e.ResponseProto, "HTTP/1.1")
	h.Response.Headers = harHeaders(header)
	h.Response.RedirectURL = header.Get("Location")
	h.Response.BodySize = len(e.ResponseBody)
	h.Response.Content = harContent{Size: len(e.ResponseBody), MimeType: header.Get("Content-Type")}
	if utf8.Valid(e.ResponseBody) {
		h.Response.Content.Text = string(e.ResponseBody)
	} else {
		h.Response.Content.Text, h.Response.Content.Encoding = base64.StdEncoding.EncodeToString(e.ResponseBody), "base64"
	}
	return h
}

// harHeaders lists a header's fields, sorted by name, each value apart.
func harHeaders(h http.Header) []harNameValue {
	out := []harNameValue{}
	for _, k := range slices.Sorted(maps.Keys(h)) {
		for _, v := range h[k] {
			out = append(out, harNameValue{Name: k, Value: v})
		}
	}
	return out
}

// harQuery lists the query parameters of a URL.
func harQuery(raw string) []harNameValue {
	out := []harNameValue{}
	u, err := url.Parse(raw)
	if err != nil {
		return out
	}
	q := u.Query()
	for _, k := range slices.Sorted(maps.Keys(q)) {
		for _, v := range q[k] {
			out = append(out, harNameValue{Name: k, Value: v})
		}
	}
	return out
}

func milliseconds(d time.Duration) float64 {
	return float64(d.Round(time.Microsecond)) / float64(time.Millisecond)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
