package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		wantNames []string
		wantErr   string
	}{
		{name: "no names build both", args: nil, wantNames: []string{"simulator", "conformance"}},
		{name: "one name builds one", args: []string{"-tag", "v1", "conformance"}, wantNames: []string{"conformance"}},
		{name: "an unknown name is refused", args: []string{"runner"}, wantErr: `unknown image "runner"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseFlags(tt.args, &bytes.Buffer{})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err=%v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(o.names, tt.wantNames) {
				t.Errorf("names=%v, want %v", o.names, tt.wantNames)
			}
		})
	}
}

func TestMissingCABundleIsNamed(t *testing.T) {
	o := &options{repo: "r", tag: "t", caBundle: "/nonexistent/ca.crt", docker: "docker"}
	dir := t.TempDir()
	err := o.build(t.Context(), dir, dir, dir, image{name: "conformance", caBundle: true}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "-ca-bundle") {
		t.Fatalf("err=%v, want one naming -ca-bundle", err)
	}
}
