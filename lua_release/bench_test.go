package luarelease_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/protocol"
	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/internal/scripts"
	luarelease "github.com/lockzoo/lockzoo/lua_release"
	"github.com/lockzoo/lockzoo/strategy"
)

// BenchmarkLockUnlock measures lua_release's uncontended Lock+Unlock.
// Compare it with BenchmarkRawSetNXEvalsha from the same run.
func BenchmarkLockUnlock(b *testing.B) {
	node := redistest.Start(b, 1)[0]
	l, err := luarelease.New(node.Pool(), strategy.Config{TTL: 10 * time.Second})
	if err != nil {
		b.Fatalf("New() = %v, want nil", err)
	}
	defer locktest.ReportRedisCPU(b, node)()
	locktest.BenchLockUnlock(b, l)
}

// BenchmarkLockUnlockBusyCPU is BenchmarkLockUnlock beside two goroutines
// per processor that never block (locktest.BusyCPU), as in a process with
// CPU-bound work, with the p50 and p99 of each pair: lua_release's shared
// connection writes a caller's script at once rather than yielding the
// processor first, which would wait behind the busy goroutines (see
// redisconn's BenchmarkPipeline).
func BenchmarkLockUnlockBusyCPU(b *testing.B) {
	node := redistest.Start(b, 1)[0]
	l, err := luarelease.New(node.Pool(), strategy.Config{TTL: 10 * time.Second})
	if err != nil {
		b.Fatalf("New() = %v, want nil", err)
	}
	locktest.BusyCPU(b, 2*runtime.GOMAXPROCS(0))
	locktest.BenchLockUnlockTimed(b, l)
}

// BenchmarkContended is the hand-off workload: one key, 8 workers x 25
// critical sections of 1 ms, with the workers sharing one Locker and with a
// Locker each.
func BenchmarkContended(b *testing.B) {
	node := redistest.Start(b, 1)[0]
	locktest.BenchContended(b, func() strategy.Locker {
		l, err := luarelease.New(node.Pool(), strategy.Config{TTL: 10 * time.Second})
		if err != nil {
			b.Fatalf("New() = %v, want nil", err)
		}
		return l
	})
}

// BenchmarkRawSetNXEvalsha is the ceiling: the bare SET NX PX and EVALSHA
// compare-and-delete, over the same kind of pool, with no library around
// them.
func BenchmarkRawSetNXEvalsha(b *testing.B) {
	node := redistest.Start(b, 1)[0]
	pool := node.Pool()
	release := scripts.CompareDelete()
	defer locktest.ReportRedisCPU(b, node)()
	locktest.BenchParallel(b, func(ctx context.Context, key string) error {
		val := key // each goroutine has its own key, so the key is a unique token
		c, err := pool.GetContext(ctx)
		if err != nil {
			return err
		}
		reply, err := redis.DoContext(c, ctx, "SET", key, val, "NX", "PX", 10000)
		c.Close()
		if err != nil {
			return err
		}
		if reply == nil {
			return errors.New("SET NX: key held")
		}
		c, err = pool.GetContext(ctx)
		if err != nil {
			return err
		}
		n, err := redis.Int(release.DoContext(ctx, c, key, val))
		c.Close()
		if err == nil && n != 1 {
			err = errors.New("EVALSHA: not released")
		}
		return err
	})
}

// BenchmarkRawScripts runs lua_release's own acquire and release scripts
// bare, with no library around them: the difference from
// BenchmarkLockUnlock is the library's cost, the difference from
// BenchmarkRawSetNXEvalsha is the cost of the fencing counter, the line of
// waiters and the release notice in Redis.
func BenchmarkRawScripts(b *testing.B) {
	node := redistest.Start(b, 1)[0]
	pool := node.Pool()
	acquire, release := luarelease.Scripts()
	defer locktest.ReportRedisCPU(b, node)()
	locktest.BenchParallel(b, func(ctx context.Context, key string) error {
		c, err := pool.GetContext(ctx)
		if err != nil {
			return err
		}
		k := protocol.KeysOf(protocol.LockKey("lock:", key))
		fence, err := redis.Int64(acquire.DoContext(ctx, c, k.Lock, k.Fence, k.Line, k.Seen, key, 10000, "1", key, "L"))
		c.Close()
		if err != nil {
			return fmt.Errorf("acquire: %w (a reply that is not a fencing token: the key was held)", err)
		}
		if fence < 1 {
			return errors.New("acquire: no fencing token")
		}
		c, err = pool.GetContext(ctx)
		if err != nil {
			return err
		}
		n, err := redis.Int(release.DoContext(ctx, c, k.Lock, k.Fence, k.Line, k.Seen, key))
		c.Close()
		if err == nil && n != 1 {
			err = errors.New("release: not released")
		}
		return err
	})
}
