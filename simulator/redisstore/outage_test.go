package redisstore_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/partner-v3/conformance-kit/simulator"
	"github.com/partner-v3/conformance-kit/simulator/redisstore"
	"github.com/partner-v3/conformance-kit/simulator/spec"
)

// hangBound is the "does not hang" bound of the outage tests: a store call
// against a dead or stuck Redis must fail well before it. It is generous
// (the timeouts are 500 ms) so a loaded machine does not fail the test.
const hangBound = 2 * time.Second

// recoverBound is how long the store may take to work again once Redis is
// back; go-redis re-dials on the next command.
const recoverBound = 10 * time.Second

// storeCall is one store operation the outage tests try.
type storeCall struct {
	name string
	call func(ctx context.Context) error
}

func storeCalls(db *redisstore.DB) []storeCall {
	contacts := redisstore.NewContactStore(db)
	counter := redisstore.NewRateCounter(db, spec.RateLimit, spec.RateWindow)
	control := redisstore.NewControlStore(db)
	gate := redisstore.NewGate(db, spec.RateLimit, spec.RateWindow)
	accounts := redisstore.NewAccountStore(db, nil, simulator.AccountDefaults{Seed: 1})
	n := 0
	return []storeCall{
		{"Ping", db.Ping},
		{"Take", func(ctx context.Context) error {
			d, err := counter.Take(ctx, "acc", time.Now())
			if err == nil && !d.Allowed {
				return fmt.Errorf("take refused: %+v", d)
			}
			return err
		}},
		{"UpsertContact", func(ctx context.Context) error {
			n++
			c := &simulator.Contact{AccountID: "acc", ID: fmt.Sprintf("c%d", n), Email: fmt.Sprintf("c%d@example.com", n)}
			_, created, err := contacts.UpsertContact(ctx, c)
			if err == nil && !created {
				return fmt.Errorf("contact %s not created", c.ID)
			}
			return err
		}},
		{"TakeFault", func(ctx context.Context) error {
			_, err := control.TakeFault(ctx, simulator.FaultQuery{Operation: spec.PathContactAdd, AccountID: "acc"})
			return err
		}},
		{"Authenticate a throwaway key", func(ctx context.Context) error {
			_, err := accounts.Authenticate(ctx, "tmp-key-unknown", "secret")
			if simulator.ErrorCode(err) == simulator.EUNAUTHORIZED {
				return nil // Redis answered: no such key
			}
			return err
		}},
		{"CreateAccount", func(ctx context.Context) error {
			a, err := simulator.NewThrowawayAccount(simulator.AccountSpec{}, accounts.AccountDefaults(), time.Now())
			if err != nil {
				return err
			}
			return accounts.CreateAccount(ctx, a)
		}},
		{"Count", func(ctx context.Context) error {
			_, err := counter.Count(ctx, "acc", time.Now())
			return err
		}},
		{"Admit", func(ctx context.Context) error {
			ad, err := gate.Admit(ctx, simulator.Arrival{AccountID: "acc-gate", Operation: spec.PathContactAdd, Real: time.Now()})
			if err == nil && !ad.Rate.Allowed {
				return fmt.Errorf("admit refused: %+v", ad)
			}
			return err
		}},
	}
}

// checkFailsFast runs every call against an unavailable Redis: each must
// return an error that the server renders as 500 Internal server error
// (spec §7), before hangBound.
func checkFailsFast(t *testing.T, calls []storeCall) {
	t.Helper()
	for _, c := range calls {
		start := time.Now()
		err := c.call(context.Background())
		elapsed := time.Since(start)
		t.Logf("%s during the outage: %v after %v", c.name, err, elapsed.Round(time.Millisecond))
		if err == nil {
			t.Errorf("%s during the outage: no error", c.name)
		}
		if got, want := simulator.ErrorCode(err), simulator.EINTERNAL; got != want {
			t.Errorf("%s: ErrorCode = %q, want %q", c.name, got, want)
		}
		if elapsed >= hangBound {
			t.Errorf("%s took %v, want an error before %v", c.name, elapsed, hangBound)
		}
	}
}

// checkRecovers waits until every call succeeds again, without reopening
// anything: the pool must heal by itself.
func checkRecovers(t *testing.T, calls []storeCall) {
	t.Helper()
	start := time.Now()
	for _, c := range calls {
		for {
			err := c.call(context.Background())
			if err == nil {
				break
			}
			if time.Since(start) > recoverBound {
				t.Fatalf("%s still fails %v after Redis came back: %v", c.name, recoverBound, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	t.Logf("recovered %v after Redis came back", time.Since(start).Round(time.Millisecond))
}

func TestOutage_Miniredis(t *testing.T) {
	m := miniredis.RunT(t)
	db := MustOpenDB(t, "redis://"+m.Addr()+"/0")
	calls := storeCalls(db)
	for _, c := range calls {
		if err := c.call(context.Background()); err != nil {
			t.Fatalf("%s before the outage: %v", c.name, err)
		}
	}
	m.Close()
	checkFailsFast(t, calls)
	if err := m.Restart(); err != nil {
		t.Fatal(err)
	}
	checkRecovers(t, calls)
}

// silentRedis listens on 127.0.0.1 as a Redis that accepts connections
// and never answers: each is handed to keep. It returns the Redis URL.
func silentRedis(t *testing.T, keep func(net.Conn)) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			keep(conn)
		}
	}()
	return "redis://" + ln.Addr().String() + "/0"
}

// A Redis that accepts connections but never answers (hung, or a network
// that drops replies) must cost a request the read timeout, not forever.
func TestOutage_StuckRedis(t *testing.T) {
	db := redisstore.NewDB(silentRedis(t, func(conn net.Conn) {
		go func() {
			// Read and discard, answer nothing.
			buf := make([]byte, 4096)
			for {
				if _, err := conn.Read(buf); err != nil {
					conn.Close()
					return
				}
			}
		}()
	}))
	if err := db.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	checkFailsFast(t, storeCalls(db))
}

// A caller's deadline shorter than the timeouts wins.
func TestOutage_ContextDeadline(t *testing.T) {
	db := redisstore.NewDB(silentRedis(t, func(conn net.Conn) { t.Cleanup(func() { conn.Close() }) }))
	db.Timeout = time.Minute
	if err := db.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := db.Ping(ctx); err == nil {
		t.Fatalf("Ping of a silent server: no error")
	}
	if elapsed := time.Since(start); elapsed >= hangBound {
		t.Errorf("Ping took %v with a 100 ms deadline", elapsed)
	}
}

// TestOutage_RedisServer stops a real redis-server under the store and
// starts it again on the same port.
func TestOutage_RedisServer(t *testing.T) {
	bin := redisServerBinary(t)
	port := freePort(t)
	srv := startRedisServer(t, bin, port)
	// Not MustOpenDB: this Redis and its keys die with the test.
	db := redisstore.NewDB("redis://127.0.0.1:" + strconv.Itoa(port) + "/0")
	if err := db.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	calls := storeCalls(db)
	for _, c := range calls {
		if err := c.call(context.Background()); err != nil {
			t.Fatalf("%s before the outage: %v", c.name, err)
		}
	}
	srv.stop(t)
	checkFailsFast(t, calls)

	// Without persistence the new redis-server starts empty.
	startRedisServer(t, bin, port)
	checkRecovers(t, calls)
}

// redisServerBinary finds redis-server on PATH: a skip locally, a failure
// with REQUIRE_REDIS=1.
func redisServerBinary(tb testing.TB) string {
	tb.Helper()
	return redisBinary(tb, "redis-server", "redis-server")
}

// redisBinary finds name on PATH: a skip locally, a failure with
// REQUIRE_REDIS=1; pkg is the Debian package that brings it.
func redisBinary(tb testing.TB, name, pkg string) string {
	tb.Helper()
	bin, err := exec.LookPath(name)
	if err != nil {
		if requireRedis() {
			tb.Fatalf("%s=1 but %s is not on PATH (apt-get install %s): %v", envRequireRedis, name, pkg, err)
		}
		tb.Skipf("%s is not on PATH (apt-get install %s): %v", name, pkg, err)
	}
	return bin
}

func freePort(tb testing.TB) int {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

type redisServer struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// runRedisServer starts cmd, a redis-server, writing to logFile (closed
// when it exits), and stops it in cleanup.
func runRedisServer(tb testing.TB, cmd *exec.Cmd, logFile *os.File) (*redisServer, error) {
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start redis-server: %w", err)
	}
	s := &redisServer{cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		logFile.Close()
		close(s.done)
	}()
	tb.Cleanup(func() { s.stop(tb) })
	return s, nil
}

// startRedisServer runs redis-server on 127.0.0.1:port as a child process,
// without persistence, waits until it answers, and stops it in cleanup.
func startRedisServer(tb testing.TB, bin string, port int) *redisServer {
	tb.Helper()
	dir := tb.TempDir()
	logFile, err := os.Create(filepath.Join(dir, "redis.log"))
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(bin,
		"--bind", "127.0.0.1", "--port", strconv.Itoa(port),
		"--save", "", "--appendonly", "no", "--dir", dir)
	s, err := runRedisServer(tb, cmd, logFile)
	if err != nil {
		tb.Fatal(err)
	}

	db := redisstore.NewDB("redis://127.0.0.1:" + strconv.Itoa(port) + "/0")
	if err := db.Open(); err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := db.Ping(context.Background())
		if err == nil {
			return s
		}
		select {
		case <-s.done:
			log, _ := os.ReadFile(filepath.Join(dir, "redis.log"))
			tb.Fatalf("redis-server exited: %s", log)
		default:
		}
		if time.Now().After(deadline) {
			tb.Fatalf("redis-server on port %d does not answer: %v", port, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop kills the process (a crash, not a clean shutdown) and waits for it.
func (s *redisServer) stop(tb testing.TB) {
	select {
	case <-s.done:
		return
	default:
	}
	if err := s.cmd.Process.Kill(); err != nil {
		tb.Logf("kill redis-server: %v", err)
	}
	<-s.done
}
