package locktest_test

import (
	"testing"

	"github.com/lockzoo/lockzoo/internal/locktest"
	luarelease "github.com/lockzoo/lockzoo/lua_release"
	"github.com/lockzoo/lockzoo/strategy"
)

// A technique's test runs the whole conformance kit with one call.
func ExampleConformance() {
	_ = func(t *testing.T) {
		locktest.Conformance(t, func(pool strategy.Pool, cfg strategy.Config) (strategy.Locker, error) {
			return luarelease.New(pool, cfg)
		})
	}
}
