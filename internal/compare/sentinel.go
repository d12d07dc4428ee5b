package compare

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/sentinel"
	"github.com/lockzoo/lockzoo/strategy"
)

// backendSentinel is Report.Backend of a run through Sentinel.
const backendSentinel = "sentinel"

// checkSentinelFlags reports -sentinel without -master or the other way
// round, and -sentinel with -addrs.
func checkSentinelFlags(cfg config) error {
	switch {
	case len(cfg.sentinels) > 0 && len(cfg.masters) == 0:
		return errors.New("-sentinel needs -master: the name(s) of the masters the Sentinels monitor")
	case len(cfg.masters) > 0 && len(cfg.sentinels) == 0:
		return errors.New("-master needs -sentinel: the Sentinels' addresses")
	case len(cfg.sentinels) > 0 && len(cfg.addrs) > 0:
		return errors.New("-sentinel and -addrs both name the servers: give one")
	}
	return nil
}

// sentinelNodes gives n pools through Sentinel: node i is the master
// cfg.masters[i], closed when d's Run returns, with a prefix of the run's
// own that keeps its keys apart from other data there.
func sentinelNodes(d *redistest.Detached, cfg config, n int) nodes {
	if len(cfg.masters) < n {
		d.Fatalf("needs %d masters, -master gave %d", n, len(cfg.masters))
	}
	ns := nodes{backend: backendSentinel, prefix: "lockzoo-compare:" + uuid.NewString()[:8] + ":"}
	for _, master := range cfg.masters[:n] {
		ctx, cancel := context.WithTimeout(context.Background(), waitBound)
		pool, err := sentinel.New(ctx, master, cfg.sentinels, sentinel.WithMaxIdle(2*cfg.workers))
		cancel()
		if err != nil {
			d.Fatalf("%v", err)
		}
		d.Cleanup(func() { _ = pool.Close() })
		// Runs before the pool's Close, after the Lockers were settled.
		d.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), waitBound)
			defer cancel()
			if _, err := redistest.Sweep(ctx, pool, ns.prefix); err != nil {
				d.Errorf("remove the run's keys from master %s at %s: %v", master, pool.Addr(), err)
			}
		})
		ns.pools = append(ns.pools, strategy.Pool(pool))
	}
	return ns
}

// sentinelText describes a run through Sentinel for the reports.
func sentinelText(st Settings) string {
	return fmt.Sprintf("masters %v through the Sentinels at %v", st.Masters, st.Sentinels)
}
