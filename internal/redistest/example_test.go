package redistest_test

import (
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/redistest"
)

// In a test, Start(t, n) gives n fresh nodes torn down when the test ends.
// Outside tests, a Detached plays the test's part.
func ExampleDetached() {
	d := redistest.NewDetached("example")
	err := d.Run(func() {
		nodes := redistest.Start(d, 1)
		reply, err := nodes[0].Do("PING")
		fmt.Println(reply, err)
	})
	if err != nil {
		fmt.Println("no Redis:", err)
	}
	// Output:
	// PONG <nil>
}

// A proxy in front of a node loses the reply of a command that still takes
// effect, the network fault behind a lock held by nobody.
func ExampleNewProxy() {
	d := redistest.NewDetached("example-proxy")
	err := d.Run(func() {
		node := redistest.Start(d, 1)[0]
		proxy := redistest.NewProxy(d, node.Addr())
		proxy.DropNextReplies(1)
		c := proxy.Pool().Get()
		defer c.Close()
		_, err := redis.DoWithTimeout(c, 100*time.Millisecond, "SET", "k", "v")
		v, _ := redis.String(node.Do("GET", "k"))
		fmt.Println(err != nil, v) // true v: the SET happened, its reply was lost
	})
	if err != nil {
		fmt.Println("no Redis:", err)
	}
	// Output:
	// true v
}

// A cluster's keys go to the master that serves their slot.
func ExampleStartCluster() {
	d := redistest.NewDetached("example-cluster")
	err := d.Run(func() {
		cluster := redistest.StartCluster(d)
		c := cluster.PoolFor("{user1}:lock").Get()
		defer c.Close()
		fmt.Println(c.Do("SET", "{user1}:lock", "v"))
	})
	if err != nil {
		fmt.Println("no Redis:", err)
	}
	// Output:
	// OK <nil>
}
