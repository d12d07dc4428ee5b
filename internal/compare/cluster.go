package compare

import (
	"context"
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/cluster"
)

// clusterOpen bounds reading a cluster's slot map for -cluster.
const clusterOpen = 10 * time.Second

// openCluster returns a cluster.Pool on seeds (-cluster).
func openCluster(ctx context.Context, seeds []string) (*cluster.Pool, error) {
	ctx, cancel := context.WithTimeout(ctx, clusterOpen)
	defer cancel()
	return cluster.New(ctx, seeds)
}

// clusterMicros sums, in µs, the CPU time of the main threads of p's
// masters (INFO cpu on each): a lock's cost on a cluster is its master's,
// and the masters share what the run spreads over them.
func clusterMicros(ctx context.Context, p *cluster.Pool) (int64, error) {
	var usec int64
	for _, addr := range p.Masters() {
		c, err := redis.DialContext(ctx, "tcp", addr, redis.DialConnectTimeout(time.Second))
		if err != nil {
			return 0, fmt.Errorf("INFO cpu on %s: %w", addr, err)
		}
		info, err := redis.String(redis.DoContext(c, ctx, "INFO", "cpu"))
		c.Close()
		if err != nil {
			return 0, fmt.Errorf("INFO cpu on %s: %w", addr, err)
		}
		n, err := mainThreadMicros(info)
		if err != nil {
			return 0, err
		}
		usec += n
	}
	return usec, nil
}
