package flagenv

import (
	"flag"
	"io"
	"strings"
	"testing"
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
