package peers

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/strategy"
)

// Addresser is a pool that knows the address of its server. The go-redis
// and rueidis adapters dial their own connections, so their targets need
// an address; a pool that is an Addresser gives it, any other is asked.
type Addresser interface {
	Addr() string
}

// AddrOf returns the host:port of the Redis server behind pool: pool's
// Addr() when it is an Addresser, else the server's own address for the
// connection, the laddr field of CLIENT INFO (Redis 6.2 or later). That is
// the address the server listens on as it sees it, which a client reaches
// directly on loopback and on a routed network, not through a NAT or a
// port mapping. A nil pool wraps ErrInvalidConfig; a failure to ask the
// server is returned wrapped.
func AddrOf(ctx context.Context, pool strategy.Pool) (string, error) {
	if pool == nil {
		return "", fmt.Errorf("lockzoo: peers: %w: pool is nil", strategy.ErrInvalidConfig)
	}
	if a, ok := pool.(Addresser); ok {
		return a.Addr(), nil
	}
	c, err := pool.GetContext(ctx)
	if err != nil {
		return "", fmt.Errorf("lockzoo: peers: address of the server: %w", err)
	}
	defer c.Close()
	info, err := redis.String(redis.DoContext(c, ctx, "CLIENT", "INFO"))
	if err != nil {
		return "", fmt.Errorf("lockzoo: peers: address of the server: CLIENT INFO: %w", err)
	}
	for _, field := range strings.Fields(info) {
		if addr, ok := strings.CutPrefix(field, "laddr="); ok && addr != "" {
			return addr, nil
		}
	}
	return "", fmt.Errorf("lockzoo: peers: address of the server: %w", errors.New("CLIENT INFO has no laddr field"))
}
