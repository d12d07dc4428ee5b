package protocol

import (
	_ "embed"

	"github.com/gomodule/redigo/redis"
)

var (
	//go:embed prelude.lua
	prelude string
)

// Script returns the script body, of keyCount keys, with the prelude (the
// functions lua_release's and redlock's scripts share) in front, ready to
// run with EVALSHA and a NOSCRIPT fallback.
func Script(keyCount int, body string) *redis.Script {
	return redis.NewScript(keyCount, Source(body))
}

// Source returns the source of the script body with the prelude in front,
// as Script runs it.
func Source(body string) string { return prelude + body }
