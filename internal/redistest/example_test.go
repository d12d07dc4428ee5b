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

// A cluster's keys go to the master that serves their slot, and move
// with it.
func ExampleStartCluster() {
	d := redistest.NewDetached("example-cluster")
	err := d.Run(func() {
		cluster := redistest.StartCluster(d)
		key := "{user1}:lock"
		c := cluster.PoolFor(key).Get()
		defer c.Close()
		fmt.Println(c.Do("SET", key, "v"))

		other := cluster.Masters()[0]
		if other == cluster.NodeFor(key) {
			other = cluster.Masters()[1]
		}
		cluster.MoveKeys(other, key) // the key's slot, keys and all
		fmt.Println(cluster.NodeFor(key) == other)
		fmt.Println(redis.String(other.Do("GET", key)))
	})
	if err != nil {
		fmt.Println("no Redis:", err)
	}
	// Output:
	// OK <nil>
	// true
	// v <nil>
}

// With replicas, a test can fail a master over, gracefully or by killing
// it, and read where the slots went. (Not run as part of the examples: the
// package's tests do this once, and a failover takes seconds.)
func ExampleWithClusterReplicas() {
	d := redistest.NewDetached("example-cluster-replicas")
	err := d.Run(func() {
		cluster := redistest.StartCluster(d, redistest.WithClusterReplicas())
		first := cluster.Masters()[0]
		promoted := cluster.Failover(first) // CLUSTER FAILOVER on its replica
		fmt.Println(promoted == cluster.Masters()[0], cluster.ReplicaOf(promoted) == first)

		killed := cluster.Masters()[1]
		promoted = cluster.KillMaster(killed) // elected after cluster-node-timeout
		for _, r := range cluster.SlotMap() {
			fmt.Println(r.First, r.Last, r.Master == cluster.NodeForSlot(r.First))
		}
		cluster.Rejoin(killed) // back as the replica of promoted
	})
	if err != nil {
		fmt.Println("no Redis:", err)
	}
}
