package peers

import (
	"context"
	"fmt"
	"time"

	"github.com/lockzoo/lockzoo/strategy"
	"github.com/lockzoo/lockzoo/strategy/strategytest"
)

// The peers' names, as rows and as Properties().Name.
const (
	RedsyncName        = "redsync"         // redsync on one node
	RedsyncRedlockName = "redsync_redlock" // redsync on RedlockNodes nodes
	RedislockName      = "bsm_redislock"
	RueidislockName    = "rueidislock"
)

// RedlockNodes is how many independent masters the redsync_redlock row
// spans, as many as lockzoo's redlock (internal/techniques.RedlockNodes).
const RedlockNodes = 5

// addrBound caps asking a pool for its server's address.
const addrBound = 5 * time.Second

// Targets returns every peer as a strategytest.Target: the one-node rows,
// then redsync on RedlockNodes nodes.
func Targets() []strategytest.Target {
	return []strategytest.Target{
		{Name: RedsyncName, Nodes: 1, New: func(pools []strategy.Pool, cfg strategy.Config) (strategy.Locker, error) {
			return NewRedsync(pools, cfg)
		}},
		{Name: RedislockName, Nodes: 1, New: func(pools []strategy.Pool, cfg strategy.Config) (strategy.Locker, error) {
			addr, err := addrOf(pools)
			if err != nil {
				return nil, err
			}
			return NewRedislock(addr, cfg)
		}},
		{Name: RueidislockName, Nodes: 1, New: func(pools []strategy.Pool, cfg strategy.Config) (strategy.Locker, error) {
			addr, err := addrOf(pools)
			if err != nil {
				return nil, err
			}
			return NewRueidislock(addr, cfg)
		}},
		{Name: RedsyncRedlockName, Nodes: RedlockNodes, New: func(pools []strategy.Pool, cfg strategy.Config) (strategy.Locker, error) {
			return NewRedsync(pools, cfg)
		}},
	}
}

// addrOf is AddrOf of the only pool of a one-node target.
func addrOf(pools []strategy.Pool) (string, error) {
	if len(pools) != 1 {
		return "", fmt.Errorf("lockzoo: peers: %w: want 1 pool, got %d", strategy.ErrInvalidConfig, len(pools))
	}
	ctx, cancel := context.WithTimeout(context.Background(), addrBound)
	defer cancel()
	return AddrOf(ctx, pools[0])
}
