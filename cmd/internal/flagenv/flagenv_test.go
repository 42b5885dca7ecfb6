package flagenv

import (
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
	"time"
)

func TestFill(t *testing.T) {
	env := map[string]string{"T_COLOUR": "blue", "T_SIZE": "7", "T_EMPTY": ""}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	colour := fs.String("colour", "red", "")
	size := fs.Int("size", 1, "")
	empty := fs.String("empty", "default", "")
	other := fs.String("other", "default", "")
	if err := fs.Parse([]string{"--size", "3"}); err != nil {
		t.Fatal(err)
	}
	if err := Fill(fs, "T_", lookup); err != nil {
		t.Fatal(err)
	}
	if *colour != "blue" || *size != 3 || *empty != "" || *other != "default" {
		t.Fatalf("colour=%q size=%d empty=%q other=%q; want the env, the flag, the (empty) env, the default",
			*colour, *size, *empty, *other)
	}
	env["T_SIZE"] = "lots"
	fs2 := flag.NewFlagSet("t", flag.ContinueOnError)
	fs2.Int("size", 1, "")
	if err := Fill(fs2, "T_", lookup); err == nil || !strings.Contains(err.Error(), "T_SIZE") {
		t.Fatalf("err = %v, want one naming T_SIZE", err)
	}
}

func TestName(t *testing.T) {
	if got := Name("SIM_", "redis-url"); got != "SIM_REDIS_URL" {
		t.Fatalf("Name = %s", got)
	}
}

func TestWriteHelpListsEveryFlagWithItsVariableAndDefault(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.String("redis-url", "", "keep state in this `URL`")
	fs.Int("rate-limit", 100, "requests per window")
	fs.Bool("insecure", false, "plain HTTP")
	fs.Bool("version", false, "print the version and exit")
	var b strings.Builder
	WriteHelp(&b, fs, Help{
		Usage:     "usage: t [flags]",
		Prefix:    "T_",
		ExitCodes: []ExitCode{{0, "clean shutdown"}, {2, "usage error"}},
	})
	got := b.String()
	for _, want := range []string{
		"usage: t [flags]\n",
		"  --redis-url URL\n      keep state in this URL\n      (env T_REDIS_URL)\n",
		"  --rate-limit int\n      requests per window\n      (env T_RATE_LIMIT, default 100)\n",
		"  --insecure\n      plain HTTP\n      (env T_INSECURE, default false)\n",
		"  --version\n      print the version and exit\n      (default false)\n",
		"Exit status:\n  0  clean shutdown\n  2  usage error\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("help lacks %q\nhelp:\n%s", want, got)
		}
	}
	// Built from the FlagSet: a flag added later is listed with no other change.
	fs.String("contacts", "", "contacts file")
	b.Reset()
	WriteHelp(&b, fs, Help{Usage: "usage: t", Prefix: "T_"})
	if want := "  --contacts string\n      contacts file\n      (env T_CONTACTS)\n"; !strings.Contains(b.String(), want) {
		t.Errorf("help lacks %q\nhelp:\n%s", want, b.String())
	}
}

func TestFillLeavesVersionToTheCommandLine(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	version := fs.Bool("version", false, "")
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	// An image's own T_VERSION=1.2 must neither fail the start nor print
	// the version instead of serving.
	lookup := func(k string) (string, bool) { return "1.2", k == "T_VERSION" }
	if err := Fill(fs, "T_", lookup); err != nil || *version {
		t.Fatalf("Fill=%v, version=%v; want nil, false", err, *version)
	}
}

func TestQuietLeavesErrorsAndHelpToTheCaller(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	var out strings.Builder
	fs.SetOutput(&out)
	fs.String("addr", "", "")
	Quiet(fs)
	for _, args := range [][]string{{"--nope"}, {"--help"}, {"-h"}, {"--addr"}} {
		if err := fs.Parse(args); err == nil {
			t.Errorf("Parse(%v) succeeded", args)
		}
	}
	if out.String() != "" {
		t.Fatalf("the flag package printed %q", out.String())
	}
	if err := fs.Parse([]string{"-h"}); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("Parse(-h)=%v, want flag.ErrHelp", err)
	}
}

func TestDuration(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{time.Minute, "1m"},
		{90 * time.Minute, "1h30m"},
		{2 * time.Hour, "2h"},
		{10 * time.Second, "10s"},
		{61 * time.Second, "1m1s"},
		{1500 * time.Millisecond, "1.5s"},
	}
	for _, tt := range tests {
		if got := Duration(tt.d); got != tt.want {
			t.Errorf("Duration(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

// TestParseSaysWhatToFix: a refused value names the flag as it is written
// and, for a duration without a unit, the unit it needs; from a variable
// too (issue 27: `--rate-window 10`).
func TestParseSaysWhatToFix(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want []string // "" in want: no error
	}{
		{"a duration without a unit", []string{"--rate-window", "10"}, nil, []string{`--rate-window "10"`, `write "10s" for seconds`}},
		{"a fractional duration without a unit", []string{"--rate-window=1.5"}, nil, []string{`write "1.5s"`}},
		{"a duration that is no duration", []string{"--rate-window", "soon"}, nil, []string{`--rate-window "soon"`, "not a duration", `"1m30s"`}},
		{"a variable without a unit", nil, map[string]string{"T_RATE_WINDOW": "10"}, []string{`T_RATE_WINDOW="10"`, `write "10s"`}},
		{"a number that is no number", []string{"--size", "lots"}, nil, []string{`--size "lots"`, "parse error"}},
		{"a duration with its unit", []string{"--rate-window", "10s"}, nil, nil},
		{"an unknown flag is the flag package's", []string{"--nope"}, nil, []string{"flag provided but not defined: -nope"}},
		{"a typo names the flag meant", []string{"--rate-windwo", "10s"}, nil, []string{"not defined: -rate-windwo (did you mean --rate-window?)"}},
		{"a letter missing names the flag meant", []string{"--sze", "1"}, nil, []string{"(did you mean --size?)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			Quiet(fs)
			window := fs.Duration("rate-window", time.Minute, "")
			fs.Int("size", 1, "")
			err := Parse(fs, tt.args)
			if err == nil {
				err = Fill(fs, "T_", func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok })
			}
			if tt.want == nil {
				if err != nil || *window != 10*time.Second {
					t.Fatalf("err %v, window %s; want none, 10s", err, *window)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}
