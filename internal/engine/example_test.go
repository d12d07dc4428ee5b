package engine_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/lockzoo/lockzoo/internal/engine"
	"github.com/lockzoo/lockzoo/strategy"
)

// memory is a toy Technique over a Go map, to show the shape of one; real
// techniques send Redis commands (redisconn.Do, redisconn.Eval, article.Watched).
type memory struct{ held map[string]string }

func (m *memory) Acquire(_ context.Context, a engine.Attempt) (engine.Acquired, error) {
	if _, ok := m.held[a.Key]; ok {
		return engine.Acquired{}, strategy.ErrNotAcquired
	}
	m.held[a.Key] = a.Token
	return engine.Acquired{Fence: uint64(len(m.held))}, nil
}

func (m *memory) Release(_ context.Context, h engine.Held) error {
	if m.held[h.Key] != h.Value {
		return strategy.ErrNotHeld
	}
	delete(m.held, h.Key)
	return nil
}

func (m *memory) Extend(context.Context, engine.Held, time.Duration) (engine.Acquired, error) {
	return engine.Acquired{}, strategy.ErrUnsupported
}

func ExampleNew() {
	l, err := engine.New(&memory{held: map[string]string{}}, strategy.Properties{Name: "memory"},
		strategy.Config{Token: func() string { return "t1" }})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	lease, _ := l.TryLock(ctx, "k")
	_, err = l.TryLock(ctx, "k")
	// The value written is Config.Token's followed by "." and a unique part.
	fmt.Println(lease.Key(), strings.HasPrefix(lease.Token(), "t1."), lease.Fence(), err != nil)
	fmt.Println(lease.Unlock(ctx))
	// Output:
	// k true 1 true
	// <nil>
}
