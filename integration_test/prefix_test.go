package integration_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/internal/techniques"
	"github.com/lockzoo/lockzoo/strategy"
)

// TestErrorNamesTechniqueOnce: a Redis failure in TryLock, Lock, Extend and
// Unlock comes back naming the technique once, "lockzoo: <name>: <op>
// <key>: ...", not once by the engine and again by the technique, with
// "lockzoo:" once (locktest.CheckError).
func TestErrorNamesTechniqueOnce(t *testing.T) {
	for _, target := range techniques.All() {
		t.Run(target.Name, func(t *testing.T) {
			nodes := redistest.Start(t, max(target.Nodes, 1))
			pools := make([]strategy.Pool, len(nodes))
			for i, n := range nodes {
				pools[i] = n.Pool()
			}
			l, err := target.New(pools, strategy.Config{TTL: 10 * time.Second, Retry: strategy.NoRetry()})
			if err != nil {
				t.Fatalf("New() = %v, want nil", err)
			}
			locktest.CloseOnCleanup(t, l)
			ctx := context.Background()
			extendLease, err := l.TryLock(ctx, "extend")
			if err != nil {
				t.Fatalf("TryLock() = %v, want nil", err)
			}
			unlockLease, err := l.TryLock(ctx, "unlock")
			if err != nil {
				t.Fatalf("TryLock() = %v, want nil", err)
			}
			for _, n := range nodes {
				n.Kill()
			}
			short, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			calls := []struct {
				op   string
				call func() error
				want string
			}{
				{"TryLock", func() error { _, err := l.TryLock(short, "k"); return err }, `trylock "k": `},
				{"Lock", func() error { _, err := l.Lock(short, "k"); return err }, `lock "k": `},
				{"Extend", func() error { return extendLease.Extend(short, time.Second) }, `extend "extend": `},
				{"Unlock", func() error { return unlockLease.Unlock(short) }, `unlock "unlock": `},
			}
			name := "lockzoo: " + target.Name + ": "
			for _, c := range calls {
				err := c.call()
				if err == nil {
					t.Errorf("%s() on killed nodes = nil, want a Redis failure", c.op)
					continue
				}
				msg := err.Error()
				if !strings.HasPrefix(msg, name+c.want) {
					t.Errorf("%s() = %q, want it to start %q", c.op, msg, name+c.want)
				}
				if n := strings.Count(msg, name); n != 1 {
					t.Errorf("%s() = %q names the technique %d times, want once", c.op, msg, n)
				}
				locktest.CheckError(t, target.Name, c.op+"()", err)
			}
		})
	}
}
