package steps

// Rule contact-realdata of the matrix (§2.1, §4.1): Add Contact with the
// data people really give. A valid request is answered 200 whatever valid
// data it carries; how a refusal is judged follows what §2.1's table
// leaves open (matrix.RealDatum.Open).

import (
	"context"
	"crypto/rand"
	"math/big"
	"net/http"
	"time"

	"github.com/cucumber/godog"

	"github.com/partner-v3/conformance-kit/steps/matrix"
	"github.com/partner-v3/conformance-kit/steps/session"
)

func (s *scenario) registerRealData(sc *godog.ScenarioContext) {
	sc.Step(`^each account calls Add Contact with a contact of every kind of real-world data$`, s.addsRealData)
	sc.Step(`^every contact should be created with a contactId of its own, a refusal judged by what §2\.1 leaves open$`, s.realDataCreated)
}

// addsRealData sends, for each account, one new contact per condition of
// rule contact-realdata, each with an address or a number of its own.
func (s *scenario) addsRealData(ctx context.Context) error {
	now := time.Now()
	n, _ := rand.Int(rand.Reader, big.NewInt(100))
	return s.SendCells(ctx, "contact-realdata", func(cell matrix.Cell) ([]byte, error) {
		d, ok := matrix.RealDatumOf(cell.Condition)
		if !ok {
			return nil, errUnknownCondition(cell)
		}
		email := s.NewEmail()
		if d.Email != nil {
			email = d.Email("conformance-"+s.Target.RunID+"-"+session.RandomHex(5), s.Target.EmailDomain)
		}
		phone := ""
		if d.Phone != nil {
			phone = d.Phone(int(n.Int64()))
		}
		return d.Body(email, phone, now), nil
	})
}

type errUnknownCondition matrix.Cell

func (e errUnknownCondition) Error() string {
	return "matrix: no real-data condition " + matrix.Cell(e).String()
}

// realDataCreated judges every contact of rule contact-realdata: 200 with
// status "success" and a contactId no other contact of the account got;
// a 5xx is a FAILURE (§4.1 "Success: HTTP 200"; §7's 500 is for an
// unexpected server-side problem, which a valid contact is not); a 4xx a
// FAILURE for a value §2.1 allows without doubt and a WARNING for a shape
// or length it leaves open.
func (s *scenario) realDataCreated() error {
	ids := contactIDs{}
	return s.EachCell(func(c *session.CellCheck, ce session.CellExchange) {
		x := ce.X
		d, _ := matrix.RealDatumOf(ce.Cell.Condition)
		switch {
		case x.Status >= 500:
			c.Fail(ce.Cell, x, "status %d for a valid contact: §4.1's answer to a contact with email or phoneNo is 200, and §7's 500 is for an unexpected server-side problem, which a valid value is not", x.Status)
			return
		case x.Status/100 == 4 && x.Status != http.StatusTooManyRequests && d.Open:
			s.Warn(c.Sections, x, "Add Contact refused a contact with %s (status %d): §2.1 does not fix that shape or length (§8: maximum field lengths and number of tags not shown), but partners send such data; a strict deployment passes, and its partners should know", d.Condition, x.Status)
			return
		case x.Status/100 == 4 && x.Status != http.StatusTooManyRequests:
			c.Fail(ce.Cell, x, "status %d: §2.1 allows this contact without doubt (every field a string whatever its letters, an existing date as YYYY-MM-DD, lists of strings), and §4.1 answers a contact with email or phoneNo with 200", x.Status)
			return
		case x.Status != http.StatusOK:
			c.Fail(ce.Cell, x, "status %d, want 200 (spec §4.1)", x.Status)
			return
		}
		ids.check(c, ce)
	})
}
