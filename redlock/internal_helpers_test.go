package redlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/strategy"
)

// startLocker starts n nodes and a Locker over them with cfg; it checks
// for leaked goroutines, waits for the Locker's background calls and closes
// it when the test ends. wait waits for them at any point, for up to 10 s.
func startLocker(t *testing.T, n int, cfg Config) (nodes []*redistest.Node, l *Locker, wait func()) {
	t.Helper()
	locktest.NoLeaks(t)
	nodes = redistest.Start(t, n)
	pools := make([]strategy.Pool, len(nodes))
	for i, node := range nodes {
		pools[i] = node.Pool()
	}
	l, err := New(pools, cfg)
	if err != nil {
		t.Fatalf("New() = %v, want nil", err)
	}
	wait = func() {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := l.Wait(ctx); err != nil {
			t.Fatalf("Wait() = %v, want nil", err)
		}
	}
	locktest.CloseOnCleanup(t, l)
	t.Cleanup(wait)
	return nodes, l, wait
}

// get returns key's value on node, "" when it is missing.
func get(t *testing.T, node *redistest.Node, key string) string {
	t.Helper()
	v, err := redis.String(node.Do("GET", key))
	if err != nil && !errors.Is(err, redis.ErrNil) {
		t.Fatalf("GET %s on %s = %v, want a reply", key, node.Addr(), err)
	}
	return v
}
