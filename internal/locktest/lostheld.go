package locktest

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/strategy"
)

// LostReplyHeldUntilStored shows, for a technique that stores its expiry
// time in the key and cannot take back an attempt (getset_timestamp and
// method 2), what a lost acquire reply does instead: the key keeps the
// lost attempt's time, held by nobody, until that time passes by a
// client's clock. The Lockers run on fixed clocks, so what is held and what
// has passed does not depend on how fast the machine is.
//
//   - "lost acquire reply": TryLock whose reply is lost fails; another
//     client is refused until its clock passes the stored time.
//   - "reply blip": Lock whose first reply is lost keeps being refused by its
//     own lost attempt until its ctx ends (the conformance suite's Lock
//     gets the lock once the network heals, the attempt taken back).
//
// The conformance suite's lost-acquire-reply and reply-blip checks skip
// these techniques and name this check's callers.
func LostReplyHeldUntilStored(t *testing.T, f Factory) {
	const ttl = 10 * time.Second
	now := time.UnixMilli(1_700_000_000_000)
	stored := strconv.FormatInt(now.Add(ttl).UnixMilli(), 10)
	at := func(tm time.Time) strategy.Config {
		return strategy.Config{TTL: ttl, Clock: func() time.Time { return tm }}
	}
	// passed is a clock past the lost attempt's time, by a second.
	passed := now.Add(ttl + time.Second)

	tests := []struct {
		name string
		// call makes l's call whose first reply is lost and checks its error.
		call func(t *testing.T, l strategy.Locker)
	}{
		{"lost acquire reply", func(t *testing.T, l strategy.Locker) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			lease, err := l.TryLock(ctx, "k")
			if lease != nil {
				_ = lease.Unlock(context.Background())
			}
			assert.Error(t, err, "TryLock() whose reply was dropped")
		}},
		{"reply blip", func(t *testing.T, l strategy.Locker) {
			// Each attempt is bounded (engine.AttemptTimeout, 250 ms at
			// this TTL), so the Lock makes further attempts after the lost
			// one; all are refused, by the lost attempt's time.
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			lease, err := l.Lock(ctx, "k")
			if lease != nil {
				_ = lease.Unlock(context.Background())
			}
			assert.ErrorIs(t, err, strategy.ErrNotAcquired, "Lock() whose first reply was dropped, refused by its own lost attempt")
			assert.ErrorIs(t, err, context.DeadlineExceeded, "Lock() whose first reply was dropped")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NoLeaks(t)
			node := redistest.Start(t, 1)[0]
			proxy := redistest.NewProxy(t, node.Addr())
			l := MustNew(t, f, proxy.Pool(), at(now))
			other := MustNew(t, f, node.Pool(), at(now))
			later := MustNew(t, f, node.Pool(), at(passed))
			warm(t, l)

			proxy.DropNextReplies(1)
			tt.call(t, l)
			assert.Equal(t, stored, Get(t, node, "lock:k"), "GET lock:k after the lost reply: the lost attempt's time")

			lease, err := other.TryLock(context.Background(), "k")
			if lease != nil {
				_ = lease.Unlock(context.Background())
			}
			assert.ErrorIs(t, err, strategy.ErrNotAcquired, "another client's TryLock() before the stored time: held by nobody")

			lease, err = later.TryLock(context.Background(), "k")
			require.NoError(t, err, "TryLock() by a client whose clock passed the stored time")
			assert.Equal(t, strconv.FormatInt(passed.Add(ttl).UnixMilli(), 10), Get(t, node, "lock:k"), "GET lock:k after the take-over")
			assert.NoError(t, lease.Unlock(context.Background()), "Unlock() after the take-over")
		})
	}
}
