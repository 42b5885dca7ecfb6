// Package flagenv gives every flag of a FlagSet an environment variable
// fallback, with the precedence flag > environment > default.
package flagenv

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Name is the variable of a flag: prefix + the name in upper snake case
// (--redis-url with prefix SIM_ is SIM_REDIS_URL).
func Name(prefix, flagName string) string {
	return prefix + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// CommandLineOnly is the flag that has no variable: --version. SIM_VERSION
// and the like are common names for an image's own version, which must not
// turn a server into a command that prints its version and exits.
const CommandLineOnly = "version"

// Fill sets, after fs.Parse, every flag not given on the command line whose
// variable lookup finds (all but CommandLineOnly). A value the flag refuses
// is an error naming the variable, so a user knows which of its settings is
// wrong.
func Fill(fs *flag.FlagSet, prefix string, lookup func(string) (string, bool)) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if given[f.Name] || err != nil || f.Name == CommandLineOnly {
			return
		}
		name := Name(prefix, f.Name)
		if v, ok := lookup(name); ok {
			if serr := f.Value.Set(v); serr != nil {
				err = fmt.Errorf("%s=%q: %w", name, v, valueError(f, v, serr))
			}
		}
	})
	return err
}

// Parse is fs.Parse with errors that say what to fix: a value the flag
// refuses names the flag as the user writes it (--rate-window), and a
// duration given without a unit says which unit it needs.
func Parse(fs *flag.FlagSet, args []string) error {
	err := fs.Parse(args)
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return err
	}
	if m := undefinedRE.FindStringSubmatch(err.Error()); m != nil {
		if near := nearest(fs, m[1]); near != "" {
			return fmt.Errorf("%w (did you mean --%s?)", err, near)
		}
		return err
	}
	m := invalidValueRE.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	f := fs.Lookup(m[2])
	if f == nil {
		return err
	}
	v, uerr := strconv.Unquote(m[1])
	if uerr != nil {
		v = m[1]
	}
	return fmt.Errorf("--%s %q: %w", f.Name, v, valueError(f, v, errors.New(m[3])))
}

// invalidValueRE matches the flag package's error for a refused value:
// "invalid value \"10\" for flag -rate-window: parse error".
var invalidValueRE = regexp.MustCompile(`^invalid value ("(?:[^"\\]|\\.)*") for flag -(\S+): (.*)$`)

// undefinedRE matches the flag package's error for an unknown flag.
var undefinedRE = regexp.MustCompile(`^flag provided but not defined: -(\S+)$`)

// nearest is the flag of fs whose name is closest to name, within two
// edits and a third of its length (a typo: --formta, --api-secert,
// --rate-windows; not every short word), or "".
func nearest(fs *flag.FlagSet, name string) string {
	best, bestD := "", min(2, max(1, len([]rune(name))/3))+1
	fs.VisitAll(func(f *flag.Flag) {
		if d := editDistance(name, f.Name); d < bestD || (d == bestD && f.Name < best) {
			best, bestD = f.Name, d
		}
	})
	return best
}

// editDistance is the Damerau–Levenshtein distance of a and b (optimal
// string alignment: an adjacent swap is one edit).
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// valueError is why flag f refuses v, with the fix where there is one: a
// duration with no unit ("10") asks for one ("10s"), since time's own
// "parse error" or "missing unit" does not say which.
func valueError(f *flag.Flag, v string, err error) error {
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return err
	}
	if _, isDuration := g.Get().(time.Duration); !isDuration {
		return err
	}
	if _, nerr := strconv.ParseFloat(strings.TrimSpace(v), 64); nerr == nil {
		return fmt.Errorf("a duration needs a unit: write %q for seconds (or m, h, ms: \"1m\", \"1m30s\", \"500ms\")", strings.TrimSpace(v)+"s")
	}
	return fmt.Errorf("not a duration (write it as \"10s\", \"1m\", \"1m30s\" or \"500ms\"): %w", err)
}

// ExitCode is one exit status of a command and what it means.
type ExitCode struct {
	Code    int
	Meaning string
}

// Help describes a command for WriteHelp beyond its flags.
type Help struct {
	// Usage is the synopsis line(s), e.g. "usage: simulator [flags]".
	Usage string
	// Intro, if set, is a paragraph after the synopsis.
	Intro string
	// Prefix is the environment prefix Fill uses (SIM_); empty means the
	// flags have no variables.
	Prefix string
	// EnvNote, if set, follows the flags: how the variables are read.
	EnvNote string
	// ExitCodes are listed last.
	ExitCodes []ExitCode
}

// WriteHelp writes the help of a command built from fs itself, so it
// lists every flag there is: its meaning, its variable and its default,
// then the exit statuses.
func WriteHelp(w io.Writer, fs *flag.FlagSet, h Help) {
	var b strings.Builder
	b.WriteString(h.Usage)
	b.WriteString("\n")
	if h.Intro != "" {
		b.WriteString("\n" + h.Intro + "\n")
	}
	b.WriteString("\nFlags:\n")
	fs.VisitAll(func(f *flag.Flag) {
		typ, usage := flag.UnquoteUsage(f)
		fmt.Fprintf(&b, "  --%s", f.Name)
		if typ != "" {
			b.WriteString(" " + typ)
		}
		b.WriteString("\n")
		for line := range strings.SplitSeq(usage, "\n") {
			b.WriteString("      " + line + "\n")
		}
		var facts []string
		if h.Prefix != "" && f.Name != CommandLineOnly {
			facts = append(facts, "env "+Name(h.Prefix, f.Name))
		}
		if d := f.DefValue; d != "" {
			facts = append(facts, "default "+d)
		}
		if len(facts) > 0 {
			b.WriteString("      (" + strings.Join(facts, ", ") + ")\n")
		}
	})
	if h.EnvNote != "" {
		b.WriteString("\n" + h.EnvNote + "\n")
	}
	if len(h.ExitCodes) > 0 {
		b.WriteString("\nExit status:\n")
		for _, c := range h.ExitCodes {
			fmt.Fprintf(&b, "  %d  %s\n", c.Code, c.Meaning)
		}
	}
	io.WriteString(w, b.String())
}

// Quiet makes the flag package print nothing: neither its own usage on
// -h, -help and --help (Parse returns flag.ErrHelp, and the caller prints
// WriteHelp to stdout and exits 0), nor a parse error, which Parse returns
// and the caller prints once, with its own prefix.
func Quiet(fs *flag.FlagSet) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
}

// Duration writes d as a help text shows it, without the zero units
// time.Duration.String keeps: "1m", "1h30m", "10s", not "1m0s".
func Duration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
