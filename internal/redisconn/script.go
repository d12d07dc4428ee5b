package redisconn

import (
	"context"
	"strings"

	"github.com/gomodule/redigo/redis"
)

// Script is a Lua script for a hot path: its EVALSHA
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
	if IsNoScript(err) {
		reply, err = Eval(ctx, p.pool, s.s, args[2:]...)
	}
	return reply, withCtxErr(ctx, err)
}

// Redis returns the redis.Script s runs.
func (s *Script) Redis() *redis.Script { return s.s }

// IsNoScript reports whether err is the server's NOSCRIPT reply: EVALSHA
// named a script it does not have cached, and EVAL must send the source.
func IsNoScript(err error) bool {
	e, ok := err.(redis.Error)
	return ok && strings.HasPrefix(string(e), "NOSCRIPT ")
}
