package profile

// This file holds how a deployment reads an integer field of Campaign List
// and Campaign Stats sent as another type (issue 28): a numeric string is
// campaignList.wrongType and campaignStats.numericString; every other
// value of no integer type (a fraction, true, a word, an object) is the
// operation's notInteger, learned from a fraction; null is the
// operation's null, which a deployment reads as the field missing, as a
// wrong type, or answers its own way (NullReading).

// How a deployment reads null in an integer field (NullReading).
const (
	// NullMissing: as the field missing (the operation's missing answer
	// for each field: limitMissing, pageMissing, §4.3's 400).
	NullMissing = "missing"
	// NullWrongType: as a value of no integer type (notInteger).
	NullWrongType = "wrong-type"
	// NullOwn: its own answer, the null choice's outcome on every field.
	NullOwn = "own"
)

// What the notInteger and null probes send.
const (
	// ProbeListFraction is campaignList.notInteger's body: limit a
	// fraction.
	ProbeListFraction = `{"limit": 2.5, "page": 1}`
	// ProbeListNull is campaignList.null's body.
	ProbeListNull = `{"limit": null, "page": 1}`
	// ProbeStatsFraction and ProbeStatsNull are campaignStats'.
	ProbeStatsFraction = `{"campaignId": 1.5}`
	ProbeStatsNull     = `{"campaignId": null}`
)

// NullReading is how null reads, given the null probe's answer (null),
// the answer to the field missing (missing) and to a value of no integer
// type (notInteger), each rendered at the probe's field: the same answer
// as missing is read as missing, else the same as notInteger as a wrong
// type, else the deployment's own. Missing first: a deployment whose two
// answers agree cannot be told apart, and either reading plays the same.
func NullReading(null, missing, notInteger Outcome) string {
	switch {
	case sameOutcome(null, missing):
		return NullMissing
	case sameOutcome(null, notInteger):
		return NullWrongType
	}
	return NullOwn
}

// sameOutcome reports whether a client sees a and b alike: the status,
// the message of a refusal, the page size and number of a 200.
func sameOutcome(a, b Outcome) bool {
	if a.Accepted() != b.Accepted() {
		return false
	}
	if a.Accepted() {
		return a.PageSize == b.PageSize && a.PageNo == b.PageNo
	}
	return a.Status == b.Status && a.Message == b.Message
}
