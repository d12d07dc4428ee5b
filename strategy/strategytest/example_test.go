package strategytest_test

import (
	"context"
	"fmt"
	"log"

	luarelease "github.com/lockzoo/lockzoo/lua_release"
	"github.com/lockzoo/lockzoo/strategy"
	"github.com/lockzoo/lockzoo/strategy/strategytest"
)

// Evaluate runs the suite against Redis servers you already run; scenarios
// that must kill or freeze nodes report "not applicable" there. In a test,
// strategytest.Run(t, target) runs the same scenarios on nodes it starts.
func ExampleEvaluate() {
	target := strategytest.Target{
		Nodes: 1,
		New: func(pools []strategy.Pool, cfg strategy.Config) (strategy.Locker, error) {
			return luarelease.New(pools[0], cfg)
		},
	}
	results, err := strategytest.Evaluate(context.Background(), target, strategytest.Options{
		Addrs: []string{"127.0.0.1:6379"},
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range results {
		fmt.Println(r) // e.g. "lua_release/owner-safe-release: OwnerSafeRelease claimed, holds (0/1): ..."
	}
}
