package strategytest

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/sentinel"
)

// sentinelTimeout bounds finding one master through the Sentinels.
const sentinelTimeout = 10 * time.Second

// sentinelPools gives the env n pools behind Sentinel: node i is the
// master opts.Masters[i] that the Sentinels at opts.Sentinels name, with a
// key prefix of the run's own, swept when the scenario ends.
func (e *env) sentinelPools(opts Options, n int) error {
	if len(opts.Masters) < n {
		return fmt.Errorf("lockzoo: strategytest: %s needs %d masters, got %d master names", e.target.Name, n, len(opts.Masters))
	}
	e.prefix = "lockzoo-suite:" + uuid.NewString()[:8] + ":"
	for _, master := range opts.Masters[:n] {
		ctx, cancel := context.WithTimeout(context.Background(), sentinelTimeout)
		pool, err := sentinel.New(ctx, master, opts.Sentinels)
		cancel()
		if err != nil {
			return err // names lockzoo, sentinel and the master
		}
		e.tb.Cleanup(func() { _ = pool.Close() })
		e.addrs = append(e.addrs, pool.Addr())
		e.pools = append(e.pools, e.traced(pool, nodeName(len(e.pools), n)))
		// Runs after the Lockers closed and before the pool goes.
		e.tb.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), sweepBound)
			defer cancel()
			if _, err := redistest.Sweep(ctx, pool, e.prefix); err != nil {
				e.tb.Errorf("remove the scenario's keys from master %s at %s: %v", master, pool.Addr(), err)
			}
		})
	}
	return nil
}
