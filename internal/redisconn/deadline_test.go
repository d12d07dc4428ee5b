package redisconn_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/internal/redisconn"
)

// TestBoundedKeepsTheContextContract: a Bounded's Done closes at its
// deadline, when its parent ends, or on Cancel, and its Err then says
// which, as context.WithDeadline's do; its Deadline is the earlier of its
// own and its parent's.
func TestBoundedKeepsTheContextContract(t *testing.T) {
	const bound = 50 * time.Millisecond
	tests := []struct {
		name    string
		end     func(b *redisconn.Bounded, cancelParent context.CancelFunc)
		wantErr error
	}{
		{"deadline", func(*redisconn.Bounded, context.CancelFunc) {}, context.DeadlineExceeded},
		{"parent cancelled", func(_ *redisconn.Bounded, cancel context.CancelFunc) { cancel() }, context.Canceled},
		{"Cancel", func(b *redisconn.Bounded, _ context.CancelFunc) { b.Cancel() }, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent, cancel := context.WithCancel(context.Background())
			defer cancel()
			deadline := time.Now().Add(bound)
			b := redisconn.WithDeadline(parent, deadline)
			defer b.Cancel()
			got, ok := b.Deadline()
			require.True(t, ok, "Deadline() has no deadline, want %v", deadline)
			assert.Equal(t, deadline, got, "Deadline()")
			done := b.Done()
			require.NotNil(t, done, "Done() = nil, want a channel that closes at the deadline")
			require.NoError(t, b.Err(), "Err() before the end")
			tt.end(b, cancel)
			select {
			case <-done:
			case <-time.After(100 * bound): // slack for a slow machine
				t.Fatalf("Done() did not close within %v of a %v bound", 100*bound, bound)
			}
			assert.ErrorIs(t, b.Err(), tt.wantErr, "Err() after Done closed")
		})
	}
}

// TestBoundedWithoutDone: a Bounded that nobody asked for Done reports
// its end through Err alone, and takes the earlier of its parent's
// deadline and its own; a Done asked for after Cancel is closed.
func TestBoundedWithoutDone(t *testing.T) {
	b := redisconn.WithDeadline(context.Background(), time.Now().Add(-time.Millisecond))
	assert.ErrorIs(t, b.Err(), context.DeadlineExceeded, "Err() past the deadline")

	parent, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	want, _ := parent.Deadline()
	b = redisconn.WithDeadline(parent, want.Add(time.Hour))
	got, _ := b.Deadline()
	assert.Equal(t, want, got, "Deadline() under an earlier parent's")
	assert.NoError(t, b.Err(), "Err() before the end")
	b.Cancel()
	assert.ErrorIs(t, b.Err(), context.Canceled, "Err() after Cancel")
	select {
	case <-b.Done():
	default:
		t.Error("Done() asked for after Cancel is open, want closed")
	}
	assert.ErrorIs(t, b.Err(), context.Canceled, "Err() after Cancel, with Done")
}
