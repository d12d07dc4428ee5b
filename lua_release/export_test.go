package luarelease

import "github.com/gomodule/redigo/redis"

// Scripts returns the acquire and release scripts, for the benchmark that
// runs them bare.
func Scripts() (acquire, release *redis.Script) {
	return redis.NewScript(4, acquireSource), redis.NewScript(2, releaseSource)
}
