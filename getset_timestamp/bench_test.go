package getsettimestamp_test

import (
	"testing"
	"time"

	getsettimestamp "github.com/lockzoo/lockzoo/getset_timestamp"
	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/strategy"
)

// BenchmarkLockUnlock measures getset_timestamp's uncontended Lock+Unlock:
// one SETNX and one DEL.
func BenchmarkLockUnlock(b *testing.B) {
	node := redistest.Start(b, 1)[0]
	l, err := getsettimestamp.New(node.Pool(), strategy.Config{TTL: 10 * time.Second})
	if err != nil {
		b.Fatalf("New() = %v, want nil", err)
	}
	locktest.BenchLockUnlock(b, l)
}
