package redistest

import (
	"time"

	"github.com/gomodule/redigo/redis"
)

// WaitSubscribed waits until every one of nodes reports a subscriber on a
// channel that matches pattern (PUBSUB CHANNELS, glob-style), so that a
// message published there now reaches the subscriber. A node that does not
// answer (it is restarting, say) is asked again; after 5 s the test fails,
// naming the pattern, the node and its last answer.
func WaitSubscribed(t TB, pattern string, nodes ...*Node) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for _, n := range nodes {
		for {
			channels, err := redis.Strings(n.Do("PUBSUB", "CHANNELS", pattern))
			if err == nil && len(channels) > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("redistest: no subscriber on %s at %s within 5s (PUBSUB CHANNELS = %q, %v)", pattern, n.Addr(), channels, err)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}
