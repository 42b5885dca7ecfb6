package simulator

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"time"

	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// Timestamp is a time that marshals as spec.TimestampLayout and unmarshals only
// from it.
type Timestamp struct{ time.Time }

// MarshalJSON implements json.Marshaler.
func (t Timestamp) MarshalJSON() ([]byte, error) {
	return []byte(`"` + t.UTC().Format(spec.TimestampLayout) + `"`), nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (t *Timestamp) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("timestamp must be a string")
	}
	v, err := time.Parse(spec.TimestampLayout, s)
	if err != nil {
		return fmt.Errorf("timestamp %q is not of the form %s", s, spec.TimestampLayout)
	}
	t.Time = v
	return nil
}

// Campaign is a stored campaign: its spec §2.2 record, its owner, and the
// statistics Campaign Stats answers with (§2.3). In JSON (the campaigns
// file) the record's fields stand beside accountId and stats.
type Campaign struct {
	CampaignRecord
	AccountID string        `json:"accountId,omitempty"`
	Stats     CampaignStats `json:"stats"`

	// recordJSON and statsJSON are the record and the statistics as
	// encoding/json writes them, set once by Encode.
	recordJSON, statsJSON []byte
}

// Encode encodes the campaign's record and statistics once, so that
// Campaign List and Campaign Stats build their answers from bytes instead
// of encoding the same values on every request: campaigns never change
// once seeded. Call it before the campaign is shared, and never change the
// campaign afterwards (the encoded form would go stale). Stores call it
// when campaigns are seeded.
func (c *Campaign) Encode() error {
	record, err := json.Marshal(&c.CampaignRecord)
	if err != nil {
		return fmt.Errorf("encode campaign %d: %w", c.ID, err)
	}
	stats, err := json.Marshal(&c.Stats)
	if err != nil {
		return fmt.Errorf("encode campaign %d statistics: %w", c.ID, err)
	}
	c.recordJSON, c.statsJSON = record, stats
	return nil
}

// AppendRecordJSON appends the campaign's spec §2.2 record as JSON, the
// bytes json.Marshal(c.CampaignRecord) gives: the ones Encode kept, or,
// for a campaign never encoded, encoded now.
func (c *Campaign) AppendRecordJSON(dst []byte) ([]byte, error) {
	if c.recordJSON != nil {
		return append(dst, c.recordJSON...), nil
	}
	b, err := json.Marshal(&c.CampaignRecord)
	return append(dst, b...), err
}

// AppendStatsJSON appends the campaign's spec §2.3 statistics as JSON, the
// bytes json.Marshal(c.Stats) gives, as AppendRecordJSON does the record.
func (c *Campaign) AppendStatsJSON(dst []byte) ([]byte, error) {
	if c.statsJSON != nil {
		return append(dst, c.statsJSON...), nil
	}
	b, err := json.Marshal(&c.Stats)
	return append(dst, b...), err
}

// CampaignRecord is a campaign as Campaign List answers it: the fields of
// spec §2.2, spelled as on the wire.
type CampaignRecord struct {
	ID                int64     `json:"Id"`
	CampaignName      string    `json:"campaignName"`
	CampaignType      int       `json:"campaignType"`
	CampaignChannel   string    `json:"campaignChannel"`
	Status            string    `json:"status"`
	StatusColor       string    `json:"statusColor"`
	Active            int       `json:"active"`
	ScheduledOn       Timestamp `json:"scheduledOn"`
	ScheduledTimeZone string    `json:"scheduledTimeZone"`
	Offset            string    `json:"offset"`
	AutoResend        int       `json:"autoResend"`
	BroadcastOn       Timestamp `json:"broadcastOn"`
	Broadcast         int       `json:"broadcast"`
	CreatedAt         Timestamp `json:"createdAt"`
	UpdatedAt         Timestamp `json:"updatedAt"`
	Reason            *string   `json:"reason"`
}

// CampaignStats is the output of Campaign Stats (spec §2.3).
type CampaignStats struct {
	EmailStat EmailStat `json:"emailStat"`
	SMSStat   SMSStat   `json:"smsStat"`
}

// EmailStat holds the email counts of spec §2.3.
type EmailStat struct {
	Sent        int64 `json:"Sent"`
	Opened      int64 `json:"Opened"`
	Delivered   int64 `json:"Delivered"`
	Hardbounce  int64 `json:"Hardbounce"`
	Softbounce  int64 `json:"Softbounce"`
	Failed      int64 `json:"Failed"`
	Clicked     int64 `json:"Clicked"`
	Unsubscribe int64 `json:"Unsubscribe"`
	Complained  int64 `json:"Complained"`
}

// SMSStat holds the SMS counts of spec §2.3.
type SMSStat struct {
	Sent      int64 `json:"Sent"`
	Delivered int64 `json:"Delivered"`
	Failed    int64 `json:"Failed"`
}

var (
	colorRE  = regexp.MustCompile(`^#[0-9A-Fa-f]{6}$`)
	offsetRE = regexp.MustCompile(`^[+-](0\d|1[0-4]):[0-5]\d$`)
)

// Validate reports the first way c breaks the formats of spec §2.2 or the
// coherence of its statistics (§2.3: counts never negative, and no stage of
// a delivery funnel larger than the one before it).
func (c *Campaign) Validate() error {
	switch {
	case c.ID <= 0:
		return fmt.Errorf("Id must be a positive integer")
	case c.CampaignName == "":
		return fmt.Errorf("campaign %d: campaignName is empty", c.ID)
	case c.CampaignType != spec.CampaignStatic && c.CampaignType != spec.CampaignDynamic:
		return fmt.Errorf("campaign %d: campaignType must be 0 or 1", c.ID)
	case c.CampaignChannel != spec.ChannelEmail && c.CampaignChannel != spec.ChannelSMS:
		return fmt.Errorf("campaign %d: campaignChannel must be email or sms", c.ID)
	case c.Status == "":
		return fmt.Errorf("campaign %d: status is empty", c.ID)
	case !colorRE.MatchString(c.StatusColor):
		return fmt.Errorf("campaign %d: statusColor %q is not #RRGGBB", c.ID, c.StatusColor)
	case c.Active != 0 && c.Active != 1:
		return fmt.Errorf("campaign %d: active must be 0 or 1", c.ID)
	case c.ScheduledTimeZone == "":
		return fmt.Errorf("campaign %d: scheduledTimeZone is empty", c.ID)
	case !offsetRE.MatchString(c.Offset):
		return fmt.Errorf("campaign %d: offset %q is not +HH:MM or -HH:MM", c.ID, c.Offset)
	case c.AutoResend != 0 && c.AutoResend != 1:
		return fmt.Errorf("campaign %d: autoResend must be 0 or 1", c.ID)
	case c.Broadcast != 0 && c.Broadcast != 1:
		return fmt.Errorf("campaign %d: broadcast must be 0 or 1", c.ID)
	case c.ScheduledOn.IsZero(), c.BroadcastOn.IsZero(), c.CreatedAt.IsZero(), c.UpdatedAt.IsZero():
		return fmt.Errorf("campaign %d: scheduledOn, broadcastOn, createdAt and updatedAt are required", c.ID)
	case c.UpdatedAt.Before(c.CreatedAt.Time):
		return fmt.Errorf("campaign %d: updatedAt is before createdAt", c.ID)
	}
	return c.Stats.Validate()
}

// Validate reports the first incoherent count.
func (s CampaignStats) Validate() error {
	e, m := s.EmailStat, s.SMSStat
	for name, v := range map[string]int64{
		"emailStat.Sent": e.Sent, "emailStat.Opened": e.Opened, "emailStat.Delivered": e.Delivered,
		"emailStat.Hardbounce": e.Hardbounce, "emailStat.Softbounce": e.Softbounce, "emailStat.Failed": e.Failed,
		"emailStat.Clicked": e.Clicked, "emailStat.Unsubscribe": e.Unsubscribe, "emailStat.Complained": e.Complained,
		"smsStat.Sent": m.Sent, "smsStat.Delivered": m.Delivered, "smsStat.Failed": m.Failed,
	} {
		if v < 0 {
			return fmt.Errorf("%s is negative", name)
		}
	}
	switch {
	case e.Delivered+e.Hardbounce+e.Softbounce+e.Failed > e.Sent:
		return fmt.Errorf("emailStat: Delivered+Hardbounce+Softbounce+Failed exceeds Sent")
	case e.Opened > e.Delivered:
		return fmt.Errorf("emailStat: Opened exceeds Delivered")
	case e.Clicked > e.Opened:
		return fmt.Errorf("emailStat: Clicked exceeds Opened")
	case e.Unsubscribe > e.Delivered, e.Complained > e.Delivered:
		return fmt.Errorf("emailStat: Unsubscribe or Complained exceeds Delivered")
	case m.Delivered+m.Failed > m.Sent:
		return fmt.Errorf("smsStat: Delivered+Failed exceeds Sent")
	}
	return nil
}

// ReadCampaigns decodes and validates a campaigns file: a JSON array of
// campaigns in the spec §2.2 spelling, each with its owner's accountId and
// optional stats. Ids must be unique.
func ReadCampaigns(r io.Reader) ([]*Campaign, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var campaigns []*Campaign
	if err := dec.Decode(&campaigns); err != nil {
		return nil, fmt.Errorf("decode campaigns: %w", err)
	}
	ids := make(map[int64]bool)
	for i, c := range campaigns {
		if c == nil {
			return nil, fmt.Errorf("campaign %d: null", i)
		}
		if c.AccountID == "" {
			return nil, fmt.Errorf("campaign %d: accountId is empty", i)
		}
		if err := c.Validate(); err != nil {
			return nil, fmt.Errorf("campaign %d: %w", i, err)
		}
		if ids[c.ID] {
			return nil, fmt.Errorf("campaign %d: Id %d is used by an earlier campaign", i, c.ID)
		}
		ids[c.ID] = true
	}
	return campaigns, nil
}

// CampaignFilter selects an account's campaigns, ordered by Id ascending.
type CampaignFilter struct {
	AccountID string
	Offset    int
	Limit     int // 0 means no limit
}

// CampaignStore keeps campaigns and their statistics.
type CampaignStore interface {
	// FindCampaigns returns the account's campaigns in Id order, deleted
	// ones (active 0) included, after Offset and Limit, and the total count.
	FindCampaigns(ctx context.Context, filter CampaignFilter) ([]*Campaign, int, error)

	// FindCampaignByID returns the account's campaign with that Id.
	// Returns ENOTFOUND when the account has no such campaign, including
	// when another account owns it.
	FindCampaignByID(ctx context.Context, accountID string, id int64) (*Campaign, error)

	// SeedCampaigns stores campaigns unless campaigns were already seeded
	// under the same version (a digest of the generator's inputs), so that
	// replicas started alike generate once. It reports whether it stored.
	SeedCampaigns(ctx context.Context, version string, campaigns []*Campaign) (bool, error)

	// ForgetCampaigns drops what the store keeps of accountID's campaigns
	// when that throwaway account is deleted; a store that generates none
	// has nothing to drop.
	ForgetCampaigns(accountID string)
}
