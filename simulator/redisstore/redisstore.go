// Package redisstore keeps the simulator's shared state in Redis, so that
// several simulator processes (replicas) pointed at one Redis share it: the
// contacts, the per-account rate counter of spec §8 ("one shared counter per
// account"), the control API's clock and faults, and its throwaway accounts
// (issue 12). Campaigns never change
// after seeding, so each replica keeps its own in memory; Redis holds only
// their version, which every replica checks at start (DB.AgreeCampaigns).
//
// Every operation that reads and then writes runs as one Lua script, so it
// is atomic across processes; the exceptions: merging an upsert into an
// existing contact is an optimistic compare-and-set that retries, and
// seeding contacts (ContactStore.SeedContacts) writes pipelined batches
// under a lock key instead.
//
// On a Redis Cluster (a redis-cluster:// URL, issue 21) no script may
// touch keys of two slots. Each account's keys (rate, contact-*, its
// clock offset, its Gate mirror, the reply keys of its scripts) carry the hash tag
// {a:<account>}, P{a:<account>}name, so they share one slot and the
// accounts spread over the masters; the global keys (the rest below)
// carry the prefix's own tag, P{P}name, one slot for them all. The Gate
// decides from the account's mirror of the global clock and faults flag,
// P{a:<account>}global, in one script on the account's slot, and every
// change of the clock or faults writes through to the mirrors before it
// returns (gate_cluster.go). Where one script used to mix both (a fault
// taken by the Gate, a new contact, the resets, listing every contact)
// the cluster composes per-slot steps instead, keeping the guarantees each
// names (Gate.admitSteps, ContactStore.AddContact,
// findAllSharded and deleteSharded, DB.deleteAccountKeys for the resets
// of the counters and account clocks). A sharded cluster keeps no
// contact-order, rate-keys or clock-keys: it merges the accounts' orders
// and finds their keys by name (SCAN of every master). A prefix that holds a hash tag of its own puts
// every key in that one slot: the store then runs as on one Redis.
//
// Key layout, under DB.Prefix (P) (on a sharded cluster, as said above):
//
//	P contact-seq                 string  insertion counter, the "oldest first" order
//	P contact-order               zset    every contact, "<account>\n<id>" by sequence
//	P contact-order:<account>     zset    the account's contact ids by sequence
//	P contact-data:<account>      hash    contact id -> contact JSON
//	P contact-email:<account>     hash    lower-cased email -> contact id
//	P contact-phone:<account>     zset    "<hex phoneNo>:<sequence>:<id>", lexical order
//	P contact-accounts            set     accounts that hold contacts
//	P contact-version             string  version of the seeded contacts; absent: seed them
//	P contact-seed-lock           string  held by the replica seeding contacts (expires)
//	P campaign-version            string  version of every replica's campaigns (kept in memory)
//	P rate:<key>                  zset    "<20-digit time>:<unique>" of each counted request
//	P rate-keys                   set     the rate zsets, for ResetAll
//	P account-by-key              hash    throwaway account's apiKey -> its JSON (AccountStore)
//	P account-by-id               hash    throwaway accountId -> its JSON
//	P account-order               zset    throwaway accountIds by creation sequence
//	P account-seq                 string  the creation sequence
//	P reply:<unique>              string  a state-changing script's reply, for a re-sent script (DB.Open)
//	P clock                       hash    the Clock in whole seconds and nanoseconds; absent means real time
//	P faults                      list    fault ids, oldest first
//	P fault-data                  hash    fault id -> Fault JSON
//	P fault-op                    hash    fault id -> operation or "*"
//	P fault-remaining             hash    fault id -> occurrences left
//	P fault-account               hash    fault id -> account, "" for every account
//	P fault-probability           hash    fault id -> probability
//
// On a sharded cluster only (gate_cluster.go):
//
//	P{a:<account>}global          hash    the account's mirror: v, the clock's fields, faults flag (expires)
//	P gate-version                string  V, the version of the state the mirrors hold
//	P mirrored                    set     the accounts that have a mirror
package redisstore

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// DefaultPrefix is the key prefix when DB.Prefix is empty.
const DefaultPrefix = "partnersim:"

// DefaultTimeout bounds dialing Redis and each read or write when DB.Timeout
// is zero: short, so that an unreachable Redis turns a request into a quick
// 500 Internal server error (spec §7) instead of a hang.
const DefaultTimeout = 500 * time.Millisecond

// DB is a connection pool to one Redis, shared by the stores of this
// package. Set the fields, then call Open.
type DB struct {
	// URL is the Redis URL, e.g. redis://127.0.0.1:6379/0 (the forms of
	// redis.ParseURL, including rediss:// and query options), or a Redis
	// Cluster's, redis-cluster://host:port,host:port (see Open).
	URL string

	// Prefix is prepended to every key, so that several simulators (or
	// tests) can share one Redis database apart. Replicas that must share
	// state use the same prefix. Empty means DefaultPrefix. On a cluster,
	// the global keys go under its own hash tag unless it holds one
	// (openCluster).
	Prefix string

	// Timeout bounds dialing and each socket read and write. Zero means
	// DefaultTimeout. Timeouts given in the URL take precedence.
	Timeout time.Duration

	client redis.UniversalClient
	// slow is client with seedTimeout for reads and writes, for seeding.
	slow redis.UniversalClient
	// cluster is set when URL names a Redis Cluster; sharded when, on
	// it, each account's keys carry a hash tag of their own (see
	// acctKey), the global ones another (global).
	cluster, sharded bool
	// global begins the name of every key that is not an account's.
	global string
	// unique makes rate counter members of this process distinct from
	// every other process's, even for requests at the same nanosecond.
	unique string
	seq    atomic.Uint64
	// replyTTL is how long a state-changing script keeps its reply for a
	// re-sent copy of itself (see Open).
	replyTTL time.Duration
}

// minReplyTTL is the least time a script's reply is kept for its retry.
const minReplyTTL = 10 * time.Second

// NewDB returns a DB for the Redis at url. Call Open before use.
func NewDB(url string) *DB {
	return &DB{URL: url}
}

// Open parses the URL and creates the connection pool. It does not wait for
// Redis: use Ping to check that it answers. The pool reconnects by itself
// after Redis restarts.
//
// A URL whose scheme is redis-cluster:// or rediss-cluster:// (TLS) names
// a Redis Cluster by its seed addresses, comma-separated:
// redis-cluster://user:password@host:port,host:port/?options (the options
// of redis.ParseClusterURL). Each account's keys then carry the tag
// {a:<accountId>} and the global keys the prefix's own, so that no script
// touches two slots (the package comment's cluster layout).
func (db *DB) Open() error {
	if db.URL == "" {
		return fmt.Errorf("open redis: URL is required")
	}
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return fmt.Errorf("open redis: %w", err)
	}
	db.unique = hex.EncodeToString(b[:])
	if db.Prefix == "" {
		db.Prefix = DefaultPrefix
	}
	db.global = db.Prefix
	url, cluster, err := clusterURL(db.URL)
	if err != nil {
		return fmt.Errorf("open redis: %w", err)
	}
	if cluster {
		err = db.openCluster(url)
	} else {
		err = db.openClient()
	}
	if err != nil {
		return fmt.Errorf("open redis: %w", err)
	}
	return nil
}

// openClient opens the client of one Redis (see setUp).
func (db *DB) openClient() error {
	opts, err := redis.ParseURL(db.URL)
	if err != nil {
		return err
	}
	db.setUp(clientOptions{&opts.DialTimeout, &opts.ReadTimeout, &opts.WriteTimeout, &opts.PoolTimeout, &opts.MaxRetryBackoff,
		&opts.MaxRetries, &opts.DialerRetries, &opts.ContextTimeoutEnabled, &opts.DisableIdentity, &opts.MaintNotificationsConfig})
	c := redis.NewClient(opts)
	db.client, db.slow = c, c.WithTimeout(seedTimeout)
	return nil
}

// clientOptions points at the fields of a redis.Options or a
// redis.ClusterOptions that Open sets up: the two types have the same
// fields but no common type, and both kinds of client are set up alike.
type clientOptions struct {
	dial, read, write, pool, backoff *time.Duration
	retries, dialerRetries           *int
	contextTimeout, noIdentity       *bool
	maint                            **maintnotifications.Config
}

// setUp sets up a client of either kind: the defaults of clientDefaults,
// the reply keys' lifetime, one dial attempt per command, the context's
// deadline honoured, and neither CLIENT SETINFO nor maintenance
// notifications.
func (db *DB) setUp(o clientOptions) {
	db.clientDefaults(o.dial, o.read, o.write, o.pool, o.retries)
	// A retry re-sends a script whose reply was lost (a read timeout, a
	// dropped connection; on a cluster also a MOVED or ASK redirection)
	// although Redis may have run it. So every script that changes state
	// takes a unique call id (uniqueMember), stores its reply under
	// "reply:<id>" and, when that key exists, returns it instead of
	// applying again: a request is counted once, a fault occurrence taken
	// once (spec §8: exactly 100). The key outlives any gap between a call
	// and its retry: an attempt is bounded by the dial, write and read
	// timeouts plus the backoff, and both copies wait in Redis's queue
	// together when Redis is slow.
	db.setReplyTTL(*o.dial, *o.write, *o.read, *o.backoff)
	// One dial attempt per command: go-redis's default of five, 100 ms
	// apart, would hold a request well past the timeout when Redis is down.
	*o.dialerRetries = 1
	*o.contextTimeout = true
	*o.noIdentity = true
	*o.maint = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
}

func (db *DB) setReplyTTL(d ...time.Duration) {
	var attempt time.Duration
	for _, x := range d {
		attempt += max(x, 0)
	}
	db.replyTTL = max(minReplyTTL, 4*attempt)
}

// clusterURL turns a redis-cluster:// or rediss-cluster:// URL into the
// form of redis.ParseClusterURL (the first seed in the host, the others as
// addr options), and reports whether url named a cluster.
func clusterURL(url string) (string, bool, error) {
	scheme, rest, ok := strings.Cut(url, "://")
	if !ok || (scheme != "redis-cluster" && scheme != "rediss-cluster") {
		return "", false, nil
	}
	scheme = strings.TrimSuffix(scheme, "-cluster")
	auth, hostPath := "", rest
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		auth, hostPath = rest[:i+1], rest[i+1:]
	}
	hosts, tail := hostPath, ""
	if i := strings.IndexAny(hostPath, "/?"); i >= 0 {
		hosts, tail = hostPath[:i], hostPath[i:]
	}
	seeds := strings.Split(hosts, ",")
	for _, s := range seeds {
		if s == "" {
			return "", true, fmt.Errorf("cluster URL %q: empty seed address", redactURL(url))
		}
	}
	path, query, _ := strings.Cut(tail, "?")
	if path != "" && path != "/" && path != "/0" {
		return "", true, fmt.Errorf("cluster URL %q: a Redis Cluster has only database 0", redactURL(url))
	}
	var extra []string
	for _, s := range seeds[1:] {
		extra = append(extra, "addr="+s)
	}
	if query != "" {
		extra = append(extra, query)
	}
	out := scheme + "://" + auth + seeds[0]
	if len(extra) > 0 {
		out += "?" + strings.Join(extra, "&")
	}
	return out, true, nil
}

// redactURL drops the user information from a URL for an error message.
func redactURL(url string) string {
	scheme, rest, ok := strings.Cut(url, "://")
	if !ok {
		return url
	}
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		rest = "***@" + rest[i+1:]
	}
	return scheme + "://" + rest
}

// clientDefaults fills in what the URL left unset, for either kind of
// client: each timeout db.Timeout (else DefaultTimeout), the pool's twice
// that, and one retry, which replaces a pooled connection that Redis
// closed (a restart) without making a caller wait through several
// timeouts.
func (db *DB) clientDefaults(dial, read, write, pool *time.Duration, retries *int) {
	timeout := cmp.Or(db.Timeout, DefaultTimeout)
	for _, d := range []*time.Duration{dial, read, write} {
		if *d == 0 {
			*d = timeout
		}
	}
	if *pool == 0 {
		*pool = 2 * timeout
	}
	if *retries == 0 {
		*retries = 1
	}
}

// openCluster opens a cluster client, set up as the standalone one (see
// setUp). Unless the prefix holds a hash tag of its own (then everything
// lives in that one slot), the cluster is sharded: the global keys go
// under the prefix's tag, each account's under its own.
func (db *DB) openCluster(url string) error {
	opts, err := redis.ParseClusterURL(url)
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	db.setUp(clientOptions{&opts.DialTimeout, &opts.ReadTimeout, &opts.WriteTimeout, &opts.PoolTimeout, &opts.MaxRetryBackoff,
		&opts.MaxRetries, &opts.DialerRetries, &opts.ContextTimeoutEnabled, &opts.DisableIdentity, &opts.MaintNotificationsConfig})
	slow := *opts
	slow.ReadTimeout, slow.WriteTimeout = seedTimeout, seedTimeout
	db.cluster = true
	if !hasHashTag(db.Prefix) {
		db.sharded = true
		db.global = db.Prefix + "{" + db.Prefix + "}"
	}
	db.client, db.slow = redis.NewClusterClient(opts), redis.NewClusterClient(&slow)
	return nil
}

// hasHashTag reports whether prefix holds a hash tag: a "{" followed
// later by a "}" with something between. Every key then hashes to that
// tag, so the whole state of the prefix lives in one slot, as on one Redis
// (a cluster is then not sharded).
func hasHashTag(prefix string) bool {
	if i := strings.IndexByte(prefix, '{'); i >= 0 {
		return strings.IndexByte(prefix[i+1:], '}') > 0
	}
	return false
}

// Close closes the connection pool.
func (db *DB) Close() error {
	if db.client == nil {
		return nil
	}
	err := db.client.Close()
	if db.cluster {
		// The slow client of a standalone Redis shares the pool.
		err = errors.Join(err, db.slow.Close())
	}
	if err != nil {
		return fmt.Errorf("close redis: %w", err)
	}
	return nil
}

// Ping checks that Redis answers, for the simulator's health check.
func (db *DB) Ping(ctx context.Context) error {
	var err error
	if db.cluster {
		// The master that serves the prefix's slot, the one every
		// operation needs; a ping would go to any node.
		err = db.client.Exists(ctx, db.key("campaign-version")).Err()
	} else {
		err = db.client.Ping(ctx).Err()
	}
	if err != nil {
		return fmt.Errorf("ping redis: %w", err)
	}
	return nil
}

// acctKey returns the name of the account's key called name: on a
// sharded cluster P{a:<account>}name, every key of one account in one
// slot; else as key(name, account), P<name>:<account>.
func (db *DB) acctKey(name, account string) string {
	if !db.sharded {
		return db.key(name, account)
	}
	return db.Prefix + "{a:" + account + "}" + name
}

// acctReplyKey is replyKey in the account's slot, for a script on the
// account's keys.
func (db *DB) acctReplyKey(account, id string) string {
	if !db.sharded {
		return db.replyKey(id)
	}
	return db.acctKey("reply:"+id, account)
}

// deleteAccountKeys deletes the key called name of every account, on a
// sharded cluster: it scans every master for P{a:*}name and deletes the
// keys one at a time (each in its own slot).
func (db *DB) deleteAccountKeys(ctx context.Context, name string) error {
	cc, ok := db.client.(*redis.ClusterClient)
	if !ok {
		return fmt.Errorf("delete account keys: not a cluster")
	}
	pattern := globEscaper.Replace(db.Prefix) + "{a:*}" + globEscaper.Replace(name)
	return cc.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
		iter := node.Scan(ctx, 0, pattern, 1000).Iterator()
		for iter.Next(ctx) {
			if err := node.Del(ctx, iter.Val()).Err(); err != nil {
				return err
			}
		}
		return iter.Err()
	})
}

// globEscaper escapes the characters SCAN's MATCH reads as a pattern.
var globEscaper = strings.NewReplacer(`\`, `\\`, "*", `\*`, "?", `\?`, "[", `\[`, "]", `\]`)

// key returns the prefixed name of a global key: on a sharded cluster
// P{P}name, every global key in one slot.
func (db *DB) key(parts ...string) string {
	k := db.global
	for i, p := range parts {
		if i > 0 {
			k += ":"
		}
		k += p
	}
	return k
}

// uniqueMember returns a string no other call of any process returns.
func (db *DB) uniqueMember() string {
	return db.unique + "-" + strconv.FormatUint(db.seq.Add(1), 10) // Sprintf's allocations, per request
}

// RoundTrips is a redis.Hook (DB.AddHook) that counts the round trips the
// client makes: one per command or pipeline. The one-round-trip-per-request
// budget of the partner operations is tested with it.
type RoundTrips struct{ n atomic.Int64 }

// Count returns the round trips made so far.
func (h *RoundTrips) Count() int64 { return h.n.Load() }

// DialHook implements redis.Hook.
func (h *RoundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook implements redis.Hook.
func (h *RoundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.n.Add(1)
		return next(ctx, cmd)
	}
}

// ProcessPipelineHook implements redis.Hook.
func (h *RoundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.n.Add(1)
		return next(ctx, cmds)
	}
}
