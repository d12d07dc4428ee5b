package luarelease

import (
	"context"
	"fmt"

	"github.com/lockzoo/lockzoo/internal/line"
	"github.com/lockzoo/lockzoo/internal/protocol"
	"github.com/lockzoo/lockzoo/strategy"
)

var _ line.HandOffer = (*technique)(nil)

// Release deletes the lock h holds when it still holds h.Value, and
// passes it on to the head of the key's line in Redis (the line's release
// script, line.ReleaseSource: line.lua's release and handOn). It returns an error wrapping
// strategy.ErrNotHeld when the lock was missing or someone else's.
func (t *technique) Release(ctx context.Context, h line.Held) error {
	r, err := line.ReadRelease(t.release.Call(ctx, t.pipe, t.releaseArgs(h, 0)))
	switch {
	case err != nil:
		return err
	case !r.Held:
		return errNotHeld()
	}
	return nil
}

// HandOff releases the lock h holds and, in the same script (the line's
// release, given next's line member),
// serves next, the attempt of a waiter of the same Locker, when the
// waiter is the head of the line in Redis: the lock is set to the
// waiter's name with a new fencing token, as a release hands a lock to
// the head of the line, but without the notice: the line hands it over
// from the reply (line.Line.Release). The waiter holds the lock one round trip after Unlock
// began, with no notice and no attempt of its own; an attempt of its own
// that crosses the hand-off, or follows a lost reply, finds the lock in
// its name and takes it (acquire.lua), and a waiter that gives up passes
// such a lock on (Abandon), as any waiter in the line does.
//
// It returns what next got and the release's outcome. The lock went to
// another waiter of the line, or was deleted (nobody waits in the line,
// the waiter included, or its head must try first): next did not take
// it, the release's outcome is nil, and the line tells the waiter to
// try. The lock did not hold h.Value: an error wrapping
// strategy.ErrNotHeld, nothing was written. A Redis failure, or a bad
// fencing counter (the script wrote nothing), is the error: the lease
// stays unspent, and a later Unlock finds out which it was.
//
// With Config.Replicas, the script and, when it handed the lock over, the
// wait for the replicas run on one connection of the call's own
// (replicas.go): a hand-off counts only once acknowledged. One that was
// not is reported as if next was not the head: the lock is in the
// waiter's name in Redis, and the waiter's own attempt, told to try,
// waits for the replicas again or takes the lock back.
func (t *technique) HandOff(ctx context.Context, h line.Held, next line.Attempt) (line.Passed, error) {
	args := append(t.releaseArgs(h, 1), member(next))
	var reply any
	var err, ack error
	if t.wait.on() {
		reply, ack, err = t.handOffReplicated(ctx, args)
	} else {
		reply, err = t.release.Call(ctx, t.pipe, args)
	}
	r, err := line.ReadRelease(reply, err)
	switch {
	case err != nil:
		return line.Passed{}, fmt.Errorf("hand off: %w", err)
	case !r.Held:
		return line.Passed{}, errNotHeld()
	case r.Handed > 0 && ack != nil:
		return line.Passed{}, nil // released and handed, not acknowledged: next tries
	case r.Handed > 0:
		// In the waiter's name, as a release in Redis hands it.
		return line.Passed{Taken: true, Value: next.Waiter, Fence: r.Handed}, nil
	}
	return line.Passed{}, nil // the waiter is not the head of the line
}

// releaseArgs is the release script's argument list for the lock h, with
// room for extra arguments after the owner's token: its keys, as kept at
// acquire (a lock handed off or taken back kept none: derived from its
// key), then the token.
func (t *technique) releaseArgs(h line.Held, extra int) []any {
	k := h.Keys
	if len(k) != 4 {
		k = protocol.KeysOf(h.Key).All()
	}
	args := append(t.release.Args(5+extra), k...)
	return append(args, h.Value)
}

// errNotHeld is the release's "not ours".
func errNotHeld() error {
	return fmt.Errorf("%w: the key is missing or holds another owner's token", strategy.ErrNotHeld)
}
