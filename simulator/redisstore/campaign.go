package redisstore

import (
	"context"
	"fmt"
)

// Campaigns never change after seeding, so each replica keeps its own copy
// in memory (inmem.CampaignStore) and Redis holds none: only their version,
// so that replicas which would answer Campaign List or Stats (spec §4.2,
// §4.3) differently cannot share one Redis unnoticed.

// VersionError reports that Redis holds another replica's seed version
// than this one's.
type VersionError struct {
	What   string // "campaigns" or "contacts"
	Key    string // the Redis key
	Stored string // the version Redis holds
	Own    string // this replica's version
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("replicas disagree: Redis key %s holds %s version %s, this replica's is %s; "+
		"replicas sharing a Redis and a --redis-prefix must start with the same --seed, --campaigns, "+
		"--campaigns-file, --contacts and accounts: start this one like the others, give it another "+
		"--redis-prefix, or, to replace the shared state, stop the others and delete the key (redis-cli DEL %s)",
		e.Key, e.What, e.Stored, e.Own, e.Key)
}

// AgreeCampaigns records version as the campaigns of every replica on db
// or, when another replica recorded one already, checks that it is the
// same. It reports whether this call recorded it, and returns a
// *VersionError when the versions differ.
func (db *DB) AgreeCampaigns(ctx context.Context, version string) (bool, error) {
	key := db.key("campaign-version")
	set, err := db.client.SetNX(ctx, key, version, 0).Result()
	if err != nil {
		return false, fmt.Errorf("record campaign version: %w", err)
	}
	if set {
		return true, nil
	}
	stored, err := db.client.Get(ctx, key).Result()
	if err != nil {
		return false, fmt.Errorf("read campaign version: %w", err)
	}
	if stored != version {
		return false, &VersionError{What: "campaigns", Key: key, Stored: stored, Own: version}
	}
	return false, nil
}
