package simulator

// Messages the spec states word for word. They are contract: a partner's
// client may match on them, so they are never reworded (and are exempt from
// the lower-case error-string lint, ST1005).
const (
	// MsgInvalidCredentials is the 401 of spec §5 rule 1 and §7.
	MsgInvalidCredentials = "Invalid API credentials"
	// MsgUnauthorizedAccount is the 403 of spec §5 rule 2 and §7.
	MsgUnauthorizedAccount = "Unauthorized account access"
	// MsgRateLimit is the 429 of spec §7 and §8.
	MsgRateLimit = "Rate limit exceeded. Try again later."
	// MsgInternal is the 500 of spec §7.
	MsgInternal = "Internal server error"
	// MsgEmailOrPhoneRequired is the Add Contact 400 of spec §4.1 and §7.
	MsgEmailOrPhoneRequired = "Either email or phoneNo is required"
	// MsgCampaignIDRequired is the Campaign Stats 400 of spec §4.3 and §7.
	MsgCampaignIDRequired = "CampaignId is required"
)

// Messages of the simulator's own choices, where the spec says "not shown".
// They are documented in docs/simulator.md and may change between versions.
const (
	// MsgCampaignNotFound answers Campaign Stats for an Id the account does
	// not own, whether it exists elsewhere or not (spec §4.3: not shown).
	MsgCampaignNotFound = "Campaign not found"
)

// Operation names, the paths of spec §4 relative to BasePath.
const (
	OpContactAdd    = "contact/add"
	OpCampaignList  = "campaign/list"
	OpCampaignStats = "campaign/stats"
)

// BasePath is the path prefix of every operation (spec §1 "Base addresses",
// §9: the version is the path segment /v3).
const BasePath = "/v3/partner/webhook"

// Operations lists the three operations of spec §4 in the spec's order.
var Operations = []string{OpContactAdd, OpCampaignList, OpCampaignStats}
