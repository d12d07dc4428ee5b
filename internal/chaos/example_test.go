package chaos_test

import (
	"context"
	"fmt"
	"time"

	"github.com/lockzoo/lockzoo/internal/chaos"
	"github.com/lockzoo/lockzoo/internal/redistest"
	luarelease "github.com/lockzoo/lockzoo/lua_release"
	"github.com/lockzoo/lockzoo/strategy"
)

// A run puts a proxy in front of the lock node, counts on a second, healthy
// node, and reports what it saw; the seed replays the fault schedule.
func ExampleRun() {
	d := redistest.NewDetached("chaos-example")
	_ = d.Run(func() {
		nodes := redistest.Start(d, 2)
		proxy := redistest.NewProxy(d, nodes[0].Addr())
		rep, err := chaos.Run(context.Background(), chaos.Config{
			Seed:     28,
			Duration: 2 * time.Second,
			Nodes:    []string{proxy.Addr()},
			Proxies:  []*redistest.Proxy{proxy},
			New: func(pools []strategy.Pool, cfg strategy.Config) (strategy.Locker, error) {
				return luarelease.New(pools[0], cfg)
			},
			Counter: nodes[1].Pool(),
		})
		fmt.Println(rep, err)
		fmt.Println("violations:", rep.Violations(), "stuck:", rep.Stuck())
	})
}
