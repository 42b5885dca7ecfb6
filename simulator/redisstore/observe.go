package redisstore

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// Observer is told of every round trip the DB's client makes: the
// simulator's metrics implement it (DB.Observe).
type Observer interface {
	// ObserveRedis is called once per command or pipeline, when it ends:
	// command is the command's name in lower case ("evalsha", "hget",
	// "ping", "hello" for a new connection's handshake…) or "pipeline", d
	// its time (go-redis's retry of a lost connection included), err its
	// failure or nil. It is called from many goroutines at once.
	ObserveRedis(command string, d time.Duration, err error)
}

// Observe tells o of every round trip from now on, through a redis.Hook on
// the connection pool (call it after Open). Two answers are no failure: a
// missing key (redis.Nil, a normal answer), and NOSCRIPT, Redis's answer to
// a script it has not loaded yet (after a start or a restart), which
// go-redis follows at once with the script itself (a second round trip,
// counted as an "eval").
func (db *DB) Observe(o Observer) { db.client.AddHook(observeHook{o}) }

type observeHook struct{ o Observer }

// failure is err unless it is one of the answers Observe counts as none.
func failure(err error) error {
	if err == nil || errors.Is(err, redis.Nil) || errors.Is(err, redis.ErrNoScript) || redis.HasErrorPrefix(err, "NOSCRIPT") {
		return nil
	}
	return err
}

// DialHook implements redis.Hook: a failed dial fails the command that
// needed it, which ProcessHook counts.
func (h observeHook) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook implements redis.Hook.
func (h observeHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		start := time.Now()
		err := next(ctx, cmd)
		h.o.ObserveRedis(cmd.Name(), time.Since(start), failure(err))
		return err
	}
}

// ProcessPipelineHook implements redis.Hook.
func (h observeHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		start := time.Now()
		err := next(ctx, cmds)
		h.o.ObserveRedis("pipeline", time.Since(start), failure(err))
		return err
	}
}
