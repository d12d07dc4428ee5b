package line

import _ "embed"

var (
	//go:embed line.lua
	lineLua string // waitLine (the line, its notices, its fencing counter, the hand-off handOn) and takeFence
	//go:embed abandon.lua
	abandon string // a waiter that gave up leaves the line, passing on a lock handed to it
)

// Source returns the source of a script of lua_release or redlock: the
// line's Lua (line.lua, whose waitLine("handoff").handOn passes a
// released lock on to the head of the line) in front of body, which
// starts with the script's Lua consts (the protocol's constants STALE,
// LISTENED, RECENT and RETENTION, as handOn's callers pass them).
func Source(body string) string { return lineLua + body }

// AbandonSource returns the source of the abandon script (abandon.lua),
// which lua_release and redlock share: KEYS the lock's four keys
// (protocol.Keys), ARGV the waiter's line member, its name and the lock's
// notice channel. It takes a waiter that gave up out of the line and
// passes on a lock a release handed to it meanwhile (handOn); consts as
// for Source.
func AbandonSource(consts string) string { return Source(consts + abandon) }
