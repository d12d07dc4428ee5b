package chaos

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/strategy"
)

// Defaults of Config, issue 28's set-up.
const (
	DefaultDuration = 10 * time.Second
	DefaultTTL      = 10 * time.Second
	DefaultLockers  = 4
	DefaultWorkers  = 2 // per Locker
	// DefaultLockTimeout bounds one Lock call of a worker: long enough to
	// wait out a few 400 ms phases, short against the TTL.
	DefaultLockTimeout = 3 * time.Second
)

// DefaultKeys are the keys the workers contend for.
func DefaultKeys() []string { return []string{"a", "b", "c"} }

// Config shapes a run.
type Config struct {
	// Seed draws the fault schedules and the workers' choices of key.
	Seed int64
	// Duration is how long the faults run; zero means DefaultDuration.
	Duration time.Duration
	// Faults are the kinds the schedules draw from; nil means AllFaults.
	Faults []Fault
	// TTL is the Lockers' lock lifetime; zero means DefaultTTL.
	TTL time.Duration
	// Lockers and Workers (per Locker) size the crowd; zero means
	// DefaultLockers and DefaultWorkers.
	Lockers, Workers int
	// Keys are the lock names; nil means DefaultKeys.
	Keys []string
	// LockTimeout bounds each Lock call; zero means DefaultLockTimeout.
	LockTimeout time.Duration
	// LockableWait bounds the Lock of each key after healing; zero means
	// TTL + LockTimeout, time for a lock orphaned by a lost reply to
	// expire and be taken.
	LockableWait time.Duration

	// Nodes are the addresses every Locker dials, one pool each, in the
	// order New takes its pools: a faulty node's proxy address
	// (Proxy.Addr) or a healthy node's own.
	Nodes []string
	// Proxies are the faulty nodes' proxies; each follows its own
	// schedule, drawn from Seed and its index.
	Proxies []*redistest.Proxy
	// New builds one Locker over pools (len(pools) == len(Nodes)) with
	// cfg, whose TTL and Prefix Run sets. A Locker with a Close method is
	// closed before Run returns.
	New func(pools []strategy.Pool, cfg strategy.Config) (strategy.Locker, error)
	// Prefix is the Lockers' key prefix; empty means the default.
	Prefix string
	// Counter is a healthy node, no proxy in front, on which the
	// sections count; its keys are CounterKey(Prefix, key).
	Counter strategy.Pool
	// NoFences says the Lockers' leases carry no fences (a technique that
	// does not claim Fencing): fences are then not checked, so that no
	// "fence 0 after fence 0" is counted or described as a violation.
	NoFences bool

	// Wrap, when set, wraps each pool Run builds (for node i of Nodes),
	// to trace the commands, say.
	Wrap func(pool strategy.Pool, node int) strategy.Pool
	// Client, when set, names the client who in ctx ("locker 1/worker 2").
	Client func(ctx context.Context, who string) context.Context
}

// CounterKey returns the counter key of lock name key on the counter node.
func CounterKey(prefix, key string) string { return prefix + "chaos-counter:" + key }

// withDefaults fills the zero fields and checks the rest.
func (c Config) withDefaults() (Config, error) {
	c.Duration = cmp.Or(c.Duration, DefaultDuration)
	c.TTL = cmp.Or(c.TTL, DefaultTTL)
	c.LockTimeout = cmp.Or(c.LockTimeout, DefaultLockTimeout)
	c.LockableWait = cmp.Or(c.LockableWait, c.TTL+c.LockTimeout)
	c.Lockers = cmp.Or(c.Lockers, DefaultLockers)
	c.Workers = cmp.Or(c.Workers, DefaultWorkers)
	if c.Faults == nil {
		c.Faults = AllFaults()
	}
	if c.Keys == nil {
		c.Keys = DefaultKeys()
	}
	switch {
	case c.New == nil:
		return c, fmt.Errorf("lockzoo: chaos: Config.New is nil: %w", strategy.ErrInvalidConfig)
	case len(c.Nodes) == 0:
		return c, fmt.Errorf("lockzoo: chaos: Config.Nodes is empty: %w", strategy.ErrInvalidConfig)
	case c.Counter == nil:
		return c, fmt.Errorf("lockzoo: chaos: Config.Counter is nil: %w", strategy.ErrInvalidConfig)
	case len(c.Faults) == 0 && len(c.Proxies) > 0:
		return c, fmt.Errorf("lockzoo: chaos: Config.Faults is empty: %w", strategy.ErrInvalidConfig)
	}
	return c, nil
}

// run is one Run's state.
type run struct {
	cfg     Config
	report  *Report
	check   *checker
	lockers []strategy.Locker
	pools   []addrPool
}

// Run runs the chaos described by cfg and returns what it observed. It
// returns once the faults have run for cfg.Duration, the proxies have
// healed, every worker has stopped and released its lease, every key has
// been locked once more (or not, within LockableWait), the counters are
// read and deleted, and the Lockers and pools it built are closed. Its error is kept for a run that
// could not be done (a bad Config, a Locker that could not be built, the
// healthy counter node failing) or ctx ending; violations are the Report's.
func Run(ctx context.Context, cfg Config) (Report, error) {
	cfg, err := cfg.withDefaults()
	report := Report{Seed: cfg.Seed, Duration: cfg.Duration, Faults: cfg.Faults, Phases: map[string]int{}, Lockable: map[string]time.Duration{}}
	if err != nil {
		return report, err
	}
	if len(cfg.Proxies) == 0 {
		report.Faults = nil // nothing to fault
	}
	r := &run{cfg: cfg, report: &report, check: newChecker(cfg.TTL, !cfg.NoFences, &report)}
	defer r.close()
	if err := r.build(); err != nil {
		return report, err
	}
	for _, key := range cfg.Keys {
		if err := r.counterDo(ctx, "DEL", CounterKey(cfg.Prefix, key)); err != nil {
			return report, err
		}
	}
	swallowed0 := r.swallowed()

	faultsCtx, stopFaults := context.WithTimeout(ctx, cfg.Duration)
	defer stopFaults()
	var faults sync.WaitGroup
	for i, p := range cfg.Proxies {
		s := newSchedule(cfg.Seed, i, cfg.Faults)
		faults.Go(func() { r.follow(faultsCtx, p, s) })
	}
	workCtx, stopWork := context.WithCancel(ctx)
	defer stopWork()
	var workers sync.WaitGroup
	errs := make(chan error, cfg.Lockers*cfg.Workers)
	for li, l := range r.lockers {
		for w := range cfg.Workers {
			who := fmt.Sprintf("locker %d/worker %d", li+1, w+1)
			rng := rand.New(rand.NewPCG(uint64(cfg.Seed), uint64(1000+li*cfg.Workers+w)))
			workers.Go(func() {
				if err := r.work(workCtx, l, who, rng); err != nil {
					errs <- err
					stopWork()
				}
			})
		}
	}
	// The faults end (their time is up, or a worker failed); the proxies
	// heal; then the workers stop and release what they hold.
	select {
	case <-faultsCtx.Done():
	case <-workCtx.Done():
		stopFaults()
	}
	faults.Wait()
	for _, p := range cfg.Proxies {
		p.Heal()
	}
	stopWork()
	workers.Wait()
	close(errs)
	if err := errors.Join(drain(errs)...); err != nil {
		return report, err
	}
	if err := ctx.Err(); err != nil {
		return report, err
	}
	report.Swallowed = r.swallowed() - swallowed0
	r.lockable(ctx)
	for _, key := range cfg.Keys {
		n, err := redis.Int(r.counter(ctx, "GET", CounterKey(cfg.Prefix, key)))
		if err != nil && !errors.Is(err, redis.ErrNil) {
			return report, fmt.Errorf("lockzoo: chaos: read counter of %s: %w", key, err)
		}
		r.check.lost(key, n)
	}
	for _, key := range cfg.Keys {
		if err := r.counterDo(ctx, "DEL", CounterKey(cfg.Prefix, key)); err != nil {
			return report, err
		}
	}
	return report, nil
}

func drain(errs <-chan error) []error {
	var out []error
	for err := range errs {
		out = append(out, err)
	}
	return out
}

// build makes the Lockers, each over pools of its own, as a process would.
func (r *run) build() error {
	for range r.cfg.Lockers {
		pools := make([]strategy.Pool, len(r.cfg.Nodes))
		for i, addr := range r.cfg.Nodes {
			p := dialPool(addr)
			r.pools = append(r.pools, p)
			pools[i] = p
			if r.cfg.Wrap != nil {
				pools[i] = r.cfg.Wrap(p, i)
			}
		}
		l, err := r.cfg.New(pools, strategy.Config{TTL: r.cfg.TTL, Prefix: r.cfg.Prefix})
		if err != nil {
			return fmt.Errorf("lockzoo: chaos: build Locker %d: %w", len(r.lockers)+1, err)
		}
		r.lockers = append(r.lockers, l)
	}
	return nil
}

// close closes the Lockers, then their pools.
func (r *run) close() {
	for _, l := range r.lockers {
		if c, ok := l.(interface{ Close() error }); ok {
			_ = c.Close()
		}
	}
	for _, p := range r.pools {
		_ = p.Close()
	}
}

// addrPool is a pool of connections to one address that tells the
// address (Addr), for Lockers built on clients that dial by address (the
// peers' go-redis ones): they must dial the proxy too, not the server
// behind it.
type addrPool struct {
	*redis.Pool
	addr string
}

// Addr returns the address the pool dials.
func (p addrPool) Addr() string { return p.addr }

func dialPool(addr string) addrPool {
	return addrPool{addr: addr, Pool: &redis.Pool{
		MaxIdle:     16,
		IdleTimeout: time.Minute,
		DialContext: func(ctx context.Context) (redis.Conn, error) {
			return redis.DialContext(ctx, "tcp", addr, redis.DialConnectTimeout(time.Second))
		},
	}}
}

// follow applies s's phases to p until ctx ends.
func (r *run) follow(ctx context.Context, p *redistest.Proxy, s *schedule) {
	for {
		ph := s.next()
		ph.apply(p)
		r.check.mu.Lock()
		r.report.Phases[ph.name]++
		r.check.mu.Unlock()
		t := time.NewTimer(ph.lasts)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return
		}
	}
}

func (r *run) swallowed() int64 {
	var n int64
	for _, p := range r.cfg.Proxies {
		n += p.Swallowed()
	}
	return n
}

// name returns ctx naming who, when the Config names clients.
func (r *run) name(ctx context.Context, who string) context.Context {
	if r.cfg.Client == nil {
		return ctx
	}
	return r.cfg.Client(ctx, who)
}

// counter sends one command to the healthy counter node.
func (r *run) counter(ctx context.Context, cmd string, args ...any) (any, error) {
	c, err := r.cfg.Counter.GetContext(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return redis.DoContext(c, ctx, cmd, args...)
}

func (r *run) counterDo(ctx context.Context, cmd string, args ...any) error {
	if _, err := r.counter(ctx, cmd, args...); err != nil {
		return fmt.Errorf("lockzoo: chaos: counter node: %s: %w", cmd, err)
	}
	return nil
}
