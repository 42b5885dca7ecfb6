// Package flagenv gives every flag of a FlagSet an environment variable
// fallback, with the precedence flag > environment > default.
package flagenv

import (
	"flag"
	"fmt"
	"strings"
)

// Name is the variable of a flag: prefix + the name in upper snake case
// (--redis-url with prefix SIM_ is SIM_REDIS_URL).
func Name(prefix, flagName string) string {
	return prefix + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// Fill sets, after fs.Parse, every flag not given on the command line whose
// variable lookup finds. A value the flag refuses is an error naming the
// variable, so a user knows which of its settings is wrong.
func Fill(fs *flag.FlagSet, prefix string, lookup func(string) (string, bool)) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if given[f.Name] || err != nil {
			return
		}
		name := Name(prefix, f.Name)
		if v, ok := lookup(name); ok {
			if serr := f.Value.Set(v); serr != nil {
				err = fmt.Errorf("%s=%q: %w", name, v, serr)
			}
		}
	})
	return err
}
