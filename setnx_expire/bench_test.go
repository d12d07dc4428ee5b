package setnxexpire_test

import (
	"testing"
	"time"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/redistest"
	setnxexpire "github.com/lockzoo/lockzoo/setnx_expire"
	"github.com/lockzoo/lockzoo/strategy"
)

// BenchmarkLockUnlock measures setnx_expire's uncontended Lock+Unlock: two
// round trips to acquire, three to release.
func BenchmarkLockUnlock(b *testing.B) {
	node := redistest.Start(b, 1)[0]
	l, err := setnxexpire.New(node.Pool(), strategy.Config{TTL: 10 * time.Second})
	if err != nil {
		b.Fatalf("New() = %v, want nil", err)
	}
	locktest.BenchLockUnlock(b, l)
}
