package suite

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/partner-v3/conformance-kit/simulator/control"
	"github.com/partner-v3/conformance-kit/steps/internal/target"
)

// TestPreflightNoOperation: at an address where every path is 404,
// preflight probes each operation of the spec once, Campaign List first,
// and names them all in the order it probed them.
func TestPreflightNoOperation(t *testing.T) {
	var mu sync.Mutex
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		http.NotFound(w, r)
	}))
	defer srv.Close()
	base, err := url.Parse(srv.URL + "/v2/partner/webhook")
	if err != nil {
		t.Fatal(err)
	}
	r := &run{Target: target.Target{BaseURL: base, Client: srv.Client(), Primary: control.Credentials{APIKey: "k", APISecret: "s", AccountID: "a"}}}
	err = r.preflight(context.Background())
	if !errors.Is(err, ErrPreflight) {
		t.Fatalf("preflight = %v, want ErrPreflight", err)
	}
	if want := "all answered 404"; !strings.Contains(err.Error(), "Campaign List, Campaign Stats and Add Contact "+want) {
		t.Errorf("preflight = %q, want the three operations named, then %q", err, want)
	}
	want := []string{"/v2/partner/webhook/campaign/list", "/v2/partner/webhook/campaign/stats", "/v2/partner/webhook/contact/add"}
	if !slices.Equal(paths, want) {
		t.Errorf("probed %v, want %v", paths, want)
	}
}

// TestAndList: names as a sentence words them.
func TestAndList(t *testing.T) {
	for _, tt := range []struct {
		in   []string
		want string
	}{{nil, ""}, {[]string{"a"}, "a"}, {[]string{"a", "b"}, "a and b"}, {[]string{"a", "b", "c"}, "a, b and c"}} {
		if got := andList(tt.in); got != tt.want {
			t.Errorf("andList(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
