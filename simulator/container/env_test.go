package container

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestSetDefaults(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want map[string]string // after
		set  []string
	}{
		{"an empty environment gets both", map[string]string{},
			map[string]string{"TESTCONTAINERS_RYUK_DISABLED": "true", "TESTCONTAINERS_HOST_OVERRIDE": "127.0.0.1"},
			[]string{"TESTCONTAINERS_RYUK_DISABLED", "TESTCONTAINERS_HOST_OVERRIDE"}},
		{"a user's values are kept, even empty ones", map[string]string{"TESTCONTAINERS_RYUK_DISABLED": "false", "TESTCONTAINERS_HOST_OVERRIDE": ""},
			map[string]string{"TESTCONTAINERS_RYUK_DISABLED": "false", "TESTCONTAINERS_HOST_OVERRIDE": ""}, nil},
		{"a local socket engine gets the override", map[string]string{"DOCKER_HOST": "unix:///var/run/docker.sock"},
			map[string]string{"TESTCONTAINERS_HOST_OVERRIDE": "127.0.0.1"}, []string{"TESTCONTAINERS_RYUK_DISABLED", "TESTCONTAINERS_HOST_OVERRIDE"}},
		{"a loopback TCP engine gets the override", map[string]string{"DOCKER_HOST": "tcp://127.0.0.1:2375"},
			map[string]string{"TESTCONTAINERS_HOST_OVERRIDE": "127.0.0.1"}, []string{"TESTCONTAINERS_RYUK_DISABLED", "TESTCONTAINERS_HOST_OVERRIDE"}},
		{"a remote engine keeps testcontainers' own guess", map[string]string{"DOCKER_HOST": "tcp://docker.example:2376"},
			map[string]string{"TESTCONTAINERS_RYUK_DISABLED": "true"}, []string{"TESTCONTAINERS_RYUK_DISABLED"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{}
			for k, v := range tt.env {
				env[k] = v
			}
			lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
			set := func(k, v string) error { env[k] = v; return nil }
			if got := setDefaults(lookup, set); !slices.Equal(got, tt.set) {
				t.Errorf("set %v, want %v", got, tt.set)
			}
			for k, want := range tt.want {
				if got, ok := env[k]; !ok || got != want {
					t.Errorf("%s=%q (set %v), want %q", k, got, ok, want)
				}
			}
			if _, ok := env["TESTCONTAINERS_HOST_OVERRIDE"]; !ok && slices.Contains(tt.set, "TESTCONTAINERS_HOST_OVERRIDE") {
				t.Error("TESTCONTAINERS_HOST_OVERRIDE reported set but absent")
			}
			if v, ok := env["TESTCONTAINERS_HOST_OVERRIDE"]; ok && strings.HasPrefix(tt.env["DOCKER_HOST"], "tcp://docker.example") {
				t.Errorf("TESTCONTAINERS_HOST_OVERRIDE=%q for a remote engine", v)
			}
		})
	}
}

func TestStartErrorNamesTheCausesOfATimeoutOnly(t *testing.T) {
	timeout := startError(context.Background(), "img:1", context.DeadlineExceeded, "    | listening")
	if !errors.Is(timeout, context.DeadlineExceeded) {
		t.Errorf("%v does not wrap context.DeadlineExceeded", timeout)
	}
	for _, want := range []string{"likely causes", "Docker engine", "TESTCONTAINERS_HOST_OVERRIDE", "Ryuk", "img:1", "port", "    | listening"} {
		if !strings.Contains(timeout.Error(), want) {
			t.Errorf("timeout error lacks %q:\n%v", want, timeout)
		}
	}
	other := errors.New("no such image")
	if got := startError(context.Background(), "img:1", other, ""); got != other {
		t.Errorf("startError changed %v into %v", other, got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got := startError(ctx, "img:1", context.DeadlineExceeded, ""); got != context.DeadlineExceeded {
		t.Errorf("the caller's own cancellation became %v", got)
	}
}
