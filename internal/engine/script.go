package engine

import (
	"context"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"
)

// Script is a Lua script for a technique's hot path: its EVALSHA
// arguments are built in one slice (Args) whose head, the script's hash
// and key count, is boxed once, so a call allocates one slice where
// Eval's variadic arguments allocate two (redis.Script.Do copies them
// behind the hash).
type Script struct {
	s      *redis.Script
	source string
	head   [2]any // the hash and the key count
}

// NewScript returns the Script running src, which takes keyCount keys.
func NewScript(keyCount int, src string) *Script {
	s := redis.NewScript(keyCount, src)
	return &Script{s: s, source: src, head: [2]any{s.Hash(), keyCount}}
}

// Source returns s's Lua source, which EVAL takes in place of the hash.
func (s *Script) Source() string { return s.source }

// Args returns an empty argument list for one call of s with room for n
// keys and arguments: append them in order, then pass it to Call.
func (s *Script) Args(n int) []any {
	args := make([]any, 2, 2+n)
	copy(args, s.head[:])
	return args
}

// Call runs s with args (built by Args) through p with EVALSHA, over the
// connection it shares with other callers (Pipeline), and with EVAL on a
// connection of its own when the server does not have the script cached
// (NOSCRIPT), bounded by ctx as Pipeline.Do bounds a command. When ctx
// ended before the reply the error wraps ctx.Err() (see WithConn).
func (s *Script) Call(ctx context.Context, p *Pipeline, args []any) (any, error) {
	reply, err := p.Do(ctx, "EVALSHA", args)
	if e, ok := err.(redis.Error); ok && strings.HasPrefix(string(e), "NOSCRIPT ") {
		reply, err = Eval(ctx, p.pool, s.s, args[2:]...)
	}
	return reply, withCtxErr(ctx, err)
}

// Redis returns the redis.Script s runs.
func (s *Script) Redis() *redis.Script { return s.s }

// LockerArgs is what every attempt of one Locker passes to its scripts,
// its TTL in ms and its name, boxed once (Set), so that the fast path
// does not box them anew on every call. The zero value boxes every time.
type LockerArgs struct {
	ttl    time.Duration
	ttlMs  any // ttl in ms
	locker string
	id     any // locker
}

// Set records the Locker's TTL and name, boxed. Call it before the
// Locker's first attempt: the args are read without a lock.
func (b *LockerArgs) Set(ttl time.Duration, locker string) {
	b.ttl, b.ttlMs, b.locker, b.id = ttl, ttl.Milliseconds(), locker, locker
}

// Locker returns the Locker name locker as an argument: the boxed one
// when it is the name Set recorded.
func (b *LockerArgs) Locker(locker string) any {
	if locker == b.locker && b.id != nil {
		return b.id
	}
	return locker
}

// TTL returns ttl in ms as an argument: the boxed one when it is the TTL
// Set recorded.
func (b *LockerArgs) TTL(ttl time.Duration) any {
	if ttl == b.ttl && b.ttlMs != nil {
		return b.ttlMs
	}
	return ttl.Milliseconds()
}
