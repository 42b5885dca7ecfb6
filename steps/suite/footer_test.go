package suite

import (
	"testing"
)

// TestDropCounts: godog's count lines go, whatever colours, and what else
// its summary says stays.
func TestDropCounts(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"pretty's footer", "\n80 scenarios (80 passed)\n1234 steps (1234 passed)\n1m2.5s\n", ""},
		{"coloured", "\n80 scenarios (\x1b[32m77 passed\x1b[0m, \x1b[31m3 failed\x1b[0m)\n9 steps (\x1b[32m9 passed\x1b[0m)\n312.5ms\n", ""},
		{"no scenarios", "\nNo scenarios\nNo steps\n0s\n", ""},
		{"progress's failed steps are kept",
			"...F 4\n\n--- Failed steps:\n\n  Scenario: A page # a.feature:3\n    Then it holds # a.feature:4\n      Error: boom\n\n\n2 scenarios (1 passed, 1 failed)\n4 steps (3 passed, 1 failed)\n1.2s\n",
			"...F 4\n\n--- Failed steps:\n\n  Scenario: A page # a.feature:3\n    Then it holds # a.feature:4\n      Error: boom\n\n"},
		{"the seed is kept", "\n1 scenarios (1 passed)\n1 steps (1 passed)\n1s\n\nRandomized with seed: 7\n", "\nRandomized with seed: 7\n"},
		{"a scenario named like a duration stays", "  Scenario: 10s\n", "  Scenario: 10s\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := dropCounts(tt.in); got != tt.want {
				t.Fatalf("dropCounts(%q)=%q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestCountlessFormat(t *testing.T) {
	for in, want := range map[string]string{
		"pretty":                       "pretty-verdict-counts",
		"progress:out/progress.txt":    "progress-verdict-counts:out/progress.txt",
		"cucumber:out/cucumber.json":   "cucumber:out/cucumber.json",
		"pretty:C:/reports/pretty.txt": "pretty-verdict-counts:C:/reports/pretty.txt",
	} {
		if got := countlessFormat(in); got != want {
			t.Errorf("countlessFormat(%q)=%q, want %q", in, got, want)
		}
	}
}
