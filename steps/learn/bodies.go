package learn

import (
	"context"
	"regexp"
	"strconv"

	"github.com/partner-v3/conformance-kit/simulator/profile"
)

// bodyShapes learns a framework's own words for two bodies that are not
// one JSON object (issue 28, profile/bodies.go): JSON that is no object
// (requestBody.notObject: FastAPI's 422 "Input should be a valid
// dictionary"), and a body that ends early (requestBody.endOfInput: a
// parser's "unexpected end of input" where there is no byte to quote,
// its offset written {offset}, {position} one more).
func (l *learner) bodyShapes(ctx context.Context) error {
	x, err := l.send(ctx, l.req(requestFor("requestBody.notObject"), Vars{}))
	if err != nil {
		return err
	}
	l.p.RequestBody.NotObject = l.outcomeChoice(x, outcome(x))
	x, err = l.send(ctx, l.req(requestFor("requestBody.endOfInput"), Vars{}))
	if err != nil {
		return err
	}
	o := outcome(x)
	if !o.Accepted() {
		o.Message = offsetTemplate(o.Message, profile.ProbeEndOfInputOffset)
	}
	l.p.RequestBody.EndOfInput = l.outcomeChoice(x, o)
	return nil
}

// offsetTemplate writes where a parse error's message quotes the offset
// (0-based) or the position (1-based) off of the probe's fault.
func offsetTemplate(msg string, off int) string {
	for _, n := range []struct {
		v           int
		placeholder string
	}{{off, profile.PlaceholderOffset}, {off + 1, profile.PlaceholderPosition}} {
		msg = regexp.MustCompile(`\b`+strconv.Itoa(n.v)+`\b`).ReplaceAllLiteralString(msg, n.placeholder)
	}
	return msg
}
