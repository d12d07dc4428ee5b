package luarelease

import (
	"context"
	"fmt"

	"github.com/lockzoo/lockzoo/internal/engine"
	"github.com/lockzoo/lockzoo/strategy"
)

var _ engine.HandOffer = (*technique)(nil)

// HandOff releases the lock h holds and, in the same script (release.lua),
// serves next, the attempt of a waiter of the same Locker, when the
// waiter is the head of the line in Redis: the lock is set to the
// waiter's name with a new fencing token, as a release hands a lock to
// the head of the line, but without the notice: the engine hands it over
// from the reply. The waiter holds the lock one round trip after Unlock
// began, with no notice and no attempt of its own; an attempt of its own
// that crosses the hand-off, or follows a lost reply, finds the lock in
// its name and takes it (acquire.lua), and a waiter that gives up passes
// such a lock on (Abandon), as any waiter in the line does.
//
// It returns next's result and the release's outcome. The lock went to
// another waiter of the line, or was deleted (nobody waits in the line,
// the waiter included, or its head must try first): next's error wraps
// strategy.ErrNotAcquired, the release's is nil, and the engine tells the
// waiter to try. The lock did not hold h.Value:
// both wrap strategy.ErrNotHeld, nothing was written. A Redis failure, or
// a bad fencing counter (the script wrote nothing), is both errors: the
// engine then keeps the lease unspent, and a later Unlock finds out which
// it was.
//
// With Config.Replicas, the script and, when it handed the lock over, the
// wait for the replicas run on one connection of the call's own
// (replicas.go): a hand-off counts only once acknowledged. One that was
// not is next's error (wrapping strategy.ErrNotReplicated), with the
// release's outcome nil: the lock is in the waiter's name in Redis, and
// the waiter's own attempt, told to try, confirms it or takes it back.
func (t *technique) HandOff(ctx context.Context, h engine.Held, next engine.Attempt) (engine.Acquired, error, error) {
	args := append(t.releaseArgs(h, 1), member(next))
	var reply any
	var err, ack error
	if t.wait.on() {
		reply, ack, err = t.handOffReplicated(ctx, args)
	} else {
		reply, err = t.release.Call(ctx, t.pipe, args)
	}
	if err != nil {
		err = fmt.Errorf("hand off: %w", err)
		return engine.Acquired{}, err, err
	}
	switch r := reply.(type) {
	case int64:
		switch r {
		case 0:
			err := fmt.Errorf("%w: the key is missing or holds another owner's token", strategy.ErrNotHeld)
			return engine.Acquired{}, err, err
		case 1:
			return engine.Acquired{}, fmt.Errorf("%w: the waiter is not the head of the line", strategy.ErrNotAcquired), nil
		}
	case []any:
		if len(r) != 1 {
			break
		}
		if f, ok := r[0].(int64); ok && f > 0 {
			if ack != nil {
				// Released, and handed to the waiter in Redis, but not
				// acknowledged: the engine tells the waiter to try, and
				// its attempt, finding the lock in its name, waits for
				// the replicas again or takes the lock back.
				return engine.Acquired{}, fmt.Errorf("hand off: %w", ack), nil
			}
			// In the waiter's name, as a release in Redis hands it.
			return engine.Acquired{Value: next.Waiter, Fence: uint64(f), Keys: args[2:6:6]}, nil, nil
		}
	}
	err = fmt.Errorf("hand off: unexpected reply %v", reply)
	return engine.Acquired{}, err, err
}
