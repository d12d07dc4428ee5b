package slogobserver_test

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/gomodule/redigo/redis"

	luarelease "github.com/lockzoo/lockzoo/lua_release"
	"github.com/lockzoo/lockzoo/strategy"
	"github.com/lockzoo/lockzoo/strategy/slogobserver"
)

// A Locker whose events go to the service's logger. Debug records (every
// acquire and release) are dropped by a logger at Info; what is left is
// what an operator wants to see: locks not acquired and locks lost.
func Example() {
	pool := &redis.Pool{Dial: func() (redis.Conn, error) { return redis.Dial("tcp", "localhost:6379") }}
	defer pool.Close()
	logger := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	locker, err := luarelease.New(pool, strategy.Config{Observer: slogobserver.New(logger)})
	if err != nil {
		logger.Error("new locker", "err", err)
		return
	}
	defer locker.Close()
	_ = locker // locker.Lock(ctx, "report") ...
}

// The records the Observer writes, here for two events a Locker would
// report (the time is left out to keep the output stable).
func ExampleObserver() {
	noTime := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{Level: slog.LevelDebug, ReplaceAttr: noTime}))
	o := slogobserver.New(logger)
	ctx := context.Background()
	o.Acquired(ctx, strategy.AcquiredEvent{
		Technique: "lua_release", Op: strategy.OpLock, Key: "report", Token: "t1",
		Fence: 42, Wait: 12 * time.Millisecond, Attempts: 3,
	})
	o.Lost(ctx, strategy.LostEvent{
		Technique: "lua_release", Op: strategy.OpUnlock, Key: "report", Token: "t1", Fence: 42,
		Reason: strategy.LostNotHeld, Held: 11 * time.Second, Late: time.Second, Err: strategy.ErrNotHeld,
	})
	// Output:
	// level=DEBUG msg="lock acquired" technique=lua_release op=lock key=report token=t1 fence=42 wait=12ms attempts=3 handed_off=false
	// level=ERROR msg="lock lost" technique=lua_release op=unlock key=report token=t1 fence=42 reason=not-held held=11s late=1s err="lockzoo: lock not held"
}
