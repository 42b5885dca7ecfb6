package partnerapi_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/internal/apitest"
	"github.com/partner-v3/conformance-kit/simulator/sim"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

var update = flag.Bool("update", false, "rewrite docs/bad-input.md from the bad-input matrix")

// request is one request of the matrix, sent over a fresh connection as
// the bytes it says. Placeholders {key}, {secret}, {account} stand for the
// first account's credentials, {bravo} for the second account's id.
type request struct {
	method string // POST if empty
	// path is an operation ("campaign/list", under the base path) or, when
	// it starts with "/" or is not a path, the request target as sent.
	path    string
	headers []string // extra header lines, "Name: value", as sent
	body    string
	// noAuth leaves out the three spec §5 headers; noType the
	// Content-Type; noLength the Content-Length (headers give their own).
	noAuth, noType, noLength bool
	// raw, if set, is the whole request as sent.
	raw string
	// admin sends to the control listener (with its token unless noAuth).
	admin bool
	// plain sends over TCP without TLS; h2 over HTTP/2 with net/http's
	// client; slow to a simulator whose read timeout is one second.
	plain, h2, slow bool
	// hang declares a body (Content-Length) and never sends it (h2 only).
	hang int64
}

// row is one class of bad input and the answer it must get.
type row struct {
	class, name string
	req         request
	status      int
	// msg is the exact {"error": …} message; "~x" means "contains x"; for
	// an accepted request, "" (the body is then any JSON object).
	msg string
	// counted: the request was authenticated, so it spends one request of
	// the account's rate budget (docs/simulator.md: every authenticated request
	// counts, including those refused for their body).
	counted bool
	// closes: the server closes the connection after the answer.
	closes bool
	// noAnswer: the connection ends without an HTTP answer.
	noAnswer bool
}

const (
	opAdd   = spec.PathContactAdd
	opList  = spec.PathCampaignList
	opStats = spec.PathCampaignStats
	list1   = `{"limit":1,"page":1}`
)

func req(path, body string) request { return request{path: path, body: body} }

// badInputMatrix lists every class of bad input with its answer.
func badInputMatrix() []row {
	var rows []row
	add := func(class, name string, r request, status int, msg string, counted bool) {
		rows = append(rows, row{class: class, name: name, req: r, status: status, msg: msg, counted: counted})
	}
	last := func() *row { return &rows[len(rows)-1] }
	notJSON := "~Request body is not valid JSON"
	notObject := "Request body must be a JSON object"

	// JSON that is malformed or not an object.
	c := "JSON"
	add(c, "a body cut short", req(opAdd, `{"email": "x@example.com"`), 400, notJSON, true)
	add(c, "data after the object", req(opAdd, `{"email":"x@example.com"} x`), 400, "Request body is not valid JSON: data after the object", true)
	add(c, "two objects", req(opList, list1+list1), 400, "Request body is not valid JSON: data after the object", true)
	add(c, "a no-break space after the object (not JSON whitespace)", req(opList, list1+"\u00a0"), 400, "Request body is not valid JSON: data after the object", true)
	add(c, "an array", req(opList, `[`+list1+`]`), 400, notObject, true)
	add(c, "a string", req(opStats, `"hello"`), 400, notObject, true)
	add(c, "a number", req(opStats, `42`), 400, notObject, true)
	add(c, "null", req(opList, `null`), 400, notObject, true)
	add(c, "true", req(opList, `true`), 400, notObject, true)
	add(c, "an empty body", req(opList, ``), 400, "Request body is empty: a JSON object is required", true)
	add(c, "a body of whitespace", req(opList, " \r\n\t "), 400, "Request body is empty: a JSON object is required", true)
	add(c, "a single quote string", req(opList, `{'limit':1,'page':1}`), 400, notJSON, true)
	add(c, "a trailing comma", req(opList, `{"limit":1,"page":1,}`), 400, notJSON, true)
	add(c, "a comment", req(opList, `{"limit":1, /* x */ "page":1}`), 400, notJSON, true)
	add(c, "a number with a leading zero", req(opList, `{"limit":01,"page":1}`), 400, notJSON, true)
	add(c, "NaN", req(opList, `{"limit":NaN,"page":1}`), 400, notJSON, true)
	add(c, "nesting 40,000 deep", req(opList, `{"limit":`+strings.Repeat("[", 40000)+strings.Repeat("]", 40000)+`,"page":1}`), 413, "Request body exceeds 65536 bytes", false)
	add(c, "nesting 20,000 deep (past the decoder's 10,000)", req(opList, `{"limit":`+strings.Repeat("[", 20000)+strings.Repeat("]", 20000)+`,"page":1}`), 400, "~exceeded max depth", true)
	add(c, "nesting 5,000 deep in a field", req(opList, `{"limit":`+strings.Repeat("[", 5000)+strings.Repeat("]", 5000)+`,"page":1}`), 400, "limit must be an integer", true)
	add(c, "a field given twice", req(opAdd, `{"email":"a@example.com","email":"b@example.com"}`), 400, "Field email is given more than once", true)
	add(c, "a field given twice, once escaped", req(opAdd, `{"email":"a@example.com","\u0065mail":"b@example.com"}`), 400, "Field email is given more than once", true)
	add(c, "a field given twice in Campaign List", req(opList, `{"limit":1,"page":1,"limit":50}`), 400, "Field limit is given more than once", true)
	add(c, "a field in another case", req(opAdd, `{"email":"a@example.com","Email":"b@example.com"}`), 400, `~Unknown field "Email": the fields are email, phoneNo,`, true)
	add(c, "a body over 64 KiB, chunked", request{path: opAdd, noLength: true, headers: []string{"Transfer-Encoding: chunked"},
		body: chunked(`{"email":"big@example.com","firstName":"` + strings.Repeat("a", 70<<10) + `"}`)}, 413, "Request body exceeds 65536 bytes", true)
	last().closes = true
	add(c, "a Content-Length shorter than the body", request{path: opList, noLength: true, headers: []string{"Content-Length: 5"}, body: list1}, 400, notJSON, true)

	// Encodings.
	c = "Encoding"
	add(c, "invalid UTF-8 in email", req(opAdd, "{\"email\":\"\xff@example.com\"}"), 400, "email is not valid UTF-8", true)
	add(c, "invalid UTF-8 in phoneNo", req(opAdd, "{\"phoneNo\":\"+1415555\xfe0100\"}"), 400, "phoneNo is not valid UTF-8", true)
	add(c, "invalid UTF-8 in city", req(opAdd, "{\"email\":\"x@example.com\",\"city\":\"\xff\"}"), 400, "city is not valid UTF-8", true)
	add(c, "invalid UTF-8 in a tag", req(opAdd, "{\"email\":\"x@example.com\",\"tag\":[\"ok\",\"\xfe\"]}"), 400, "tag is not valid UTF-8", true)
	add(c, "an overlong encoding of / in firstName", req(opAdd, "{\"email\":\"x@example.com\",\"firstName\":\"\xc0\xaf\"}"), 400, "firstName is not valid UTF-8", true)
	add(c, "a surrogate encoded as UTF-8 (CESU-8) in lastName", req(opAdd, "{\"email\":\"x@example.com\",\"lastName\":\"\xed\xa0\x80\"}"), 400, "lastName is not valid UTF-8", true)
	add(c, "a lone high surrogate escape", req(opAdd, `{"email":"x@example.com","firstName":"\ud800"}`), 400, "firstName is not valid UTF-8", true)
	add(c, "a lone low surrogate escape", req(opAdd, `{"email":"x@example.com","addrOne":"a\udc00b"}`), 400, "addrOne is not valid UTF-8", true)
	add(c, "invalid UTF-8 in a field name", req(opAdd, "{\"email\":\"x@example.com\",\"\xff\":1}"), 400, "Request body is not valid UTF-8", true)
	add(c, "invalid UTF-8 in an unknown field's value", req(opList, "{\"limit\":1,\"page\":1,\"x\":\"\xff\"}"), 400, "x is not valid UTF-8", true)
	add(c, "a UTF-8 byte-order mark", req(opList, "\xef\xbb\xbf"+list1), 400, "Request body must be UTF-8 JSON without a byte-order mark (got a UTF-8 byte-order mark)", true)
	add(c, "UTF-16LE with a byte-order mark", req(opList, "\xff\xfe"+utf16LE(list1)), 400, "Request body must be UTF-8 JSON without a byte-order mark (got UTF-16)", true)
	add(c, "UTF-16BE without a byte-order mark", req(opList, utf16BE(list1)), 400, "Request body must be UTF-8 JSON without a byte-order mark (got UTF-16 or UTF-32)", true)
	add(c, "a NUL character in firstName", req(opAdd, `{"email":"x@example.com","firstName":"a\u0000b"}`), 400, "firstName must not contain control characters", true)
	add(c, "a line break in addrOne", req(opAdd, `{"email":"x@example.com","addrOne":"1 Main St\nFlat 2"}`), 400, "addrOne must not contain control characters", true)
	add(c, "a C1 control in a tag", req(opAdd, `{"email":"x@example.com","tag":["a\u0085"]}`), 400, "tag names must not contain control characters", true)

	// Media types and content encodings (spec §1 rule 2).
	c = "Media type"
	add(c, "no Content-Type", request{path: opAdd, noType: true, body: `{"email":"x@example.com"}`}, 415, "Content-Type must be application/json (got none)", true)
	add(c, "text/plain", request{path: opList, noType: true, headers: []string{"Content-Type: text/plain"}, body: list1}, 415, "Content-Type must be application/json (got text/plain)", true)
	add(c, "a form", request{path: opAdd, noType: true, headers: []string{"Content-Type: application/x-www-form-urlencoded"}, body: "email=x@example.com"}, 415, "Content-Type must be application/json (got application/x-www-form-urlencoded)", true)
	add(c, "a JSON-like type", request{path: opList, noType: true, headers: []string{"Content-Type: application/merge-patch+json"}, body: list1}, 415, "Content-Type must be application/json (got application/merge-patch+json)", true)
	add(c, "a malformed parameter", request{path: opList, noType: true, headers: []string{"Content-Type: application/json; charset"}, body: list1}, 415, "Content-Type must be application/json (got application/json; charset)", true)
	add(c, "charset utf-16", request{path: opList, noType: true, headers: []string{"Content-Type: application/json; charset=utf-16"}, body: list1}, 415, "Content-Type charset must be utf-8 (got utf-16)", true)
	add(c, "charset latin1", request{path: opList, noType: true, headers: []string{"Content-Type: application/json; charset=iso-8859-1"}, body: list1}, 415, "Content-Type charset must be utf-8 (got iso-8859-1)", true)
	add(c, "Content-Type twice", request{path: opList, headers: []string{"Content-Type: text/plain"}, body: list1}, 415, "Content-Type must be sent once, as application/json (got 2)", true)
	add(c, "gzip Content-Encoding", request{path: opList, headers: []string{"Content-Encoding: gzip"}, body: gzipped(list1)}, 415, "Content-Encoding gzip is not supported: send the body uncompressed", true)
	add(c, "br Content-Encoding", request{path: opList, headers: []string{"Content-Encoding: br"}, body: list1}, 415, "Content-Encoding br is not supported: send the body uncompressed", true)
	add(c, "charset=UTF-8 in capitals (accepted)", request{path: opList, noType: true, headers: []string{"Content-Type: Application/JSON; charset=UTF-8"}, body: list1}, 200, "", true)
	add(c, "Content-Encoding identity (accepted)", request{path: opList, headers: []string{"Content-Encoding: identity"}, body: list1}, 200, "", true)

	// Every field of every operation with every wrong type (spec §2.1, §4.2, §4.3).
	c = "Add Contact fields"
	wrongTypes := []struct{ name, json string }{{"a number", `5`}, {"a boolean", `true`}, {"an object", `{}`}, {"an array", `["a"]`}}
	for _, f := range []string{"email", "phoneNo", "firstName", "lastName", "addrOne", "addrTwo", "city", "country", "state", "zipCode", "gender", "dateOfBirth"} {
		other := `"email":"x@example.com",`
		if f == "email" {
			other = `"phoneNo":"+14155550100",`
		}
		for _, wt := range wrongTypes {
			add(c, f+" as "+wt.name, req(opAdd, `{`+other+`"`+f+`":`+wt.json+`}`), 400, f+" must be a string", true)
		}
	}
	for _, f := range []string{"emailOptStatus", "smsOptStatus"} {
		for _, wt := range []struct{ name, json string }{{"a string", `"1"`}, {"a fraction", `0.5`}, {"an exponent that leaves a fraction", `1e-1`}, {"a boolean", `true`}, {"an array", `[1]`}, {"an object", `{}`}} {
			add(c, f+" as "+wt.name, req(opAdd, `{"email":"x@example.com","`+f+`":`+wt.json+`}`), 400, f+" must be an integer", true)
		}
		// 1.0 is JSON Schema's integer 1, as the OpenAPI document declares
		// it: accepted (stored as 1, TestContactAddIntegers), so 2.0 is 2.
		add(c, f+" 2.0", req(opAdd, `{"email":"x@example.com","`+f+`":2.0}`), 400, f+" must be 0 (opt-out) or 1 (opt-in)", true)
		for _, v := range []string{"2", "-1", "99999999999999999999"} {
			add(c, f+" "+v, req(opAdd, `{"email":"x@example.com","`+f+`":`+v+`}`), 400, f+" must be 0 (opt-out) or 1 (opt-in)", true)
		}
	}
	for _, f := range []string{"tag", "playerType"} {
		for _, wt := range []struct{ name, json string }{{"a string", `"vip"`}, {"a number", `1`}, {"an object", `{}`}, {"numbers", `[1,2]`}, {"a null name", `["a",null]`}, {"nested arrays", `[["a"]]`}} {
			add(c, f+" as "+wt.name, req(opAdd, `{"email":"x@example.com","`+f+`":`+wt.json+`}`), 400, f+" must be an array of strings", true)
		}
		add(c, f+" with an empty name", req(opAdd, `{"email":"x@example.com","`+f+`":[""]}`), 400, f+" names must be 1 to 64 characters", true)
		add(c, f+" with a 65-character name", req(opAdd, `{"email":"x@example.com","`+f+`":["`+strings.Repeat("é", 65)+`"]}`), 400, f+" names must be 1 to 64 characters", true)
		add(c, f+" with 101 names", req(opAdd, `{"email":"x@example.com","`+f+`":[`+strings.Repeat(`"a",`, 100)+`"a"]}`), 400, f+" holds more than 100 names", true)
	}
	add(c, "neither email nor phoneNo", req(opAdd, `{"firstName":"Ada"}`), 400, spec.MsgEmailOrPhoneRequired, true)
	add(c, "email and phoneNo null", req(opAdd, `{"email":null,"phoneNo":null}`), 400, spec.MsgEmailOrPhoneRequired, true)
	add(c, "email and phoneNo empty", req(opAdd, `{"email":"","phoneNo":""}`), 400, spec.MsgEmailOrPhoneRequired, true)
	add(c, "an empty object", req(opAdd, `{}`), 400, spec.MsgEmailOrPhoneRequired, true)
	add(c, "an unknown field", req(opAdd, `{"email":"x@example.com","phone":"+14155550100"}`), 400, `~Unknown field "phone": the fields are email, phoneNo,`, true)
	add(c, "a 10,000-character unknown field name", req(opAdd, `{"email":"x@example.com","`+strings.Repeat("x", 10000)+`":1}`), 400, `~Unknown field "xxxxxxxx`, true)
	add(c, "email not an address", req(opAdd, `{"email":"not-an-email"}`), 400, "email is not a valid email address", true)
	add(c, "email with a display name", req(opAdd, `{"email":"Ada <ada@example.com>"}`), 400, "email is not a valid email address", true)
	add(c, "email with spaces around", req(opAdd, `{"email":" ada@example.com "}`), 400, "email is not a valid email address", true)
	add(c, "email of 300 characters", req(opAdd, `{"email":"`+strings.Repeat("a", 288)+`@example.com"}`), 400, "email is longer than 255 characters", true)
	add(c, "phoneNo with letters", req(opAdd, `{"phoneNo":"call me"}`), 400, "phoneNo must be a phone number of 7 to 15 digits, optionally with a leading +", true)
	add(c, "phoneNo of 20 digits", req(opAdd, `{"phoneNo":"`+strings.Repeat("1", 20)+`"}`), 400, "phoneNo must be a phone number of 7 to 15 digits, optionally with a leading +", true)
	add(c, "firstName of 256 characters", req(opAdd, `{"email":"x@example.com","firstName":"`+strings.Repeat("ß", 256)+`"}`), 400, "firstName is longer than 255 characters", true)
	add(c, "gender not in the list", req(opAdd, `{"email":"x@example.com","gender":"Male"}`), 400, "gender must be one of male, female, other", true)
	add(c, "dateOfBirth not a date", req(opAdd, `{"email":"x@example.com","dateOfBirth":"2000-13-01"}`), 400, "dateOfBirth must be a date of the form YYYY-MM-DD", true)
	add(c, "dateOfBirth in another format", req(opAdd, `{"email":"x@example.com","dateOfBirth":"01/02/2000"}`), 400, "dateOfBirth must be a date of the form YYYY-MM-DD", true)
	add(c, "dateOfBirth in the future", req(opAdd, `{"email":"x@example.com","dateOfBirth":"2999-01-01"}`), 400, "dateOfBirth must lie between 1900-01-01 and today", true)
	add(c, "country not a code", req(opAdd, `{"email":"x@example.com","country":"United States"}`), 400, "country must be a 2- or 3-letter country code, such as US, UK, CA", true)

	c = "Campaign List fields"
	add(c, "an empty object", req(opList, `{}`), 400, "limit is required", true)
	add(c, "limit missing", req(opList, `{"page":1}`), 400, "limit is required", true)
	add(c, "limit null", req(opList, `{"limit":null,"page":1}`), 400, "limit is required", true)
	add(c, "page missing", req(opList, `{"limit":1}`), 400, "page is required", true)
	for _, f := range []string{"limit", "page"} {
		for _, wt := range []struct{ name, json string }{{"a string", `"1"`}, {"a fraction", `1.5`}, {"an exponent that leaves a fraction", `15e-1`}, {"a boolean", `true`}, {"an array", `[1]`}, {"an object", `{"n":1}`}} {
			body := `{"limit":1,"page":1}`
			body = strings.Replace(body, `"`+f+`":1`, `"`+f+`":`+wt.json, 1)
			add(c, f+" as "+wt.name, req(opList, body), 400, f+" must be an integer", true)
		}
		for _, v := range []string{"1.0", "1e0", "10e-1"} {
			body := strings.Replace(`{"limit":1,"page":1}`, `"`+f+`":1`, `"`+f+`":`+v, 1)
			add(c, f+" "+v+" (accepted: an integer, as 1)", req(opList, body), 200, "", true)
		}
	}
	add(c, "limit 5e1 (accepted: 50)", req(opList, `{"limit":5e1,"page":1}`), 200, "", true)
	add(c, "limit 5.1e1", req(opList, `{"limit":5.1e1,"page":1}`), 400, "limit must be between 1 and 50", true)
	for _, v := range []string{"0", "51", "-1", "99999999999999999999", "-99999999999999999999"} {
		add(c, "limit "+v, req(opList, `{"limit":`+v+`,"page":1}`), 400, "limit must be between 1 and 50", true)
	}
	for _, v := range []string{"0", "-5", "-99999999999999999999"} {
		add(c, "page "+v, req(opList, `{"limit":1,"page":`+v+`}`), 400, "page must be 1 or greater", true)
	}
	add(c, "page 2^53-1 (accepted: an empty page)", req(opList, `{"limit":50,"page":9007199254740991}`), 200, "", true)
	for _, v := range []string{"9007199254740992", "99999999999999999999", "1e100"} {
		add(c, "page "+v, req(opList, `{"limit":1,"page":`+v+`}`), 400, "page must be at most 9007199254740991", true)
	}
	add(c, "an unknown filter", req(opList, `{"limit":1,"page":1,"status":"Sent"}`), 400, `Unknown field "status": the fields are limit, page`, true)

	c = "Campaign Stats fields"
	add(c, "an empty object", req(opStats, `{}`), 400, spec.MsgCampaignIDRequired, true)
	add(c, "campaignId null", req(opStats, `{"campaignId":null}`), 400, spec.MsgCampaignIDRequired, true)
	add(c, "campaignid in another case", req(opStats, `{"campaignid":1}`), 400, spec.MsgCampaignIDRequired, true)
	for _, wt := range []struct{ name, json string }{{"a string", `"1"`}, {"a fraction", `1.5`}, {"an exponent that leaves a fraction", `1e-3`}, {"a boolean", `true`}, {"an array", `[1]`}, {"an object", `{}`}} {
		add(c, "campaignId as "+wt.name, req(opStats, `{"campaignId":`+wt.json+`}`), 400, "campaignId must be an integer", true)
	}
	add(c, "campaignId 1e3 (an integer: not found)", req(opStats, `{"campaignId":1e3}`), 404, simulator.MsgCampaignNotFound, true)
	for _, v := range []string{"0", "-1", "99999999999999999999"} {
		add(c, "campaignId "+v, req(opStats, `{"campaignId":`+v+`}`), 404, simulator.MsgCampaignNotFound, true)
	}
	add(c, "an unknown field", req(opStats, `{"campaignId":1,"channel":"sms"}`), 400, `Unknown field "channel": the fields are campaignId`, true)

	// Authentication headers (spec §5).
	c = "Auth headers"
	auth := func(lines ...string) request { return request{path: opList, body: list1, noAuth: true, headers: lines} }
	key, secret, account := "x-api-key: {key}", "x-api-secret: {secret}", "x-account-id: {account}"
	add(c, "none of the three", auth(), 401, spec.MsgInvalidCredentials, false)
	add(c, "x-api-key missing", auth(secret, account), 401, spec.MsgInvalidCredentials, false)
	add(c, "x-api-secret missing", auth(key, account), 401, spec.MsgInvalidCredentials, false)
	add(c, "x-account-id missing", auth(key, secret), 403, spec.MsgUnauthorizedAccount, false)
	add(c, "x-api-key empty", auth("x-api-key:", secret, account), 401, spec.MsgInvalidCredentials, false)
	add(c, "x-api-key wrong", auth("x-api-key: dev-key-alpha-7f3c2b9f", secret, account), 401, spec.MsgInvalidCredentials, false)
	add(c, "x-account-id of another account", auth(key, secret, "x-account-id: {bravo}"), 403, spec.MsgUnauthorizedAccount, false)
	add(c, "x-account-id in other case", auth(key, secret, "x-account-id: ACC_ENC_QWXWAGFQYXJ0BMVYMDAX"), 403, spec.MsgUnauthorizedAccount, false)
	add(c, "x-api-key twice, conflicting (right one first)", auth(key, "x-api-key: wrong", secret, account), 401, spec.MsgInvalidCredentials, false)
	add(c, "x-api-key twice, conflicting (right one last)", auth("x-api-key: wrong", key, secret, account), 401, spec.MsgInvalidCredentials, false)
	add(c, "x-api-secret twice, conflicting", auth(key, secret, "x-api-secret: wrong", account), 401, spec.MsgInvalidCredentials, false)
	add(c, "x-account-id twice, conflicting", auth(key, secret, account, "x-account-id: {bravo}"), 401, spec.MsgInvalidCredentials, false)
	add(c, "x-api-key twice, identical", auth(key, key, secret, account), 401, spec.MsgInvalidCredentials, false)
	add(c, "x-account-id twice, identical", auth(key, secret, account, account), 401, spec.MsgInvalidCredentials, false)
	add(c, "x-api-key twice in different case", auth(key, "X-API-KEY: {key}", secret, account), 401, spec.MsgInvalidCredentials, false)
	add(c, "x-api-key as a comma list", auth("x-api-key: {key}, {key}", secret, account), 401, spec.MsgInvalidCredentials, false)
	add(c, "x-api-key of 8 KiB", auth("x-api-key: "+strings.Repeat("k", 8<<10), secret, account), 401, spec.MsgInvalidCredentials, false)
	add(c, "x-api-key with a tab inside", auth("x-api-key: dev-key-alpha\t-7f3c2b9e", secret, account), 401, spec.MsgInvalidCredentials, false)
	add(c, "x-api-key with Latin-1 bytes", auth("x-api-key: dev-key-\xe9lpha-7f3c2b9e", secret, account), 401, spec.MsgInvalidCredentials, false)
	add(c, "x_api_key with underscores", auth("x_api_key: {key}", secret, account), 401, spec.MsgInvalidCredentials, false)
	add(c, "x-api-key with spaces around (accepted: HTTP trims them)", auth("x-api-key:   {key}  ", secret, account), 200, "", true)
	add(c, "x-api-key with a control character", auth("x-api-key: dev-key\x01", secret, account), 400,
		`Header "x-api-key" holds a control character (0x01) in its value (RFC 9110 §5.5)`, false)
	last().closes = true
	add(c, "headers over 64 KiB", request{path: opList, body: list1, headers: []string{"X-Padding: " + strings.Repeat("p", 70<<10)}}, 431, "Request headers exceed 65536 bytes", false)
	last().closes = true
	add(c, "2,000 small headers", request{path: opList, body: list1, headers: manyHeaders(2000)}, 431, "Request headers exceed 65536 bytes", false)
	// net/http answers these itself; the edge puts the JSON 431 in place.
	add(c, "headers over net/http's 1 MiB", request{path: opList, body: list1, headers: []string{"X-Padding: " + strings.Repeat("p", 1100<<10)}}, 431, "Request headers exceed 65536 bytes", false)
	last().closes = true
	add(c, "2 MiB of headers", request{path: opList, body: list1, headers: []string{"X-Padding: " + strings.Repeat("p", 2<<20)}}, 431, "Request headers exceed 65536 bytes", false)
	last().closes = true

	// Paths (spec §4: exact paths under the §1 base path).
	c = "Paths"
	notFound := func(p string) string {
		return "No operation at " + p + ": the operations are POST /v3/partner/webhook/{contact/add,campaign/list,campaign/stats}"
	}
	base := spec.BasePath
	for _, p := range []string{
		base + "/campaign%2Flist", base + "/campaign%2flist", base + "/%63ampaign/list", base + "%2Fcampaign/list",
		base + "//campaign/list", base + "/./campaign/list", base + "/x/../campaign/list", base + "/%2e%2e/webhook/campaign/list",
		base + "/campaign/list/", "/V3/partner/webhook/campaign/list", base + "/Campaign/List", base + "/campaign/list;x=1",
		base + "/campaign/list%00", base + "/campaign/list%20", base, base + "/", "/", "/v2/partner/webhook/campaign/list",
	} {
		add(c, p, request{path: p, body: list1}, 404, notFound(p), false)
	}
	long := base + "/" + strings.Repeat("a", 8000)
	add(c, "a path of 8,000 bytes", request{path: long, body: list1}, 404, notFound(long[:200]+"…"), false)
	add(c, "a query string (accepted: ignored)", request{path: base + "/campaign/list?limit=5&page=2", body: list1}, 200, "", true)
	add(c, "the absolute form (accepted)", request{path: "https://127.0.0.1" + base + "/campaign/list", body: list1}, 200, "", true)
	add(c, "a fragment in the target", request{path: base + "/campaign/list#x", body: list1}, 404, notFound(base+"/campaign/list%23x"), false)

	// Methods (spec §1 rule 4).
	c = "Methods"
	for _, m := range []string{"GET", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "BREW", "post"} {
		add(c, m+" on Campaign List", request{method: m, path: opList, body: list1}, 405, "Method "+m+" is not allowed: campaign/list takes POST", false)
	}
	add(c, "HEAD on Add Contact (no body, by HTTP)", request{method: "HEAD", path: opAdd, noLength: true, noType: true}, 405, "", false)
	add(c, "OPTIONS *", request{method: "OPTIONS", path: "*", noLength: true}, 404, notFound("*"), false)

	// HTTP and TLS.
	c = "Protocol"
	add(c, "plain HTTP on the TLS port", request{path: opList, body: list1, plain: true}, 400,
		"Client sent an HTTP request to an HTTPS server: this port speaks HTTPS only, use https://", false)
	last().closes = true
	add(c, "plain HTTP on the control API's TLS port", request{admin: true, method: "GET", path: "/faults", plain: true, noLength: true}, 400,
		"Client sent an HTTP request to an HTTPS server: this port speaks HTTPS only, use https://", false)
	add(c, "bytes that are neither TLS nor HTTP", request{raw: "\x01\x02\x03\x04\x05hello\r\n\r\n", plain: true}, 0, "", false)
	last().noAnswer = true
	add(c, "a Content-Length over the cap and no body", request{path: opAdd, noLength: true, headers: []string{"Content-Length: 10485760"}}, 413, "Request body exceeds 65536 bytes", false)
	last().closes = true
	add(c, "a Content-Length just over the cap and no body", request{path: opAdd, noLength: true, headers: []string{"Content-Length: 65537"}}, 413, "Request body exceeds 65536 bytes", false)
	last().closes = true
	add(c, "a Content-Length over the cap, unauthenticated", request{path: opAdd, noAuth: true, noLength: true, headers: []string{"Content-Length: 10485760"}}, 413, "Request body exceeds 65536 bytes", false)
	add(c, "Expect: 100-continue with a body over the cap", request{path: opAdd, noLength: true, headers: []string{"Content-Length: 10485760", "Expect: 100-continue"}}, 413, "Request body exceeds 65536 bytes", false)
	last().closes = true
	add(c, "Expect: 100-continue (accepted)", request{path: opList, headers: []string{"Expect: 100-continue"}, body: list1}, 200, "", true)
	add(c, "an unknown Expect", request{path: opList, headers: []string{"Expect: teapot"}, body: list1}, 417, "Expect teapot is not supported: the only expectation is 100-continue", false)
	last().closes = true
	add(c, "an unknown Expect beside 100-continue", request{path: opList, headers: []string{"Expect: 100-continue", "expect: teapot"}, body: list1}, 417, "Expect \"100-continue, teapot\" is not supported: the only expectation is 100-continue", false)
	last().closes = true
	add(c, "an unknown Expect folded onto 100-continue", request{path: opList, headers: []string{"Expect: 100-continue", " teapot"}, body: list1}, 417, "Expect \"100-continue teapot\" is not supported: the only expectation is 100-continue", false)
	last().closes = true
	add(c, "an unknown Expect over HTTP/2", request{path: opList, headers: []string{"Expect: teapot"}, body: list1, h2: true}, 417, "Expect teapot is not supported: the only expectation is 100-continue", false)
	add(c, "a body that stops coming", request{path: opList, noLength: true, headers: []string{"Content-Length: 100"}, body: `{"limit":1,`, slow: true}, 408,
		"Request body was not received in time: the whole request must arrive within the server's read timeout", true)
	add(c, "a bad Content-Length", request{path: opList, noLength: true, headers: []string{"Content-Length: abc"}, body: list1}, 400,
		`Content-Length "abc" is not a number of bytes (RFC 9110 §8.6)`, false)
	last().closes = true
	add(c, "an empty Content-Length", request{path: opList, noLength: true, headers: []string{"Content-Length: "}, body: list1}, 400,
		"Content-Length is empty: send the body's length in bytes (RFC 9110 §8.6)", false)
	last().closes = true
	add(c, "two conflicting Content-Lengths", request{path: opList, noLength: true, headers: []string{"Content-Length: 20", "Content-Length: 21"}, body: list1}, 400,
		`Request has 2 different Content-Length values ("20, 21"): its length is ambiguous, send one (RFC 9112 §6.3)`, false)
	last().closes = true
	add(c, "Content-Length and Transfer-Encoding both", request{path: opList, noLength: true, headers: []string{"Content-Length: 20", "Transfer-Encoding: chunked"}, body: chunked(list1)}, 400,
		"Request has both Content-Length and Transfer-Encoding, so its length is ambiguous (RFC 9112 §6.1): send one of them", false)
	last().closes = true
	add(c, "Transfer-Encoding before Content-Length", request{path: opList, noLength: true, headers: []string{"transfer-encoding: CHUNKED", "content-length: 0"}, body: chunked(list1)}, 400,
		"Request has both Content-Length and Transfer-Encoding, so its length is ambiguous (RFC 9112 §6.1): send one of them", false)
	last().closes = true
	add(c, "Transfer-Encoding over HTTP/1.0", request{raw: "POST " + base + "/campaign/list HTTP/1.0\r\nHost: x\r\nContent-Type: application/json\r\nConnection: keep-alive\r\n" +
		"Transfer-Encoding: chunked\r\nContent-Length: 20\r\n\r\n" + list1}, 400,
		"Transfer-Encoding is not defined in HTTP/1.0, so the request's length is ambiguous (RFC 9112 §6.1): send Content-Length alone", false)
	last().closes = true
	// What net/http refuses itself, answered in JSON by the edge
	// (refusal.go), with net/http's status and close.
	add(c, "an unknown Transfer-Encoding", request{path: opList, noLength: true, headers: []string{"Transfer-Encoding: gzip"}, body: list1}, 501,
		`Transfer-Encoding "gzip" is not supported: the only transfer coding accepted is chunked, sent once (RFC 9112 §6.1)`, false)
	last().closes = true
	add(c, "Transfer-Encoding chunked twice", request{path: opList, noLength: true, headers: []string{"Transfer-Encoding: chunked", "Transfer-Encoding: chunked"}, body: chunked(list1)}, 501,
		`Transfer-Encoding "chunked, chunked" is not supported: the only transfer coding accepted is chunked, sent once (RFC 9112 §6.1)`, false)
	last().closes = true
	add(c, "a request line that is not HTTP", request{raw: "HELLO THERE\r\n\r\n"}, 400,
		`Request line "HELLO THERE" is not a method, a target and an HTTP version separated by single spaces (RFC 9112 §3)`, false)
	last().closes = true
	add(c, "a method that is not a token", request{raw: "PO(ST " + base + "/campaign/list HTTP/1.1\r\nHost: x\r\n\r\n"}, 400,
		`Method "PO(ST" is not a token (RFC 9110 §9.1)`, false)
	last().closes = true
	add(c, "a malformed HTTP version", request{raw: "POST " + base + "/campaign/list HTTP/1\r\nHost: x\r\n\r\n"}, 400,
		`HTTP version "HTTP/1" is malformed: send HTTP/1.1 (RFC 9112 §2.3)`, false)
	last().closes = true
	add(c, "a request target that is not a URI", request{path: base + "/campaign/%zz", body: list1}, 400,
		`Request target "/v3/partner/webhook/campaign/%zz" is not a valid URI: send an absolute path such as /v3/partner/webhook/campaign/list (RFC 9112 §3.2)`, false)
	last().closes = true
	add(c, "no Host header", request{raw: "POST " + base + "/campaign/list HTTP/1.1\r\nContent-Length: 0\r\n\r\n"}, 400,
		"Request has no Host header: HTTP/1.1 requires one (RFC 9112 §3.2)", false)
	last().closes = true
	add(c, "two Host headers", request{raw: "POST " + base + "/campaign/list HTTP/1.1\r\nHost: x\r\nHost: y\r\nContent-Length: 0\r\n\r\n"}, 400,
		"Request has 2 Host headers: send exactly one (RFC 9112 §3.2)", false)
	last().closes = true
	add(c, "a Host that is not a host", request{raw: "POST " + base + "/campaign/list HTTP/1.1\r\nHost: exa mple\r\nContent-Length: 0\r\n\r\n"}, 400,
		`Host header "exa mple" is not a valid host (RFC 9112 §3.2, RFC 3986 §3.2.2)`, false)
	last().closes = true
	add(c, "HTTP/3.0 in the request line", request{raw: "POST " + base + "/campaign/list HTTP/3.0\r\nHost: x\r\n\r\n"}, 505,
		"HTTP version HTTP/3.0 is not supported: send HTTP/1.1, or HTTP/2 negotiated by TLS ALPN (RFC 9110 §15.6.6)", false)
	last().closes = true
	add(c, "a header line without a colon", request{path: opList, headers: []string{"NoColonHere"}, body: list1}, 400,
		`Header line "NoColonHere" has no colon: each header is a name, a colon and a value (RFC 9112 §5)`, false)
	last().closes = true
	add(c, "a header name that is not a token", request{path: opList, headers: []string{"X(Y): 1"}, body: list1}, 400,
		`Header name "X(Y)" is not a token (RFC 9110 §5.1)`, false)
	last().closes = true
	add(c, "whitespace before a header's colon", request{path: opList, headers: []string{"X-Trace : 1"}, body: list1}, 400,
		`Header name "X-Trace " has whitespace before its colon (RFC 9112 §5.1)`, false)
	last().closes = true
	add(c, "a first header line that starts with whitespace", request{raw: "POST " + base + "/campaign/list HTTP/1.1\r\n X-Trace: 1\r\nHost: x\r\n\r\n"}, 400,
		"The first header line starts with whitespace, which would fold it onto the request line (RFC 9112 §5.2)", false)
	last().closes = true
	add(c, "x-api-key twice over HTTP/2", request{path: opList, body: list1, h2: true, headers: []string{"x-api-key: wrong"}}, 401, spec.MsgInvalidCredentials, false)
	add(c, "campaign%2Flist over HTTP/2", request{path: base + "/campaign%2Flist", body: list1, h2: true}, 404, notFound(base+"/campaign%2Flist"), false)
	add(c, "a Content-Length over the cap over HTTP/2, body never sent", request{path: opAdd, h2: true, hang: 10 << 20}, 413, "Request body exceeds 65536 bytes", false)

	// The control API's own bodies.
	c = "Control API"
	ctl := func(method, path, body string) request {
		return request{admin: true, method: method, path: path, body: body}
	}
	add(c, "a fault with data after the object", ctl("POST", "/faults", `{"operation":"*","kind":"error"} x`), 400, "Control API: Request body is not valid JSON: data after the object", false)
	add(c, "a fault followed by a second object", ctl("POST", "/faults", `{"operation":"*","kind":"error"}{}`), 400, "Control API: Request body is not valid JSON: data after the object", false)
	add(c, "a fault with an unknown field", ctl("POST", "/faults", `{"operation":"*","kind":"error","colour":"red"}`), 400, `Control API: bad JSON body: unknown field "colour"`, false)
	add(c, "a fault with a count as a string", ctl("POST", "/faults", `{"operation":"*","kind":"error","count":"3"}`), 400, "~Control API: bad JSON body: cannot unmarshal string", false)
	add(c, "a fault with a field twice", ctl("POST", "/faults", `{"operation":"*","kind":"delay","kind":"error"}`), 400, "Control API: Field kind is given more than once", false)
	add(c, "a fault with invalid UTF-8", ctl("POST", "/faults", "{\"operation\":\"*\xff\",\"kind\":\"error\"}"), 400, "Control API: operation is not valid UTF-8", false)
	add(c, "a fault as an array", ctl("POST", "/faults", `[{"operation":"*","kind":"error"}]`), 400, "Control API: Request body must be a JSON object", false)
	add(c, "a fault as null", ctl("POST", "/faults", `null`), 400, "Control API: Request body must be a JSON object", false)
	add(c, "a fault with count 0", ctl("POST", "/faults", `{"operation":"*","kind":"error","count":0}`), 400, "count must be a whole number between 1 and 1000000", false)
	add(c, "a fault body over 1 MiB, chunked", request{admin: true, path: "/faults", noLength: true, headers: []string{"Transfer-Encoding: chunked"},
		body: chunked(`{"operation":"` + strings.Repeat("*", 1<<20) + `"}`)}, 413, "Request body exceeds 1048576 bytes", false)
	add(c, "a declared fault body over 1 MiB, never sent", request{admin: true, path: "/faults", noLength: true, headers: []string{"Content-Length: 2097152"}}, 413, "Request body exceeds 1048576 bytes", false)
	last().closes = true
	add(c, "a fault with Content-Length and Transfer-Encoding both", request{admin: true, path: "/faults", noLength: true,
		headers: []string{"Content-Length: 5", "Transfer-Encoding: chunked"}, body: chunked(`{"operation":"*","kind":"error"}`)}, 400,
		"Request has both Content-Length and Transfer-Encoding, so its length is ambiguous (RFC 9112 §6.1): send one of them", false)
	last().closes = true
	add(c, "a fault with an unknown Expect", request{admin: true, path: "/faults", headers: []string{"Expect: teapot"}, body: `{"operation":"*","kind":"error"}`}, 417,
		"Expect teapot is not supported: the only expectation is 100-continue", false)
	last().closes = true
	add(c, "a bad Content-Length on the control API", request{admin: true, path: "/faults", noLength: true, headers: []string{"Content-Length: 1e3"}, body: `{}`}, 400,
		`Content-Length "1e3" is not a number of bytes (RFC 9110 §8.6)`, false)
	last().closes = true
	add(c, "an unknown Transfer-Encoding on the control API", request{admin: true, path: "/faults", noLength: true, headers: []string{"Transfer-Encoding: gzip, chunked"}, body: chunked(`{}`)}, 501,
		`Transfer-Encoding "gzip, chunked" is not supported: the only transfer coding accepted is chunked, sent once (RFC 9112 §6.1)`, false)
	last().closes = true
	add(c, "no Host header on the control API", request{admin: true, raw: "GET /faults HTTP/1.1\r\nAuthorization: Bearer test-token\r\n\r\n"}, 400,
		"Request has no Host header: HTTP/1.1 requires one (RFC 9112 §3.2)", false)
	last().closes = true
	add(c, "HTTP/2.0 in the request line on the control API", request{admin: true, raw: "GET /faults HTTP/2.0\r\nHost: x\r\n\r\n"}, 505,
		"HTTP version HTTP/2.0 is not supported: send HTTP/1.1, or HTTP/2 negotiated by TLS ALPN (RFC 9110 §15.6.6)", false)
	last().closes = true
	add(c, "a header line without a colon on the control API", request{admin: true, method: "GET", path: "/faults", noLength: true, headers: []string{"NoColonHere"}}, 400,
		`Header line "NoColonHere" has no colon: each header is a name, a colon and a value (RFC 9112 §5)`, false)
	last().closes = true
	add(c, "2 MiB of headers on the control API", request{admin: true, method: "GET", path: "/faults", noLength: true, headers: []string{"X-Padding: " + strings.Repeat("p", 2<<20)}}, 431,
		"Request headers exceed 65536 bytes", false)
	last().closes = true
	add(c, "a clock change with data after it", ctl("POST", "/clock", `{"advance":"1h"} {}`), 400, "Control API: Request body is not valid JSON: data after the object", false)
	add(c, "a clock freeze as a string", ctl("POST", "/clock", `{"freeze":"yes"}`), 400, "~Control API: bad JSON body: cannot unmarshal string", false)
	add(c, "a rate reset with an account as a number", ctl("POST", "/rate-limit/reset", `{"accountId":5}`), 400, "~Control API: bad JSON body: cannot unmarshal number", false)
	add(c, "a fault without the token", request{admin: true, noAuth: true, path: "/faults", body: `{"operation":"*","kind":"error"}`}, 401, "Control API: missing or wrong bearer token", false)
	add(c, "contacts with a negative limit", request{admin: true, method: "GET", path: "/contacts?limit=-1", noLength: true}, 400, "limit must be a whole number", false)
	return rows
}

func chunked(body string) string {
	var b strings.Builder
	for len(body) > 0 {
		n := min(len(body), 8192)
		fmt.Fprintf(&b, "%x\r\n%s\r\n", n, body[:n])
		body = body[n:]
	}
	b.WriteString("0\r\n\r\n")
	return b.String()
}

func utf16LE(s string) string {
	var b []byte
	for _, c := range []byte(s) {
		b = append(b, c, 0)
	}
	return string(b)
}

func utf16BE(s string) string {
	var b []byte
	for _, c := range []byte(s) {
		b = append(b, 0, c)
	}
	return string(b)
}

func gzipped(s string) string {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	_, _ = zw.Write([]byte(s))
	_ = zw.Close()
	return b.String()
}

func manyHeaders(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("X-Pad-%d: %s", i, strings.Repeat("p", 24))
	}
	return out
}

// matrix is the simulator the rows go to, and one with a short read timeout.
type matrix struct {
	t          *testing.T
	h, slow    *harness
	pool       *x509.CertPool
	h2         *http.Client
	rateLimit  int
	alpha, bra *simulator.Account
}

func openMatrix(t *testing.T) *matrix {
	h := MustOpenServer(t, sim.Config{})
	slow := mustOpenWithReadTimeout(t, time.Second)
	pool := h.client.Transport.(*http.Transport).TLSClientConfig.RootCAs
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &matrix{t: t, h: h, slow: slow, pool: pool, h2: &http.Client{Transport: tr, Timeout: 10 * time.Second},
		rateLimit: spec.RateLimit, alpha: h.alpha, bra: h.bravo}
}

// mustOpenWithReadTimeout is MustOpenServer with the server's read timeout
// set, so that a stalled body is answered within the test.
func mustOpenWithReadTimeout(t *testing.T, d time.Duration) *harness {
	t.Helper()
	return openHarness(t, sim.Config{}, d, false)
}

func (m *matrix) expand(s string) string {
	return strings.NewReplacer("{key}", m.alpha.APIKey, "{secret}", m.alpha.APISecret, "{account}", m.alpha.AccountID,
		"{bravo}", m.bra.AccountID).Replace(s)
}

// bytes renders r as HTTP/1.1.
func (m *matrix) bytes(r request, h *harness) string {
	if r.raw != "" {
		return r.raw
	}
	method := r.method
	if method == "" {
		method = http.MethodPost
	}
	target := r.path
	if !strings.HasPrefix(target, "/") && !strings.Contains(target, "://") && target != "*" {
		target = spec.BasePath + "/" + target
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\n", method, target)
	if !r.noAuth {
		if r.admin {
			b.WriteString("Authorization: Bearer test-token\r\n")
		} else {
			fmt.Fprintf(&b, "x-api-key: %s\r\nx-api-secret: %s\r\nx-account-id: %s\r\n", m.alpha.APIKey, m.alpha.APISecret, m.alpha.AccountID)
		}
	}
	if !r.noType {
		b.WriteString("Content-Type: application/json\r\n")
	}
	for _, l := range r.headers {
		b.WriteString(m.expand(l) + "\r\n")
	}
	if !r.noLength {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", len(r.body))
	}
	b.WriteString("Connection: close\r\n\r\n")
	b.WriteString(r.body)
	return b.String()
}

func hostOf(rawURL string) string {
	u, _ := url.Parse(rawURL)
	return u.Host
}

// answer is what came back.
type answer struct {
	status      int
	contentType string
	allow       string
	body        []byte
	closed      bool // the server closed the connection after the answer
	noAnswer    bool
}

func (m *matrix) send(t *testing.T, r request) answer {
	h := m.h
	if r.slow {
		h = m.slow
	}
	if r.h2 {
		return m.sendH2(t, h, r)
	}
	addr := hostOf(h.sim.URL())
	if r.admin {
		addr = hostOf(h.sim.AdminURL())
	}
	var conn net.Conn
	var err error
	if r.plain {
		conn, err = net.Dial("tcp", addr)
	} else {
		pool := h.client.Transport.(*http.Transport).TLSClientConfig.RootCAs
		conn, err = tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, NextProtos: []string{"http/1.1"}})
	}
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	go func() { _, _ = io.WriteString(conn, m.bytes(r, h)) }() // the server may answer before it has read everything
	br := bufio.NewReader(conn)
	if r.raw != "" && r.plain {
		data, _ := io.ReadAll(br)
		return answer{noAnswer: !bytes.HasPrefix(data, []byte("HTTP/"))}
	}
	method := r.method
	if method == "" {
		method = http.MethodPost
	}
	resp, err := http.ReadResponse(br, &http.Request{Method: method})
	for err == nil && resp.StatusCode == http.StatusContinue {
		resp, err = http.ReadResponse(br, &http.Request{Method: method})
	}
	if err != nil {
		t.Fatalf("no HTTP answer: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read answer: %v", err)
	}
	// Connection: close was asked, so EOF alone proves nothing: closed is
	// the server's own Connection: close or a cut without it.
	_, rerr := br.ReadByte()
	return answer{status: resp.StatusCode, contentType: resp.Header.Get("Content-Type"), allow: resp.Header.Get("Allow"), body: body,
		closed: resp.Close && errors.Is(rerr, io.EOF)}
}

func (m *matrix) sendH2(t *testing.T, h *harness, r request) answer {
	target := r.path
	if !strings.HasPrefix(target, "/") {
		target = spec.BasePath + "/" + target
	}
	var body io.Reader = strings.NewReader(r.body)
	if r.hang > 0 {
		pr, pw := io.Pipe()
		defer pw.Close()
		body = pr
	}
	req, err := http.NewRequest(http.MethodPost, "https://"+hostOf(h.sim.URL())+target, body)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = int64(len(r.body))
	if r.hang > 0 {
		req.ContentLength = r.hang
	}
	apitest.SetCredentials(req.Header, m.alpha)
	for _, l := range r.headers {
		k, v, _ := strings.Cut(m.expand(l), ":")
		req.Header.Add(k, strings.TrimSpace(v))
	}
	resp, err := m.h2.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.ProtoMajor != 2 {
		t.Fatalf("answered over %s, want HTTP/2", resp.Proto)
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{status: resp.StatusCode, contentType: resp.Header.Get("Content-Type"), body: data}
}

// state is everything a request could change: the stored contacts of
// every account, the pending faults, the clock.
func (m *matrix) state(t *testing.T, h *harness) string {
	var out strings.Builder
	for _, p := range []string{"/contacts?limit=1000", "/faults", "/clock"} {
		req, _ := http.NewRequest(http.MethodGet, h.sim.AdminURL()+p, nil)
		req.Header.Set("Authorization", "Bearer test-token")
		resp, err := h.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", p, resp.StatusCode, b)
		}
		out.Write(b)
	}
	return out.String()
}

// remaining spends one request of alpha's budget and returns what is left
// after it, as X-RateLimit-Remaining says.
func (m *matrix) remaining(t *testing.T, h *harness) int {
	req, _ := http.NewRequest(http.MethodPost, h.sim.URL()+"/"+opList, strings.NewReader(list1))
	for k, v := range map[string]string{"Content-Type": "application/json", "x-api-key": m.alpha.APIKey,
		"x-api-secret": m.alpha.APISecret, "x-account-id": m.alpha.AccountID} {
		req.Header.Set(k, v)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	n, err := strconv.Atoi(resp.Header.Get("X-RateLimit-Remaining"))
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("probe: %d, X-RateLimit-Remaining %q", resp.StatusCode, resp.Header.Get("X-RateLimit-Remaining"))
	}
	return n
}

func (m *matrix) resetRate(t *testing.T, h *harness) {
	h.admin().POST("/rate-limit/reset").WithJSON(map[string]string{"accountId": m.alpha.AccountID}).Expect().Status(http.StatusOK)
}

// TestBadInputMatrix sends every class of bad input to a real simulator
// over HTTPS (or below it) and checks the answer (status, a JSON error
// with its message, the connection closed where it must be) and that nothing
// stored changed: contacts, faults, clock, and the rate budget, which only
// authenticated requests spend.
func TestBadInputMatrix(t *testing.T) {
	rows := badInputMatrix()
	if len(rows) < 60 {
		t.Fatalf("%d classes, want at least 60", len(rows))
	}
	m := openMatrix(t)
	for _, h := range []*harness{m.h, m.slow} {
		h.as(h.alpha).POST("/contact/add").WithJSON(map[string]any{"email": "keep@example.com", "tag": []string{"a"}}).
			Expect().Status(http.StatusOK)
	}
	seen := map[string]bool{}
	for _, tt := range rows {
		name := tt.class + ": " + tt.name
		if seen[name] {
			t.Fatalf("two rows named %q", name)
		}
		seen[name] = true
		t.Run(name, func(t *testing.T) {
			h := m.h
			if tt.req.slow {
				h = m.slow
			}
			m.resetRate(t, h)
			before := m.state(t, h)
			got := m.send(t, tt.req)
			if tt.noAnswer {
				if !got.noAnswer {
					t.Fatal("got an HTTP answer, want the connection closed without one")
				}
			} else {
				checkAnswer(t, tt, got)
			}
			if after := m.state(t, h); after != before {
				t.Fatalf("stored state changed:\nbefore %s\nafter  %s", before, after)
			}
			want := m.rateLimit - 1
			if tt.counted {
				want--
			}
			if got := m.remaining(t, h); got != want {
				t.Fatalf("rate budget left %d after the request and a probe, want %d (counted=%v)", got, want, tt.counted)
			}
		})
	}
}

func checkAnswer(t *testing.T, tt row, got answer) {
	t.Helper()
	if got.status != tt.status {
		t.Fatalf("status %d, want %d; body %q", got.status, tt.status, got.body)
	}
	if tt.closes && !got.closed {
		t.Errorf("the connection stayed open after the answer")
	}
	if tt.req.method == http.MethodHead {
		if len(got.body) != 0 || got.contentType != "application/json" {
			t.Fatalf("HEAD answer: Content-Type %q, %d body bytes", got.contentType, len(got.body))
		}
		return
	}
	if got.contentType != "application/json" {
		t.Fatalf("Content-Type %q, want application/json; body %q", got.contentType, got.body)
	}
	var obj map[string]any
	if err := json.Unmarshal(got.body, &obj); err != nil {
		t.Fatalf("body is not a JSON object: %v: %q", err, got.body)
	}
	if tt.status < 400 {
		if _, isErr := obj["error"]; isErr {
			t.Fatalf("accepted with an error body: %s", got.body)
		}
		return
	}
	msg, ok := obj["error"].(string)
	if !ok || len(obj) != 1 || msg == "" {
		t.Fatalf(`body %s, want {"error": "<message>"}`, got.body)
	}
	if want, ok := strings.CutPrefix(tt.msg, "~"); ok {
		if !strings.Contains(msg, want) {
			t.Fatalf("message %q, want one containing %q", msg, want)
		}
	} else if msg != tt.msg {
		t.Fatalf("message %q, want %q", msg, tt.msg)
	}
	if strings.Contains(msg, "127.0.0.1") {
		t.Fatalf("message leaks an address: %q", msg)
	}
}

// TestBadInputDoc keeps docs/bad-input.md the matrix's own table:
// go test ./simulator/partnerapi -run TestBadInputDoc -update rewrites it.
func TestBadInputDoc(t *testing.T) {
	got := renderBadInputDoc(badInputMatrix())
	path := filepath.Join("..", "..", "docs", "bad-input.md")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./simulator/partnerapi -run TestBadInputDoc -update writes it)", err)
	}
	if string(want) != got {
		t.Fatal("docs/bad-input.md is not the matrix's table: go test ./simulator/partnerapi -run TestBadInputDoc -update")
	}
}

func renderBadInputDoc(rows []row) string {
	var b strings.Builder
	b.WriteString(`# Bad input: every class and its answer

Generated from the matrix in simulator/partnerapi/badinput_test.go (TestBadInputMatrix), which sends each
row to a real simulator over HTTPS and checks the answer and that nothing stored changed (contacts,
faults, clock). Rewrite with ` + "`go test ./simulator/partnerapi -run TestBadInputDoc -update`" + `. Section numbers (§) are those of the spec
([spec-sections.md](spec-sections.md)); the choices behind each answer are in [simulator.md](simulator.md).

Columns: the class; the request (the operation or path, and what is wrong with it); the status; the
` + "`error`" + ` message of the JSON body (` + "`…`" + ` before or after: the message contains this; "(accepted)": a 2xx
answer on purpose); **budget**: whether the request spends one of the account's rate budget (spec §8:
authenticated requests count, refused ones included; see [simulator.md](simulator.md#rate-limit)). Every row with an
HTTP answer is answered in JSON, including what Go's HTTP server refuses before any handler runs (a
malformed head, a bad Content-Length, no Host, an unsupported version or Transfer-Encoding): the edge
puts a JSON answer with net/http's status in place of its text/plain one ([simulator.md, "Known
limits"](simulator.md#known-limits)).

| # | class | request | status | answer | budget |
|---|---|---|---|---|---|
`)
	for i, r := range rows {
		target := r.req.path
		if r.req.raw != "" {
			target = "raw bytes"
		} else if r.req.admin {
			target = "control " + target
		}
		if len(target) > 60 {
			target = target[:60] + "…"
		}
		transport := ""
		switch {
		case r.req.plain:
			transport = " (plain TCP)"
		case r.req.h2:
			transport = " (HTTP/2)"
		}
		method := r.req.method
		if method == "" && r.req.raw == "" {
			method = "POST"
		}
		req := strings.TrimSpace(method + " `" + target + "`" + transport + ": " + r.name)
		status, ans := strconv.Itoa(r.status), r.msg
		switch {
		case r.noAnswer:
			status, ans = "none", "connection closed (TLS alert), no HTTP answer"
		case r.status < 400:
			ans = "(accepted)"
		case r.req.method == http.MethodHead:
			ans = "(no body: HEAD), Allow: POST"
		case strings.HasPrefix(ans, "~"):
			ans = "…" + strings.TrimPrefix(ans, "~") + "…"
		}
		if r.closes {
			ans += " (connection closed)"
		}
		budget := "no"
		if r.counted {
			budget = "yes"
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s |\n", i+1, r.class, mdEscape(req), status, mdEscape(ans), budget)
	}
	return b.String()
}

func mdEscape(s string) string {
	s = strings.ToValidUTF8(s, "�")
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '|':
			b.WriteString(`\|`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\x%02x", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
