package violation_test

import (
	"github.com/partner-v3/conformance-kit/simulator/violation"
)

const textPlain = "text/plain; charset=utf-8"

const validContact = `{"email":"probe@example.com","firstName":"Pat"}`

// Spec §1, §4, §9: JSON, methods, paths.
func init() {
	register(map[violation.Name]probe{
		"json-content-type": {run: func(p *pair) {
			p.expect(list(5, 1), func(a *answer) { a.Type = textPlain })
			p.expect(stats(0).with("x-api-key", "nope"), func(a *answer) { a.Type = textPlain })
		}},
	})
}
