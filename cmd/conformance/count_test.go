package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

// TestOneCountTheVerdicts: without a second account some scenarios are
// skipped; godog would count them as passed in its footer ("80 scenarios
// (80 passed)") under a verdict of "77 passed, 3 skipped". The run's
// output and its pretty.txt carry the verdict's count only (issue 27).
func TestOneCountTheVerdicts(t *testing.T) {
	s := MustOpenSimulator(t)
	args := withoutFlags(simulatorArgs(t, s), "--second-api-key", "--second-api-secret", "--second-account-id")
	for _, format := range []string{"pretty", "progress"} {
		t.Run(format, func(t *testing.T) {
			dir := t.TempDir()
			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), append(slices.Clone(args), "--format", format, "--report-dir", dir), &stdout, &stderr); code != exitPass {
				t.Fatalf("exit %d\n%s", code, stderr.String())
			}
			verdict := regexp.MustCompile(`\n  (\d+) passed, 0 failed, ([1-9]\d*) skipped`).FindStringSubmatch(stdout.String())
			if verdict == nil {
				t.Fatalf("no verdict count with skipped scenarios in:\n%s", tail(stdout.String()))
			}
			godogCount := regexp.MustCompile(`(?m)^\d+ scenarios \(|^\d+ steps \(`)
			if m := godogCount.FindString(stdout.String()); m != "" {
				t.Errorf("stdout carries godog's own count %q beside the verdict's %s passed, %s skipped:\n%s", m, verdict[1], verdict[2], tail(stdout.String()))
			}
			file, err := os.ReadFile(filepath.Join(dir, reportFiles[format]))
			if err != nil {
				t.Fatal(err)
			}
			if len(file) == 0 || godogCount.Match(file) {
				t.Errorf("%s is empty or carries godog's own count:\n%s", reportFiles[format], tail(string(file)))
			}
		})
	}
}

// tail is the end of a long output, for a failure message.
func tail(s string) string {
	if len(s) > 1500 {
		return "…" + s[len(s)-1500:]
	}
	return s
}
