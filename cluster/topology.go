package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Refresh bounds.
const (
	// refreshEvery is the least time between two refreshes the refresher
	// makes: a burst of MOVED replies or failures costs one.
	refreshEvery = 50 * time.Millisecond
	// askTimeout bounds asking one node for the map.
	askTimeout = time.Second
	// refreshTimeout bounds one refresh of the refresher.
	refreshTimeout = 5 * time.Second
	// pollEvery is how often the refresher reads the map, without being
	// asked, while a master it names could not be reached: the replica
	// that takes over shows within it, not at the next failed command.
	pollEvery = 100 * time.Millisecond
	// suspectFor is how long after its last failed connect a master
	// keeps the refresher polling.
	suspectFor = 5 * time.Second
)

// topology runs a Pool's refresher: one goroutine, started by New and
// ended by Close, that reads the slot map again when asked (after a
// MOVED, a failed node, an unserved slot), at most once per refreshEvery,
// and every pollEvery while a master of the map is suspect (failed).
type topology struct {
	mu       sync.Mutex
	suspects map[string]time.Time // master address -> its last failed connect
	requests chan struct{}        // one pending request at most
	cancel   context.CancelFunc
	done     chan struct{} // closed when the goroutine ends
	once     sync.Once
	// refreshing serialises refreshes: the refresher's and those a
	// caller makes itself (refreshNow).
	refreshing sync.Mutex
	last       time.Time // when the last refresh ended; guarded by refreshing
}

// start launches the refresher of p.
func (t *topology) start(p *Pool) {
	t.requests = make(chan struct{}, 1)
	t.done = make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	t.cancel = cancel
	go t.run(ctx, p)
}

// request asks the refresher for a refresh; it never blocks.
func (t *topology) request() {
	if t.requests == nil {
		return // New has not started it yet: its own refresh is under way
	}
	select {
	case t.requests <- struct{}{}:
	default:
	}
}

// failed records that a connect to the node at addr failed and asks for a
// refresh: while the map names it a master, the refresher polls.
func (t *topology) failed(addr string) {
	t.mu.Lock()
	if t.suspects == nil {
		t.suspects = map[string]time.Time{}
	}
	t.suspects[addr] = time.Now()
	t.mu.Unlock()
	t.request()
}

// polling forgets the suspects that p's map no longer names as masters or
// that failed last over suspectFor ago, and reports whether any is left.
func (t *topology) polling(p *Pool) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.suspects) == 0 {
		return false
	}
	masters := p.Masters()
	for addr, at := range t.suspects {
		if time.Since(at) > suspectFor || !slices.Contains(masters, addr) {
			delete(t.suspects, addr)
		}
	}
	return len(t.suspects) > 0
}

// stop ends the refresher and waits for it.
func (t *topology) stop() {
	t.once.Do(func() {
		if t.cancel != nil {
			t.cancel()
			<-t.done
		}
	})
}

// run serves refresh requests, and polls while a master is suspect,
// until ctx is cancelled (Close).
func (t *topology) run(ctx context.Context, p *Pool) {
	defer close(t.done)
	poll := false
	for {
		if poll {
			select {
			case <-t.requests: // this refresh serves it
			default:
			}
		} else {
			select {
			case <-ctx.Done():
				return
			case <-t.requests:
			}
		}
		rctx, cancel := context.WithTimeout(ctx, refreshTimeout)
		_ = p.refresh(rctx) // a failure leaves the map as it was; the next failure asks again
		cancel()
		poll = t.polling(p)
		every := refreshEvery
		if poll {
			every = pollEvery
		}
		wait := time.NewTimer(every)
		select {
		case <-ctx.Done():
			wait.Stop()
			return
		case <-wait.C:
		}
	}
}

// refreshNow refreshes the map unless a refresh ended within
// refreshEvery, bounded by ctx: for a caller that cannot go on without
// the new map (a shard subscription whose slot moved).
func (p *Pool) refreshNow(ctx context.Context) error {
	p.topo.refreshing.Lock()
	recent := time.Since(p.topo.last) < refreshEvery
	p.topo.refreshing.Unlock()
	if recent {
		return nil
	}
	return p.refresh(ctx)
}

// refresh reads the slot map from the first node that gives one: the
// masters, then the seeds, then the other nodes met, each bounded by
// askTimeout and all by ctx. It returns an error naming each node's
// failure, wrapping ErrNotCluster, when none gave one.
func (p *Pool) refresh(ctx context.Context) error {
	p.topo.refreshing.Lock()
	defer p.topo.refreshing.Unlock()
	defer func() { p.topo.last = time.Now() }()
	var errs []error
	for _, n := range p.candidates() {
		if ctx.Err() != nil {
			errs = append(errs, ctx.Err())
			break
		}
		m, err := ask(ctx, n)
		if err == nil {
			p.apply(m)
			return nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", n.addr, err))
	}
	return fmt.Errorf("%w: no node gave a slot map: %w", ErrNotCluster, errors.Join(errs...))
}

// candidates returns the nodes to ask for the map, in order: the masters
// of the current map, the seeds, the others.
func (p *Pool) candidates() []*node {
	p.mu.RLock()
	defer p.mu.RUnlock()
	seen := map[*node]bool{}
	var out []*node
	add := func(n *node) {
		if n != nil && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	for _, n := range p.owner {
		add(n)
	}
	for _, s := range p.seeds {
		add(p.nodes[s])
	}
	for _, n := range p.order {
		add(n)
	}
	return out
}
