package chaos

import (
	"fmt"
	"sync"
	"time"

	"github.com/lockzoo/lockzoo/strategy"
)

// maxExamples bounds the violations a Report describes in words.
const maxExamples = 5

// checker watches the critical sections of a run: who is inside each key's
// section, and the last fence seen per key, under one mutex, so that the
// order it judges fences by is the order the sections ran.
type checker struct {
	ttl    time.Duration
	fences bool // check fences: the leases carry them

	mu        sync.Mutex
	inside    map[string]int    // holders inside each key's section now
	lastFence map[string]uint64 // the fence of the last section entered per key
	seen      map[string]bool   // a section was entered on the key
	completed map[string]int    // sections whose counter write succeeded
	r         *Report
}

func newChecker(ttl time.Duration, fences bool, r *Report) *checker {
	return &checker{
		ttl: ttl, fences: fences, r: r,
		inside: map[string]int{}, lastFence: map[string]uint64{},
		seen: map[string]bool{}, completed: map[string]int{},
	}
}

// granted checks a lease Lock returned: its Deadline must lie in [called,
// returned + TTL]. It reports whether the lease may be used, that is
// whether its Deadline is still ahead: a holder whose lease has run out by
// its own Deadline must not enter, whatever Redis holds.
func (c *checker) granted(who string, lease strategy.Lease, called, returned time.Time) bool {
	d := lease.Deadline()
	c.mu.Lock()
	defer c.mu.Unlock()
	if d.Before(called) || d.After(returned.Add(c.ttl)) {
		c.r.BadDeadlines++
		c.example("%s: lease on %s has Deadline %s, want within [%s, %s] (Lock call start, return + TTL %v)",
			who, lease.Key(), d.Format(time.RFC3339Nano), called.Format(time.RFC3339Nano),
			returned.Add(c.ttl).Format(time.RFC3339Nano), c.ttl)
	}
	if !time.Now().Before(d) {
		c.r.Expired++
		return false
	}
	return true
}

// enter marks who entering key's section with lease: an overlap when
// another holder is inside, a fence regression, when fences are checked,
// when the fence is not above the last one seen on key.
func (c *checker) enter(who string, lease strategy.Lease) {
	key, fence := lease.Key(), lease.Fence()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.inside[key]++
	if n := c.inside[key]; n > 1 {
		c.r.Overlaps++
		c.example("%s entered %s's section with %d other holder(s) inside", who, key, n-1)
	}
	if c.fences && c.seen[key] && fence <= c.lastFence[key] {
		c.r.FenceRegressions++
		c.example("%s holds %s with fence %d after fence %d", who, key, fence, c.lastFence[key])
	}
	c.seen[key], c.lastFence[key] = true, fence
}

// exit marks a holder leaving key's section; wrote says its counter write
// succeeded.
func (c *checker) exit(key string, wrote bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.inside[key]--
	if wrote {
		c.completed[key]++
		c.r.Sections++
	}
}

// lost compares each key's counter with the sections completed on it.
func (c *checker) lost(key string, counter int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d := c.completed[key] - counter; d != 0 {
		c.r.Lost += max(d, -d)
		c.example("counter of %s is %d after %d completed sections", key, counter, c.completed[key])
	}
}

// count adds one to a Report counter under the checker's mutex.
func (c *checker) count(n *int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	*n++
}

// example records a violation in words, up to maxExamples; c.mu is held.
func (c *checker) example(format string, a ...any) {
	if len(c.r.Examples) < maxExamples {
		c.r.Examples = append(c.r.Examples, fmt.Sprintf(format, a...))
	}
}
