package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// The --image runs themselves need Docker: simulator/container's tests run
// them. These check what happens before any container is started.

func TestImageFlagsParse(t *testing.T) {
	env := map[string]string{
		"CONFORMANCE_IMAGE":     "vendor/api:1",
		"CONFORMANCE_IMAGE_ENV": "A=1\nB=x=y\n",
	}
	o, err := parseFlags([]string{"--image-port", "9443"}, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if got, want := o.image.name, "vendor/api:1"; got != want {
		t.Errorf("image=%q, want %q", got, want)
	}
	if got := o.image.env.m; len(got) != 2 || got["A"] != "1" || got["B"] != "x=y" {
		t.Errorf("image env=%v, want A=1 and B=x=y (one per line, split at the first =)", got)
	}
	if got, want := o.image.baseURL(o.cfg.BaseURL), "https://127.0.0.1:9443/v3/partner/webhook"; got != want {
		t.Errorf("default base URL=%q, want %q", got, want)
	}

	o, err = parseFlags([]string{"--image", "x", "--base-url", "https://localhost:9443/v3/partner/webhook"}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if got, want := o.image.baseURL(o.cfg.BaseURL), "https://localhost:9443/v3/partner/webhook"; got != want {
		t.Errorf("base URL=%q, want the one given, %q", got, want)
	}
}

func TestImageUsageErrorsStartNothing(t *testing.T) {
	creds := []string{"--api-key", "k", "--api-secret", "s", "--account-id", "a", "--report-dir", ""}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"an --image-env without =", append([]string{"--image", "x", "--image-env", "NOVALUE"}, creds...), `"NOVALUE" is not K=V`},
		{"a port out of range", append([]string{"--image", "x", "--image-port", "70000"}, creds...), "--image-port 70000 is not a TCP port"},
		{"no wait at all", append([]string{"--image", "x", "--image-timeout", "0s"}, creds...), "--image-timeout must be positive"},
		{"no credentials", []string{"--image", "x", "--report-dir", ""}, "x-api-key, x-api-secret, x-account-id are missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if got := run(context.Background(), tt.args, &stdout, &stderr); got != exitUsage {
				t.Errorf("exit=%d, want %d; stderr %s", got, exitUsage, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("stderr %q does not say %q", stderr.String(), tt.want)
			}
			if strings.Contains(stderr.String(), "testcontainers") {
				t.Errorf("a container was asked for: %s", stderr.String())
			}
		})
	}
}
