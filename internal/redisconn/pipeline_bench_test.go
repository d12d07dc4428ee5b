package redisconn_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/redisconn"
	"github.com/lockzoo/lockzoo/internal/redistest"
)

// BenchmarkPipeline sends GET through each kind of Pipeline from
// locktest.BenchParallelism goroutines per processor, in an idle process
// ("idle") and beside two goroutines per processor that never block
// ("busy-cpu", locktest.BusyCPU), and reports each call's p50 and p99
// and the Redis CPU per call.
//
// NewDeadlinePipeline's writer yields the processor before its first
// write, so that the callers ready to run queue their commands for the
// same write: in an idle process its calls cost Redis less (fewer, larger
// reads and writes). NewPipeline's writer writes at once. Beside busy
// goroutines the yield waits for them: a yielding writer goes behind every
// goroutine ready to run, and one that never blocks gives its processor up
// only when the runtime preempts it (about every 10 ms). That is why
// lua_release, whose callers are the user's goroutines, uses NewPipeline;
// redlock's rounds over five nodes gain more from the yield than they
// lose (see both packages' BenchmarkLockUnlockBusyCPU).
func BenchmarkPipeline(b *testing.B) {
	kinds := []struct {
		name string
		new  func(redisconn.Pool) *redisconn.Pipeline
	}{
		{"NewPipeline", redisconn.NewPipeline},
		{"NewDeadlinePipeline", redisconn.NewDeadlinePipeline},
	}
	for _, load := range []string{"idle", "busy-cpu"} {
		for _, kind := range kinds {
			b.Run(load+"/"+kind.name, func(b *testing.B) {
				node := redistest.Start(b, 1)[0]
				p := kind.new(node.Pool())
				if load == "busy-cpu" {
					locktest.BusyCPU(b, 2*runtime.GOMAXPROCS(0))
				}
				// A deadline, as NewDeadlinePipeline's callers must have.
				ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
				defer cancel()
				defer locktest.ReportRedisCPU(b, node)()
				locktest.BenchParallelTimed(b, func(_ context.Context, key string) error {
					_, err := p.Do(ctx, "GET", []any{key})
					return err
				})
			})
		}
	}
}
