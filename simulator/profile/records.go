package profile

import (
	"slices"
	"strings"

	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// This file holds the fields a deployment adds inside the objects of a
// 200 (issue 28, "fields inside records": http.recordFields), and the
// formats of added fields beyond a constant (FormatID, FormatEcho).

// Paths of the objects inside a 200 that fields may be added to
// (HTTP.RecordFields).
const (
	// RecordCampaigns is each campaign of Campaign List's campaigns
	// (§2.2).
	RecordCampaigns = "campaigns[]"
	// RecordEmailStat and RecordSMSStat are Campaign Stats' objects
	// (§2.3).
	RecordEmailStat = "emailStat"
	RecordSMSStat   = "smsStat"
)

// RecordPaths are the objects of each operation's 200 that
// HTTP.RecordFields may add to, with the fields the spec gives each (an
// added field may not take one of their names).
func RecordPaths() map[string]map[string][]string {
	return map[string]map[string][]string{
		spec.PathCampaignList:  {RecordCampaigns: spec.CampaignFields()},
		spec.PathCampaignStats: {RecordEmailStat: spec.EmailStatKeys(), RecordSMSStat: spec.SMSStatKeys()},
	}
}

// recordFields checks http.recordFields: known operations and objects,
// fields made as a body's.
func (c *checker) recordFields(p *Profile) {
	rf := p.HTTP.RecordFields
	if !rf.Known() {
		return
	}
	paths := RecordPaths()
	for op, objs := range rf.Value {
		own, ok := paths[op]
		if !ok {
			ops := make([]string, 0, len(paths))
			for o := range paths {
				ops = append(ops, o)
			}
			slices.Sort(ops)
			c.addf("http.recordFields."+op, "is no operation with records (%s)", strings.Join(ops, ", "))
			continue
		}
		for path, fields := range objs {
			taken, ok := own[path]
			if !ok {
				c.addf("http.recordFields."+op+"."+path, "is no object of the operation's answer")
				continue
			}
			c.fields("http.recordFields."+op+"."+path, fields, taken)
		}
	}
}

// fieldID checks a field's identifier format: FormatID holds one, of a
// string, and no other format does.
func (c *checker) fieldID(at string, f Field) {
	switch {
	case f.Format == FormatID && f.ID == nil:
		c.addf(at+".id", "is missing: format id makes identifiers of this format")
	case f.Format == FormatID && f.Type != "string":
		c.addf(at, "has format %q for type %q", f.Format, f.Type)
	case f.Format == FormatID:
		c.idFormat(at+".id", *f.ID)
	case f.ID != nil:
		c.addf(at+".id", "is set for format %q: only format id reads it", f.Format)
	}
}
