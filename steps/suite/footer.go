package suite

// godog's pretty and progress formatters end with their own count ("80
// scenarios (80 passed)"), in which a scenario the suite skipped (no second
// account, a read-only run) or could not decide is a pass, because its
// steps returned without error. The run's verdict counts it as skipped or
// inconclusive: one count, the verdict's, everywhere (issue 27). So the
// runner uses these formatters with godog's count lines taken out of
// their summary; everything else they print (the failed steps, the seed
// of a random order) is kept.

import (
	"bytes"
	"io"
	"regexp"
	"strings"

	"github.com/cucumber/godog"
)

// countlessFormats maps each godog formatter with a count of its own to
// the same formatter without it.
var countlessFormats = map[string]string{
	"pretty":   "pretty-verdict-counts",
	"progress": "progress-verdict-counts",
}

func init() {
	godog.Format(countlessFormats["pretty"], "godog's pretty formatter without its scenario and step counts (the verdict gives the count)",
		func(suite string, out io.Writer) godog.Formatter {
			f := &countlessPretty{footer: &footerFilter{w: out}}
			f.PrettyFmt = godog.NewPrettyFmt(suite, f.footer)
			return f
		})
	godog.Format(countlessFormats["progress"], "godog's progress formatter without its scenario and step counts (the verdict gives the count)",
		func(suite string, out io.Writer) godog.Formatter {
			f := &countlessProgress{footer: &footerFilter{w: out}}
			f.ProgressFmt = godog.NewProgressFmt(suite, f.footer)
			return f
		})
}

// countlessFormat is format (a Config.Formats entry, "name" or
// "name:path") with the formatter that prints no count of its own.
func countlessFormat(format string) string {
	name, path, hasPath := strings.Cut(format, ":")
	if alt, ok := countlessFormats[name]; ok {
		name = alt
	}
	if hasPath {
		return name + ":" + path
	}
	return name
}

type countlessPretty struct {
	*godog.PrettyFmt
	footer *footerFilter
}

// Summary is godog's, without the count.
func (f *countlessPretty) Summary() { f.footer.filter(f.PrettyFmt.Summary) }

type countlessProgress struct {
	*godog.ProgressFmt
	footer *footerFilter
}

// Summary is godog's, without the count.
func (f *countlessProgress) Summary() { f.footer.filter(f.ProgressFmt.Summary) }

// footerFilter passes a formatter's output through, except during its
// summary, whose count lines it drops.
type footerFilter struct {
	w   io.Writer
	buf *bytes.Buffer // non-nil during the summary
}

func (f *footerFilter) Write(p []byte) (int, error) {
	if f.buf != nil {
		return f.buf.Write(p)
	}
	return f.w.Write(p)
}

// filter runs summary with its output held, then writes it without
// godog's count: the scenarios line, the steps line and the elapsed time
// after them (the verdict says how long the run took).
func (f *footerFilter) filter(summary func()) {
	f.buf = &bytes.Buffer{}
	summary()
	out := dropCounts(f.buf.String())
	f.buf = nil
	_, _ = io.WriteString(f.w, out)
}

var (
	ansiRE    = regexp.MustCompile("\x1b\\[[0-9;]*m")
	countRE   = regexp.MustCompile(`^(\d+ scenarios \(.*\)|No scenarios|\d+ steps \(.*\)|No steps)$`)
	elapsedRE = regexp.MustCompile(`^[0-9.]+(ns|µs|us|ms|s|m|h)([0-9.]+(ns|µs|us|ms|s|m|h))*$`)
)

// dropCounts removes godog's count lines from its summary: "N scenarios
// (...)", "N steps (...)" and the elapsed time that follows them, with
// the blank line before them.
func dropCounts(summary string) string {
	lines := strings.SplitAfter(summary, "\n")
	var out []string
	afterCount := false
	for _, l := range lines {
		plain := strings.TrimSpace(ansiRE.ReplaceAllString(l, ""))
		switch {
		case countRE.MatchString(plain):
			// The blank line godog writes before the counts goes with them.
			if n := len(out); !afterCount && n > 0 && strings.TrimSpace(out[n-1]) == "" {
				out = out[:n-1]
			}
			afterCount = true
			continue
		case afterCount && elapsedRE.MatchString(plain):
			afterCount = false
			continue
		}
		afterCount = false
		out = append(out, l)
	}
	return strings.Join(out, "")
}
