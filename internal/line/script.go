package line

import (
	_ "embed"
	"fmt"
)

var (
	//go:embed line.lua
	lineLua string // waitLine (the line, its notices, its fencing counter, the hand-off handOn), takeFence and release
	//go:embed abandon.lua
	abandon string // a waiter that gave up leaves the line, passing on a lock handed to it
	//go:embed release.lua
	releaseLua string // the owner-checked release that passes the lock on: line.lua's release
)

// Source returns the source of a script of lua_release or redlock: the
// line's Lua (line.lua) in front of body, which starts with the script's
// Lua consts (the protocol's constants STALE, LISTENED, RECENT and
// RETENTION, as handOn's callers pass them).
func Source(body string) string { return lineLua + body }

// AbandonSource returns the source of the abandon script (abandon.lua),
// which lua_release and redlock share: KEYS the lock's four keys
// (protocol.Keys), ARGV the waiter's line member, its name and the lock's
// notice channel. It takes a waiter that gave up out of the line and
// passes on a lock a release handed to it meanwhile (handOn); consts as
// for Source.
func AbandonSource(consts string) string { return Source(consts + abandon) }

// ReleaseSource returns the source of the release script of a technique
// that keeps a line of waiters in Redis (release.lua, line.lua's release):
// KEYS the lock's four keys (protocol.Keys), ARGV the owner's token and,
// for a HandOff, the line member of the waiter to hand the lock to;
// consts as for Source. Its reply is read by ReadRelease.
func ReleaseSource(consts string) string { return Source(consts + releaseLua) }

// Released is the release script's reply, as ReadRelease reads it.
type Released struct {
	Held   bool   // the lock held the token: it was released
	Handed uint64 // > 0: handed to the waiter the caller named, with this fencing token
}

// ReadRelease reads the release script's reply (or returns the call's
// error as it is): 0 when the lock was missing or someone else's, 1 when
// it was released (deleted, or passed on to the line's head), {fence}
// when it was handed to the waiter the caller named. Any other reply is
// an error that shows it.
func ReadRelease(reply any, err error) (Released, error) {
	if err != nil {
		return Released{}, err
	}
	switch r := reply.(type) {
	case int64:
		if r == 0 || r == 1 {
			return Released{Held: r == 1}, nil
		}
	case []any:
		if len(r) != 1 {
			break
		}
		if f, ok := r[0].(int64); ok && f > 0 {
			return Released{Held: true, Handed: uint64(f)}, nil
		}
	}
	return Released{}, fmt.Errorf("unexpected reply %v", reply)
}
