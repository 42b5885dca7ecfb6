package controlapi_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/partner-v3/conformance-kit/simulator/controlapi"
)

// fill takes a slot for id with one request header and body and answer
// body, as the partner API fills it.
func fill(x *controlapi.Exchanges, id, reqBody, ansBody string) controlapi.ExchangeRef {
	e, ref := x.Take(id, "POST", "/v3/partner/webhook/campaign/list")
	e.RequestHead = controlapi.AppendHeaderLine(e.RequestHead, "X-B", "two")
	e.RequestHead = controlapi.AppendHeaderLine(e.RequestHead, "X-A", "one\r\nX-Injected: no")
	e.RequestBody = append(e.RequestBody, reqBody...)
	e.RequestRead, e.RequestLength = int64(len(reqBody)), int64(len(reqBody))
	e.AnswerBody = append(e.AnswerBody, ansBody...)
	e.AnswerBytes = int64(len(ansBody))
	e.Unlock()
	return ref
}

// TestExchangesRing: the ring keeps the latest exchanges, each in its own
// reused slot; a reference to a slot reused since opens nothing; Clear
// forgets them all (issue 30).
func TestExchangesRing(t *testing.T) {
	x := controlapi.NewExchanges(2)
	first := fill(x, "a", `{"a":1}`, `{"ok":true}`)
	fill(x, "b", "", "")
	d, ok := x.Detail("a")
	if !ok || d.Request.Body != `{"a":1}` || d.Answer.Body != `{"ok":true}` || d.Request.Truncated {
		t.Fatalf("Detail(a) = %+v, %v", d, ok)
	}
	if len(d.Request.Headers) != 2 || d.Request.Headers[0].Name != "X-A" || d.Request.Headers[0].Value != "one  X-Injected: no" {
		t.Fatalf("headers %+v: want them in name order, a value's line break kept out", d.Request.Headers)
	}
	if e := first.Open(); e == nil {
		t.Fatal("the first exchange's slot is not reused yet, and does not open")
	} else {
		e.Unlock()
	}
	fill(x, "c", "", "")
	if _, ok := x.Detail("a"); ok {
		t.Fatal("a third exchange in a ring of two still keeps the first")
	}
	if e := first.Open(); e != nil {
		t.Fatal("a reference to a reused slot opens it")
	}
	for _, id := range []string{"b", "c"} {
		if _, ok := x.Detail(id); !ok {
			t.Fatalf("Detail(%s) not kept", id)
		}
	}
	x.Clear()
	if _, ok := x.Detail("c"); ok {
		t.Fatal("Clear kept an exchange")
	}
	if _, ok := x.Detail(""); ok {
		t.Fatal("an empty id names an exchange")
	}
}

// TestExchangeNotes: what Detail says of a body it does not hold whole.
func TestExchangeNotes(t *testing.T) {
	x := controlapi.NewExchanges(4)
	big := strings.Repeat("x", controlapi.ExchangeBodyBytes)
	tests := []struct {
		name  string
		set   func(e *controlapi.Exchange)
		want  string
		bytes int64
	}{
		{"whole", func(e *controlapi.Exchange) {}, "", 7},
		{"truncated", func(e *controlapi.Exchange) {
			e.RequestBody, e.RequestRead, e.RequestLength = append(e.RequestBody[:0], big...), 9000, 9000
		}, fmt.Sprintf("truncated, 9000 bytes in all: the first %d kept", controlapi.ExchangeBodyBytes), 9000},
		{"cut", func(e *controlapi.Exchange) {
			e.RequestRead, e.RequestLength, e.RequestBodyState = 7, 70000, controlapi.BodyCut
		}, "cut: the simulator stopped reading the body after 7 bytes (it refused the rest: too large, too slow or cut off) of 70000 by its Content-Length", 70000},
		{"unread", func(e *controlapi.Exchange) {
			e.RequestBody, e.RequestRead, e.RequestLength, e.RequestBodyState = e.RequestBody[:0], 0, 12, controlapi.BodyUnread
		}, "not read: the simulator answered before reading it (it refused the request on its line or headers); 12 bytes by its Content-Length", 12},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ref := fill(x, tt.name, `{"a":1}`, "")
			e := ref.Open()
			tt.set(e)
			e.Unlock()
			d, _ := x.Detail(tt.name)
			if d.Request.Note != tt.want || d.Request.Truncated != (tt.want != "") || d.Request.BodyBytes != tt.bytes {
				t.Fatalf("note %q (truncated %v, %d bytes), want %q (%d bytes)", d.Request.Note, d.Request.Truncated, d.Request.BodyBytes, tt.want, tt.bytes)
			}
		})
	}
}

// TestExchangePrintsHideBodies: a body is read with every credential of
// the exchange's prints replaced, wherever it is, the longest winning at a
// place; other text is as it was.
func TestExchangePrintsHideBodies(t *testing.T) {
	x := controlapi.NewExchanges(1)
	body := `{"a":"secret-0123456789","b":"secret-0123","k":"key-abcdefgh","tail":"secret-0123456789"}`
	e, _ := x.Take("p", "POST", "/")
	e.RequestBody = append(e.RequestBody, body...)
	e.AnswerBody = append(e.AnswerBody, `{"echo":"key-abcdefgh"}`...)
	e.AnswerBytes = int64(len(e.AnswerBody))
	for _, p := range []controlapi.Print{controlapi.PrintOf("secret-0123456789", "[S]"), controlapi.PrintOf("secret-0123", "[s]"), controlapi.PrintOf("key-abcdefgh", "[K]")} {
		e.Prints[e.NPrints] = p
		e.NPrints++
	}
	e.Unlock()
	d, _ := x.Detail("p")
	if want := `{"a":"[S]","b":"[s]","k":"[K]","tail":"[S]"}`; d.Request.Body != want {
		t.Errorf("request body read as %q, want %q", d.Request.Body, want)
	}
	if want := `{"echo":"[K]"}`; d.Answer.Body != want {
		t.Errorf("answer body read as %q, want %q", d.Answer.Body, want)
	}
	e, _ = x.Take("q", "POST", "/")
	e.RequestBody = append(e.RequestBody, "secret-0123456789"...)
	e.Unlock()
	if d, _ := x.Detail("q"); d.Request.Body != "secret-0123456789" {
		t.Errorf("a slot taken again kept the last one's prints: %q", d.Request.Body)
	}
}
