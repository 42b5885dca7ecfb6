package redisstore

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/partner-v3/conformance-kit/simulator/metrics"
)

// trip is one round trip an Observer was told of.
type trip struct {
	command string
	failed  bool
}

type tripLog struct {
	mu    sync.Mutex
	trips []trip
}

func (l *tripLog) ObserveRedis(command string, d time.Duration, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if d < 0 {
		panic("negative duration")
	}
	l.trips = append(l.trips, trip{command, err != nil})
}

// take returns the trips since the last take, and how many of them were
// a new connection's handshake (HELLO), which it leaves out.
func (l *tripLog) take() ([]trip, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []trip
	hellos := 0
	for _, t := range l.trips {
		if t.command == "hello" {
			hellos++
			continue
		}
		out = append(out, t)
	}
	l.trips = nil
	return out, hellos
}

// TestObserve: every command and pipeline is one round trip, a new
// connection's handshake (HELLO) too; a missing key and a script Redis has
// not loaded yet are answers, not failures; an error reply and a Redis that
// is gone are failures.
func TestObserve(t *testing.T) {
	mr := miniredis.RunT(t)
	db := NewDB("redis://" + mr.Addr() + "/0")
	if err := db.Open(); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var log tripLog
	db.Observe(&log)
	ctx := context.Background()
	script := redis.NewScript(`return 1`)
	steps := []struct {
		name string
		do   func() error
		want []trip
	}{
		{"a ping", func() error { return db.Ping(ctx) }, []trip{{"ping", false}}},
		{"a missing key", func() error {
			if err := db.client.Get(ctx, db.key("missing")).Err(); err != redis.Nil {
				t.Fatalf("GET of a missing key: %v, want redis.Nil", err)
			}
			return nil
		}, []trip{{"get", false}}},
		{"a script's first run: NOSCRIPT, then the script", func() error { return script.Run(ctx, db.client, nil).Err() },
			[]trip{{"evalsha", false}, {"eval", false}}},
		{"a script's next run", func() error { return script.Run(ctx, db.client, nil).Err() }, []trip{{"evalsha", false}}},
		{"a pipeline", func() error {
			_, err := db.client.Pipelined(ctx, func(p redis.Pipeliner) error {
				p.Set(ctx, db.key("a"), "1", time.Minute)
				p.Set(ctx, db.key("b"), "2", time.Minute)
				return nil
			})
			return err
		}, []trip{{"pipeline", false}}},
		{"an error reply", func() error {
			if err := db.client.Incr(ctx, db.key("a")).Err(); err != nil {
				return err
			}
			db.client.HGet(ctx, db.key("a"), "x") // WRONGTYPE
			return nil
		}, []trip{{"incr", false}, {"hget", true}}},
		{"Redis gone", func() error {
			mr.Close()
			if db.Ping(ctx) == nil {
				t.Fatal("Ping succeeded with Redis closed")
			}
			return nil
		}, []trip{{"ping", true}}},
	}
	for i, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		got, hellos := log.take()
		if i == 0 && hellos != 1 {
			t.Errorf("%s: %d handshakes, want 1 (the pool's first connection)", s.name, hellos)
		}
		if len(got) != len(s.want) {
			t.Fatalf("%s: trips %v, want %v", s.name, got, s.want)
		}
		for i := range got {
			if got[i] != s.want[i] {
				t.Errorf("%s: trips %v, want %v", s.name, got, s.want)
				break
			}
		}
	}
}

// BenchmarkObserveHook is what the hook adds to each round trip with the
// simulator's metrics observing: its two clock reads and the counting, the
// round trip itself left out.
func BenchmarkObserveHook(b *testing.B) {
	process := observeHook{metrics.New(metrics.Sources{})}.ProcessHook(func(context.Context, redis.Cmder) error { return nil })
	ctx := context.Background()
	cmd := redis.NewCmd(ctx, "evalsha", "0123", 0)
	b.ReportAllocs()
	for b.Loop() {
		if err := process(ctx, cmd); err != nil {
			b.Fatal(err)
		}
	}
}
