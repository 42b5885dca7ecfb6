package redisstore_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/partner-v3/conformance-kit/fixtures"
	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/redisstore"
	"github.com/partner-v3/conformance-kit/simulator/spec"
	"github.com/partner-v3/conformance-kit/simulator/storetest"
)

// redisCluster is a Redis Cluster of three masters (no replicas, nothing
// on disk) on loopback, started by a test (issue 21; the recipe of
// ../shared/notes/redis-cluster.md).
type redisCluster struct {
	tb    testing.TB // the test that started it, which stops it
	bin   string
	dir   string
	ports []int
	buses []int
	nodes []*redisServer
	// URL is the cluster's redis-cluster:// URL, every master a seed.
	URL string
}

// startRedisCluster starts three cluster-enabled redis-servers on free
// ports (their bus ports free too), joins them with redis-cli --cluster
// create and waits for cluster_state:ok on every node. It skips without
// redis-server or redis-cli on PATH, and fails instead with
// REQUIRE_REDIS=1. The nodes are killed in cleanup.
func startRedisCluster(tb testing.TB) *redisCluster {
	tb.Helper()
	if testing.Short() {
		tb.Skip("starts a three-node Redis Cluster")
	}
	c := &redisCluster{tb: tb, bin: redisServerBinary(tb), dir: tb.TempDir()}
	cli := redisCLIBinary(tb)
	var addrs []string
	used := map[int]bool{}
	for i := range 3 {
		// A port found free may be taken before redis-server binds it
		// (an outgoing connection of a test running beside): try others.
		var err error
		for range 5 {
			c.ports = append(c.ports[:i], clusterPort(tb, used))
			c.buses = append(c.buses[:i], clusterPort(tb, used))
			var n *redisServer
			if n, err = c.tryStartNode(tb, i); err == nil {
				c.nodes = append(c.nodes, n)
				break
			}
		}
		if err != nil {
			tb.Fatal(err)
		}
		addrs = append(addrs, "127.0.0.1:"+strconv.Itoa(c.ports[i]))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	args := append([]string{"--cluster", "create"}, addrs...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.CommandContext(ctx, cli, args...).CombinedOutput(); err != nil {
		tb.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	c.waitOK(tb)
	c.URL = "redis-cluster://" + strings.Join(addrs, ",")
	return c
}

// redisCLIBinary finds redis-cli on PATH, as redisServerBinary does
// redis-server.
func redisCLIBinary(tb testing.TB) string {
	tb.Helper()
	return redisBinary(tb, "redis-cli", "redis-tools")
}

// startNode starts node i with its node file: a node started again after
// stopNode rejoins the cluster, empty (no persistence).
func (c *redisCluster) startNode(tb testing.TB, i int) *redisServer {
	tb.Helper()
	n, err := c.tryStartNode(tb, i)
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// clusterPort returns a free loopback port below Linux's ephemeral range
// (32768 on), where outgoing connections take theirs, and not in used.
func clusterPort(tb testing.TB, used map[int]bool) int {
	tb.Helper()
	for range 100 {
		p := 20000 + rand.IntN(12000)
		if used[p] {
			continue
		}
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			continue
		}
		ln.Close()
		used[p] = true
		return p
	}
	tb.Fatal("no free port between 20000 and 32000")
	return 0
}

// tryStartNode is startNode, with an error when the node does not start.
func (c *redisCluster) tryStartNode(tb testing.TB, i int) (*redisServer, error) {
	tb.Helper()
	port := strconv.Itoa(c.ports[i])
	logFile, err := os.OpenFile(filepath.Join(c.dir, "redis-"+port+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(c.bin,
		"--bind", "127.0.0.1", "--port", port,
		"--cluster-enabled", "yes", "--cluster-port", strconv.Itoa(c.buses[i]),
		"--cluster-config-file", filepath.Join(c.dir, "nodes-"+port+".conf"),
		"--cluster-require-full-coverage", "no", "--cluster-node-timeout", "2000",
		"--save", "", "--appendonly", "no", "--dir", c.dir)
	s, err := runRedisServer(tb, cmd, logFile)
	if err != nil {
		return nil, err
	}
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + port, MaxRetries: -1, DialTimeout: 500 * time.Millisecond})
	defer rdb.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := rdb.Ping(context.Background()).Err()
		if err == nil {
			return s, nil
		}
		select {
		case <-s.done:
			log, _ := os.ReadFile(filepath.Join(c.dir, "redis-"+port+".log"))
			return nil, fmt.Errorf("redis-server exited: %s", log)
		default:
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("redis-server on port %s does not answer: %w", port, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stopNode kills node i and starts it again when t ends.
func (c *redisCluster) stopNode(t testing.TB, i int) {
	c.nodes[i].stop(t)
	t.Cleanup(func() {
		c.nodes[i] = c.startNode(c.tb, i)
		c.waitOK(c.tb)
	})
}

// waitOK waits until every running node reports cluster_state:ok.
func (c *redisCluster) waitOK(tb testing.TB) {
	tb.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for i, p := range c.ports {
		select {
		case <-c.nodes[i].done:
			continue
		default:
		}
		rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(p), MaxRetries: -1})
		for {
			info, err := rdb.ClusterInfo(context.Background()).Result()
			if err == nil && strings.Contains(info, "cluster_state:ok") {
				break
			}
			if time.Now().After(deadline) {
				rdb.Close()
				tb.Fatalf("node %d: no cluster_state:ok after 20 s: %v %s", p, err, info)
			}
			time.Sleep(100 * time.Millisecond)
		}
		rdb.Close()
	}
}

// nodeOf returns the index of the running master serving key's slot: the
// one that answers a read of it instead of redirecting (MOVED).
func (c *redisCluster) nodeOf(tb testing.TB, key string) int {
	tb.Helper()
	for i, p := range c.ports {
		rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(p), MaxRetries: -1})
		err := rdb.Exists(context.Background(), key).Err()
		rdb.Close()
		if err == nil {
			return i
		}
	}
	tb.Fatalf("no master serves the slot of %q", key)
	return -1
}

// deleteClusterKeys removes the keys under prefix from every master.
func deleteClusterKeys(tb testing.TB, url, prefix string) {
	tb.Helper()
	addrs := strings.Split(strings.TrimPrefix(url, "redis-cluster://"), ",")
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, MaxRetries: -1})
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	pattern := globEscaper.Replace(prefix) + "*"
	err := rdb.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
		iter := node.Scan(ctx, 0, pattern, 1000).Iterator()
		for iter.Next(ctx) {
			if err := node.Del(ctx, iter.Val()).Err(); err != nil {
				return err
			}
		}
		return iter.Err()
	})
	if err != nil {
		// A node of a shard-down test may be gone.
		tb.Logf("delete test keys under %q: %v", prefix, err)
	}
}

// The contract, on a real three-master cluster (issue 21).
func TestStore_RedisCluster(t *testing.T) {
	c := startRedisCluster(t)
	storetest.Run(t, func(t *testing.T) storetest.Backend {
		db := MustOpenDB(t, c.URL)
		b := backend(db)
		b.Outage = func(t *testing.T) {
			// The global keys (the account registry among them) live on
			// the master of the prefix's own tag, P{P}: stopping it takes
			// the store's registry down. It comes back (empty) for the
			// tests that follow.
			c.stopNode(t, c.nodeOf(t, db.Prefix+"{"+db.Prefix+"}x"))
		}
		return b
	})
}

func TestClusterURL(t *testing.T) {
	tests := []struct {
		name, url string
		ok        bool
	}{
		{"seed addresses", "redis-cluster://127.0.0.1:1,127.0.0.1:2", true},
		{"with a password and options", "redis-cluster://u:p@127.0.0.1:1,127.0.0.1:2/?dial_timeout=1s", true},
		{"TLS", "rediss-cluster://127.0.0.1:1", true},
		{"an empty seed", "redis-cluster://127.0.0.1:1,,127.0.0.1:2", false},
		{"a database other than 0", "redis-cluster://127.0.0.1:1/2", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := redisstore.NewDB(tt.url)
			err := db.Open()
			if got := err == nil; got != tt.ok {
				t.Fatalf("Open(%q) = %v, want ok=%v", tt.url, err, tt.ok)
			}
			if err != nil {
				if strings.Contains(err.Error(), "u:p@") {
					t.Errorf("error %q shows the password", err)
				}
				return
			}
			defer db.Close()
			if got, want := db.Prefix, redisstore.DefaultPrefix; got != want {
				t.Errorf("Prefix = %q, want %q", got, want)
			}
		})
	}
}

// TestReplicas_Cluster runs two simulator processes on a three-master
// Redis Cluster (issue 21): everything TestReplicas checks on one Redis
// (spec §8's one counter per account across them, 100 admitted and the
// 101st refused on either; contacts, campaigns, faults and the clock
// shared; the normative suite against each), then a throwaway account
// made through one served by the other, and a reset through one seen by
// the other.
func TestReplicas_Cluster(t *testing.T) {
	c := startRedisCluster(t)
	accounts, err := simulator.ReadAccounts(bytes.NewReader(fixtures.Accounts))
	if err != nil {
		t.Fatal(err)
	}
	// Each on a cluster of its own: they share the default prefix.
	t.Run("as on one Redis", func(t *testing.T) { testReplicas(t, c.URL, accounts) })
	t.Run("throwaway accounts as on one Redis", func(t *testing.T) {
		testReplicaAccounts(t, startRedisCluster(t).URL, accounts)
	})
	t.Run("seeded contacts as on one Redis", func(t *testing.T) {
		testReplicaSeeds(t, startRedisCluster(t).URL, accounts)
	})

	alpha := accounts[0]
	bin := buildSimulator(t)
	dataDir := t.TempDir()
	prefix := "--redis-prefix=simtest-accounts:"
	one := startReplica(t, bin, "replica one", c.URL, dataDir, prefix)
	two := startReplica(t, bin, "replica two", c.URL, dataDir, prefix)
	list := map[string]int{"limit": 1, "page": 1}
	for range spec.RateLimit {
		if status, _, body := two.call(t, alpha, spec.PathCampaignList, list); status != http.StatusOK {
			t.Fatalf("two: %d %s, want 200", status, body)
		}
	}
	if status, _, body := one.call(t, alpha, spec.PathCampaignList, list); status != http.StatusTooManyRequests {
		t.Fatalf("one: the 101st: %d %s, want 429", status, body)
	}

	var a simulator.CreatedAccount
	if code := one.admin(t, http.MethodPost, "/accounts", map[string]any{"name": "clustered"}, &a); code != http.StatusCreated {
		t.Fatalf("POST /accounts on one: status %d", code)
	}
	if status, _, body := two.call(t, &a.Account, spec.PathContactAdd, map[string]string{"email": "c@example.com"}); status != http.StatusOK {
		t.Fatalf("two: contact/add with the account made on one: %d %s", status, body)
	}
	var contacts struct {
		Total int `json:"total"`
	}
	if code := one.admin(t, http.MethodGet, "/contacts?accountId="+a.AccountID, nil, &contacts); code != http.StatusOK || contacts.Total != 1 {
		t.Errorf("one: the contact added on two: status %d, total %d, want 1", code, contacts.Total)
	}

	if code := two.admin(t, http.MethodPost, "/reset", nil, nil); code != http.StatusOK {
		t.Fatalf("POST /reset on two: status %d", code)
	}
	if status, _, body := one.call(t, alpha, spec.PathCampaignList, list); status != http.StatusOK {
		t.Errorf("one: after the reset on two: %d %s, want 200 (the counter reset)", status, body)
	}
	if code := one.admin(t, http.MethodGet, "/contacts?accountId="+a.AccountID, nil, &contacts); code != http.StatusOK || contacts.Total != 0 {
		t.Errorf("one: contacts after the reset: status %d, total %d, want 0", code, contacts.Total)
	}
}

// TestClusterShardDown: a simulator on a cluster whose accounts live on
// several masters. The master of one account (not the one of the global
// keys) goes down: that account's requests answer 500 Internal server
// error fast (spec §7) while an account on another master goes on; the
// master comes back empty (no persistence) and the account serves again
// without a restart, its campaigns the same (they are in the simulator's
// memory; the throwaway account itself is a global key, kept).
func TestClusterShardDown(t *testing.T) {
	c := startRedisCluster(t)
	prefix := "simtest-shard:"
	global := c.nodeOf(t, prefix+"{"+prefix+"}x")
	r := startReplica(t, buildSimulator(t), "simulator", c.URL, t.TempDir(), "--redis-prefix", prefix)

	// Throwaway accounts until one lives on a master other than the
	// global keys' (it goes down) and one on a third or the global one.
	var down, up *simulator.CreatedAccount
	downNode := -1
	for i := 0; i < 50 && (down == nil || up == nil); i++ {
		var a simulator.CreatedAccount
		if code := r.admin(t, http.MethodPost, "/accounts", map[string]any{"name": "shard"}, &a); code != http.StatusCreated {
			t.Fatalf("POST /accounts: status %d", code)
		}
		switch n := c.nodeOf(t, prefix+"{a:"+a.AccountID+"}x"); {
		case down == nil && n != global:
			down, downNode = &a, n
		case up == nil && down != nil && n != downNode:
			up = &a
		}
	}
	if down == nil || up == nil {
		t.Fatal("50 throwaway accounts, none on two masters as needed")
	}
	list := map[string]int{"limit": 10, "page": 1}
	status, _, before := r.call(t, &down.Account, spec.PathCampaignList, list)
	if status != http.StatusOK {
		t.Fatalf("campaign/list before the outage: %d %s", status, before)
	}

	c.nodes[downNode].stop(t)
	for _, op := range []struct {
		name string
		body any
	}{
		{spec.PathContactAdd, map[string]string{"email": "shard@example.com"}},
		{spec.PathCampaignList, list},
	} {
		start := time.Now()
		status, _, body := r.call(t, &down.Account, op.name, op.body)
		elapsed := time.Since(start)
		t.Logf("%s with its master down: %d %s after %v", op.name, status, bytes.TrimSpace(body), elapsed.Round(time.Millisecond))
		if got, want := strings.TrimSpace(string(body)), `{"error":"`+spec.MsgInternal+`"}`; status != http.StatusInternalServerError || got != want {
			t.Errorf("%s: %d %s, want 500 %s", op.name, status, got, want)
		}
		if elapsed >= hangBound {
			t.Errorf("%s took %v, want an answer before %v", op.name, elapsed, hangBound)
		}
		start = time.Now()
		if status, _, body := r.call(t, &up.Account, op.name, op.body); status != http.StatusOK {
			t.Errorf("%s of an account on another master: %d %s, want 200", op.name, status, body)
		}
		t.Logf("%s of an account on another master: %v", op.name, time.Since(start).Round(time.Millisecond))
	}

	// The health check reads the global slot, which is up.
	var health struct {
		Status string `json:"status"`
	}
	if code := r.admin(t, http.MethodGet, "/healthz", nil, &health); code != http.StatusOK {
		t.Errorf("/healthz with an accounts' master down = %d, want 200 (the global keys' master is up)", code)
	}

	c.nodes[downNode] = c.startNode(t, downNode)
	c.waitOK(t)
	r.servesAgain(t, &down.Account, list, before, "the master", "shard@example.com")
	if code := r.admin(t, http.MethodGet, "/healthz", nil, &health); code != http.StatusOK {
		t.Errorf("/healthz after the master came back = %d, want 200", code)
	}
}

// TestRoundTrips_Cluster: on a cluster each account's keys have a slot of
// their own and the global keys (clock, faults, registry, sequence)
// another. The Gate decides from the account's mirror of the global state
// in one round trip, as on one Redis; an account's first request fills
// the mirror (three), a request while a fault is pending takes it in the
// global slot (two, three when it takes the last and clears the flag); a
// change of the clock or faults pushes to the mirrors before it returns
// (three). A new contact is two (the sequence, then the account's
// script). The keys of many accounts spread over the masters.
func TestRoundTrips_Cluster(t *testing.T) {
	c := startRedisCluster(t)
	db := MustOpenDB(t, c.URL)
	gate := redisstore.NewGate(db, 1, spec.RateWindow)
	// many lets an account's second and later requests through.
	many := redisstore.NewGate(db, spec.RateLimit, spec.RateWindow)
	contacts := redisstore.NewContactStore(db)
	ctx := context.Background()
	n := 0
	arrival := func() simulator.Arrival {
		return simulator.Arrival{Operation: spec.PathContactAdd, AccountID: "acc" + strconv.Itoa(n), Real: time.Now()}
	}
	admit := func() error {
		n++
		_, err := gate.Admit(ctx, arrival())
		return err
	}
	refused := func() error {
		d, err := gate.Admit(ctx, arrival())
		if err == nil && d.Rate.Allowed {
			return fmt.Errorf("the second request of a limit of 1 allowed")
		}
		return err
	}
	// again is an allowed request of the last account; fault says whether
	// it must take a fault.
	again := func(fault bool) func() error {
		return func() error {
			d, err := many.Admit(ctx, arrival())
			if err != nil {
				return err
			}
			if !d.Rate.Allowed {
				return fmt.Errorf("refused: %+v", d.Rate)
			}
			if got := d.Fault != nil; got != fault {
				return fmt.Errorf("took a fault: %v, want %v", got, fault)
			}
			return nil
		}
	}
	add := func() error {
		n++
		_, _, err := contacts.UpsertContact(ctx, &simulator.Contact{AccountID: "acc" + strconv.Itoa(n), ID: "c" + strconv.Itoa(n), Email: "c" + strconv.Itoa(n) + "@example.com"})
		return err
	}
	// Load every script on every master first (EVALSHA, then EVAL): the
	// accounts of 30 calls land on all three.
	for range 30 {
		for _, call := range []func() error{admit, refused, add} {
			if err := call(); err != nil {
				t.Fatal(err)
			}
		}
	}
	// And the fault scripts: the push to every mirror, a take that finds
	// none pending and clears the account's flag, on every master.
	control := redisstore.NewControlStore(db)
	if err := control.AddFault(ctx, simulator.Fault{ID: "f0", Operation: "*", Kind: simulator.FaultError, Remaining: 1}); err != nil {
		t.Fatal(err)
	}
	if f, err := control.TakeFault(ctx, simulator.FaultQuery{Operation: spec.PathCampaignList}); err != nil || f == nil {
		t.Fatalf("TakeFault = %v, %v, want the fault added", f, err)
	}
	last := n
	for n = 1; n <= last; n++ {
		// The accounts of the adds have no mirror: fill it too.
		if err := again(false)(); err != nil {
			t.Fatal(err)
		}
	}
	n = last
	hook := &redisstore.RoundTrips{}
	db.AddHook(hook)
	for _, tt := range []struct {
		name string
		call func() error
		want int64
	}{
		{"Gate.Admit, an account's first request (no mirror: fill it, decide)", admit, 3},
		{"Gate.Admit of an allowed request, the mirror there", again(false), 1},
		{"Gate.Admit of a refused one", refused, 1},
		{"UpsertContact of a new contact", add, 2},
		{"Gate.Admit, the next account's first request", admit, 3},
		{"ControlStore.AddFault (the fault, publish, the mirrors' pipeline)", func() error {
			return control.AddFault(ctx, simulator.Fault{ID: "f1", Operation: spec.PathContactAdd, Kind: simulator.FaultError, Status: 503, Remaining: 2})
		}, 3},
		{"Gate.Admit of an allowed request while a fault is pending", again(true), 2},
		{"Gate.Admit that takes the last occurrence (and clears the flag)", again(true), 3},
		{"Gate.Admit once none is pending", again(false), 1},
		{"Gate.Admit of a refused one while none is pending", refused, 1},
	} {
		before := hook.Count()
		if err := tt.call(); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got := hook.Count() - before; got != tt.want {
			t.Errorf("%s: %d round trips, want %d", tt.name, got, tt.want)
		}
	}
	// Every master holds keys of the prefix: the accounts are spread.
	for i, p := range c.ports {
		rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(p)})
		keys, _, err := rdb.Scan(ctx, 0, globEscaper.Replace(db.Prefix)+"*", 1000).Result()
		rdb.Close()
		if err != nil || len(keys) == 0 {
			t.Errorf("master %d holds no key of the prefix (%v): the accounts are not spread", i, err)
		}
	}
}

// openReplicaDB opens a second DB on the cluster with db's prefix: another
// replica's view of the same state.
func openReplicaDB(t *testing.T, url string, db *redisstore.DB) *redisstore.DB {
	t.Helper()
	other := redisstore.NewDB(url)
	other.Prefix = db.Prefix
	if err := other.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	return other
}

// TestGateMirror_Cluster: two replicas (two DBs) on a cluster, the Gate
// of B reading each account's mirror of the global state (issue 21). A
// change made through A has reached B's next request when it returns: a
// clock set, a fault added (it fires), faults cleared (they stop), a
// reset. And a mirror fill that read the state before a change and lands
// after it loses to the change's push.
func TestGateMirror_Cluster(t *testing.T) {
	c := startRedisCluster(t)
	dbA := MustOpenDB(t, c.URL)
	dbB := openReplicaDB(t, c.URL, dbA)
	controlA := redisstore.NewControlStore(dbA)
	gateB := redisstore.NewGate(dbB, 1<<20, spec.RateWindow)
	ctx := context.Background()
	frozenAt := time.Date(2030, 1, 2, 3, 4, 5, 6, time.UTC)

	// Several accounts, so that the pushes reach several masters.
	accounts := []string{"m1", "m2", "m3", "m4", "m5", "m6"}
	admit := func(t *testing.T, acct string) simulator.Admission {
		t.Helper()
		ad, err := gateB.Admit(ctx, simulator.Arrival{AccountID: acct, Operation: spec.PathCampaignList, Real: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		if !ad.Rate.Allowed {
			t.Fatalf("%s refused: %+v", acct, ad.Rate)
		}
		return ad
	}
	for _, acct := range accounts {
		if ad := admit(t, acct); !near(ad.Now, time.Now()) || ad.Fault != nil {
			t.Fatalf("%s before any change: now %v, fault %v, want real time and none", acct, ad.Now, ad.Fault)
		}
	}

	tests := []struct {
		name   string
		change func() error
		frozen bool // the clock B's next request sees: frozenAt, else real time
		fault  bool // whether B's next request takes a fault
	}{
		{"a clock set through A", func() error {
			return controlA.SetClock(ctx, simulator.Clock{Frozen: true, FrozenAt: frozenAt})
		}, true, false},
		{"a fault added through A", func() error {
			return controlA.AddFault(ctx, simulator.Fault{ID: "f", Operation: "*", Kind: simulator.FaultError, Status: 503, Remaining: 100})
		}, true, true},
		{"faults cleared through A", func() error { return controlA.ClearFaults(ctx) }, true, false},
		{"a fault added, then deleted through A", func() error {
			if err := controlA.AddFault(ctx, simulator.Fault{ID: "g", Operation: "*", Kind: simulator.FaultError, Status: 503, Remaining: 100}); err != nil {
				return err
			}
			_, err := controlA.DeleteFault(ctx, "g")
			return err
		}, true, false},
		{"a fault added, then a reset through A", func() error {
			if err := controlA.AddFault(ctx, simulator.Fault{ID: "h", Operation: "*", Kind: simulator.FaultError, Status: 503, Remaining: 100}); err != nil {
				return err
			}
			return controlA.ResetControl(ctx)
		}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.change(); err != nil {
				t.Fatal(err)
			}
			for _, acct := range accounts {
				ad := admit(t, acct)
				if tt.frozen && !ad.Now.Equal(frozenAt) {
					t.Errorf("%s: now %v, want the frozen %v", acct, ad.Now, frozenAt)
				}
				if !tt.frozen && !near(ad.Now, time.Now()) {
					t.Errorf("%s: now %v, want real time", acct, ad.Now)
				}
				if got := ad.Fault != nil; got != tt.fault {
					t.Errorf("%s: took a fault: %v, want %v", acct, got, tt.fault)
				}
			}
		})
	}

	t.Run("a fill that read the state before a change loses to its push", func(t *testing.T) {
		const acct = "late"
		stale, err := gateB.FillMirror(ctx, acct)
		if err != nil {
			t.Fatal(err)
		}
		if err := controlA.SetClock(ctx, simulator.Clock{Frozen: true, FrozenAt: frozenAt}); err != nil {
			t.Fatal(err)
		}
		res, err := gateB.AdmitFilled(ctx, simulator.Arrival{AccountID: acct, Operation: spec.PathCampaignList, Real: time.Now()}, "late-call", stale)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := fmt.Sprint(res[3], ".", res[4]), fmt.Sprint(frozenAt.Unix(), ".", frozenAt.Nanosecond()); got != want {
			t.Errorf("decided at %s, want the clock set after the fill, %s", got, want)
		}
	})

	t.Run("a clear of the faults flag for a version before a fault was added hides nothing", func(t *testing.T) {
		const acct = "cleared"
		admit(t, acct)
		// The version a take saw with no fault pending, before the add.
		seen, err := gateB.FillMirror(ctx, acct)
		if err != nil {
			t.Fatal(err)
		}
		if err := controlA.AddFault(ctx, simulator.Fault{ID: "k", Operation: "*", Kind: simulator.FaultError, Status: 503, Remaining: 1}); err != nil {
			t.Fatal(err)
		}
		if err := gateB.ClearFaultsFlag(ctx, acct, seen[0]); err != nil {
			t.Fatal(err)
		}
		if ad := admit(t, acct); ad.Fault == nil {
			t.Error("the fault added after the take's version did not fire")
		}
	})
}

// near reports whether a and b are within a second: real time read twice.
func near(a, b time.Time) bool { return a.Sub(b).Abs() < time.Second }

// TestClusterGlobalDown: the master of the global slot stops. The Gate of
// an account whose slot lives on another master and whose mirror exists
// goes on admitting (one script on the account's slot) while no fault is
// pending; an account without a mirror, and a change of the clock, need
// the global slot and fail.
func TestClusterGlobalDown(t *testing.T) {
	c := startRedisCluster(t)
	db := MustOpenDB(t, c.URL)
	gate := redisstore.NewGate(db, spec.RateLimit, spec.RateWindow)
	ctx := context.Background()
	global := c.nodeOf(t, db.Prefix+"{"+db.Prefix+"}x")
	var acct, fresh string
	for i := 0; i < 100 && (acct == "" || fresh == ""); i++ {
		a := "g" + strconv.Itoa(i)
		if c.nodeOf(t, db.Prefix+"{a:"+a+"}x") == global {
			continue
		}
		if acct == "" {
			acct = a
		} else {
			fresh = a
		}
	}
	if fresh == "" {
		t.Fatal("100 accounts, not two on a master other than the global slot's")
	}
	arrival := func(a string) simulator.Arrival {
		return simulator.Arrival{AccountID: a, Operation: spec.PathCampaignList, Real: time.Now()}
	}
	if _, err := gate.Admit(ctx, arrival(acct)); err != nil {
		t.Fatal(err)
	}

	c.stopNode(t, global)
	for i := range 3 {
		ad, err := gate.Admit(ctx, arrival(acct))
		if err != nil {
			t.Fatalf("request %d of an account with a mirror, the global master down: %v", i, err)
		}
		if !ad.Rate.Allowed || ad.Rate.Count != i+2 {
			t.Errorf("request %d: %+v, want allowed, count %d", i, ad.Rate, i+2)
		}
	}
	start := time.Now()
	_, err := gate.Admit(ctx, arrival(fresh))
	t.Logf("an account's first request, the global master down: %v after %v", err, time.Since(start).Round(time.Millisecond))
	if err == nil {
		t.Error("an account without a mirror admitted with the global master down")
	}
	if err := redisstore.NewControlStore(db).SetClock(ctx, simulator.Clock{Offset: time.Hour}); err == nil {
		t.Error("SetClock succeeded with the global master down")
	}
}

// TestClusterGlobalDown_Simulator: a simulator on a cluster whose global
// slot's master stops. What was observed is what docs/redis.md says: a
// configured account (authenticated in memory) whose slot lives on
// another master and whose mirror exists is still served a Campaign List
// (campaigns in memory, the Gate on its own slot); an Add Contact (its
// sequence number is global) answers 500; /healthz (a read of the global
// slot) answers 503.
func TestClusterGlobalDown_Simulator(t *testing.T) {
	c := startRedisCluster(t)
	accounts, err := simulator.ReadAccounts(bytes.NewReader(fixtures.Accounts))
	if err != nil {
		t.Fatal(err)
	}
	alpha := accounts[0]
	// A prefix whose global slot is on a master other than alpha's.
	var prefix string
	global := -1
	for i := 0; i < 50 && prefix == ""; i++ {
		p := "simtest-global-" + strconv.Itoa(i) + ":"
		if g := c.nodeOf(t, p+"{"+p+"}x"); g != c.nodeOf(t, p+"{a:"+alpha.AccountID+"}x") {
			prefix, global = p, g
		}
	}
	if prefix == "" {
		t.Fatal("50 prefixes, none with alpha's slot off the global master")
	}
	r := startReplica(t, buildSimulator(t), "simulator", c.URL, t.TempDir(), "--redis-prefix", prefix)
	list := map[string]int{"limit": 10, "page": 1}
	status, _, before := r.call(t, alpha, spec.PathCampaignList, list)
	if status != http.StatusOK {
		t.Fatalf("campaign/list before the outage: %d %s", status, before)
	}

	c.stopNode(t, global)
	for i := range 3 {
		start := time.Now()
		status, _, body := r.call(t, alpha, spec.PathCampaignList, list)
		t.Logf("campaign/list %d, the global master down: %d after %v", i, status, time.Since(start).Round(time.Millisecond))
		if status != http.StatusOK || !bytes.Equal(body, before) {
			t.Errorf("campaign/list %d, the global master down: %d %s, want 200 and the same page", i, status, body)
		}
	}
	start := time.Now()
	status, _, body := r.call(t, alpha, spec.PathContactAdd, map[string]string{"email": "global@example.com"})
	t.Logf("contact/add, the global master down: %d %s after %v", status, bytes.TrimSpace(body), time.Since(start).Round(time.Millisecond))
	if got, want := strings.TrimSpace(string(body)), `{"error":"`+spec.MsgInternal+`"}`; status != http.StatusInternalServerError || got != want {
		t.Errorf("contact/add: %d %s, want 500 %s", status, got, want)
	}
	if code := r.admin(t, http.MethodGet, "/healthz", nil, nil); code != http.StatusServiceUnavailable {
		t.Errorf("/healthz with the global master down = %d, want 503", code)
	}
}
