package simulator

// The spec's own messages, operation paths and base path are in package
// simulator/spec, stated once for the simulator and the suite alike.

// Messages of the simulator's own choices, where the spec says "not shown".
// They are documented in docs/simulator.md and may change between versions.
const (
	// MsgCampaignNotFound answers Campaign Stats for an Id the account does
	// not own, whether it exists elsewhere or not (spec §4.3: not shown).
	MsgCampaignNotFound = "Campaign not found"
)
