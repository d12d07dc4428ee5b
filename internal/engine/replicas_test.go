package engine_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/internal/engine"
	"github.com/lockzoo/lockzoo/strategy"
)

// TestReplicasRefusedWithoutWithReplicas: a technique that does not wait
// for replicas refuses Config.Replicas and WaitAOF, naming them, rather
// than grant leases no replica acknowledged; with WithReplicas it takes
// them.
func TestReplicasRefusedWithoutWithReplicas(t *testing.T) {
	tech := &scripted{acquire: func(int) (engine.Acquired, error) { return engine.Acquired{}, nil }}
	tests := []struct {
		name string
		cfg  strategy.Config
	}{
		{"replicas", strategy.Config{Replicas: 1}},
		{"waitaof", strategy.Config{WaitAOF: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := engine.New(tech, strategy.Properties{Name: "article"}, tc.cfg)
			require.ErrorIs(t, err, strategy.ErrInvalidConfig)
			assert.Contains(t, err.Error(), "article does not wait for replicas")
			l, err := engine.New(tech, strategy.Properties{Name: "waits"}, tc.cfg, engine.WithReplicas())
			require.NoError(t, err, "New with WithReplicas")
			assert.Equal(t, strategy.DefaultReplicaTimeout, l.Config().ReplicaTimeout, "the default ReplicaTimeout")
			require.NoError(t, l.Close())
		})
	}
}

// TestLockEndsOnNotReplicated: Lock returns at the first attempt whose
// lock the replicas did not acknowledge, with an error wrapping
// ErrNotReplicated and ErrNotAcquired, without waiting for its ctx.
func TestLockEndsOnNotReplicated(t *testing.T) {
	tech := &scripted{acquire: func(int) (engine.Acquired, error) {
		return engine.Acquired{}, fmt.Errorf("%w: 0 of 1 replicas acknowledged", strategy.ErrNotReplicated)
	}}
	l, err := engine.New(tech, strategy.Properties{Name: "waits"}, strategy.Config{Replicas: 1}, engine.WithReplicas())
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = l.Lock(ctx, "k")
	require.ErrorIs(t, err, strategy.ErrNotReplicated)
	assert.ErrorIs(t, err, strategy.ErrNotAcquired)
	assert.False(t, errors.Is(err, context.DeadlineExceeded), "Lock waited for its ctx: %v", err)
	assert.EqualValues(t, 1, tech.attempts.Load(), "attempts: got %d, want 1", tech.attempts.Load())
}
