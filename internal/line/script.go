package line

import (
	_ "embed"

	"github.com/lockzoo/lockzoo/internal/protocol"
)

var (
	//go:embed handoff.lua
	handOn string // handOn, which passes a released lock on to the line's head
	//go:embed abandon.lua
	abandon string // a waiter that gave up leaves the line, passing on a lock handed to it
)

// HandOnSource returns the source of the script body with the prelude
// (protocol.Source), the Lua consts (the protocol's constants STALE,
// LISTENED, RECENT and RETENTION, which handOn reads) and handOn
// (handoff.lua: a release passes the lock on to the head of the line) in
// front: lua_release's and redlock's release scripts start so.
func HandOnSource(consts, body string) string { return protocol.Source(consts + handOn + body) }

// AbandonSource returns the source of the abandon script (abandon.lua),
// which lua_release and redlock share: KEYS the lock's four keys
// (protocol.Keys), ARGV the waiter's line member, its name and the lock's
// notice channel. It takes a waiter that gave up out of the line and
// passes on a lock a release handed to it meanwhile (handOn); consts as
// for HandOnSource.
func AbandonSource(consts string) string { return HandOnSource(consts, abandon) }
