package redistest_test

import (
	"fmt"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/redistest"
)

// A primary with two replicas: WAIT counts the replicas that acknowledged
// the writes before it.
func ExampleStartReplicated() {
	d := redistest.NewDetached("example-replicated")
	err := d.Run(func() {
		primary, replicas := redistest.StartReplicated(d, 2)
		c := primary.Pool().Get()
		defer c.Close()
		if _, err := c.Do("SET", "k", "v"); err != nil {
			fmt.Println(err)
			return
		}
		acked, err := redis.Int(c.Do("WAIT", len(replicas), 5000))
		fmt.Println(acked, err)
	})
	if err != nil {
		fmt.Println("no Redis:", err)
	}
	// Output:
	// 2 <nil>
}

// Three Sentinels watch a primary and two replicas; SENTINEL FAILOVER
// promotes a replica, and the Sentinels name it.
func ExampleStartSentinel() {
	d := redistest.NewDetached("example-sentinel")
	err := d.Run(func() {
		s := redistest.StartSentinel(d, redistest.SentinelConfig{})
		old, promoted := s.Failover()
		fmt.Println(old == s.Nodes()[0], promoted != old, s.Master() == promoted)
	})
	if err != nil {
		fmt.Println("no Redis:", err)
	}
	// Output:
	// true true true
}
