// Package mask hides the credentials of spec §5 (and the control API's
// token) wherever the suite shows them: in the headers of a request by
// name (Header), and, through Secrets, wherever else a run's values
// appear (a body or header in which a target echoes one, a failure
// message, a URL), in the reports, the HAR file, the certificate and the
// runner's output.
package mask

import (
	"fmt"
	"net/http"
	"strings"
)

// Credential shows enough of a key or an account id to recognise it and no
// more: its first four characters and its length.
func Credential(v string) string {
	if len(v) <= 8 {
		return strings.Repeat("*", len(v))
	}
	return v[:4] + "…(" + fmt.Sprint(len(v)) + " chars)"
}

// Secret shows only a secret's length.
func Secret(v string) string { return fmt.Sprintf("****(%d chars)", len(v)) }

// HeaderValue masks the value of a header that carries a credential and
// returns any other value as it is.
func HeaderValue(name, v string) string {
	switch http.CanonicalHeaderKey(name) {
	case "X-Api-Secret", "Authorization":
		return Secret(v)
	case "X-Api-Key", "X-Account-Id":
		return Credential(v)
	}
	return v
}

// Header returns a copy of h with every credential masked.
func Header(h http.Header) http.Header {
	out := make(http.Header, len(h))
	for k, vs := range h {
		for _, v := range vs {
			out[k] = append(out[k], HeaderValue(k, v))
		}
	}
	return out
}
